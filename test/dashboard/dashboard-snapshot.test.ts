// The dashboard snapshot (verdict, KV details, alerts, what is not exposed) of a round is built for a window
// that listens, or when a request asks for it — not every round for nobody (a headless core, the web server
// with no tab open). Either way it is the newest round's, over the real core and the demo host.
import { afterEach, expect, it, vi } from 'vitest';
import * as verdict from '../../src/main/core/signals/verdict';
import { DashboardService } from '../../src/main/core/services/dashboard';
import type { DashboardSnapshot } from '../../src/shared/contract';
import { nextObservation, openDemoCore, type DemoCore } from '../support/demo-core';

let opened: DemoCore | undefined;

afterEach(async () => {
  vi.restoreAllMocks();
  await opened?.stop();
  opened = undefined;
});

it('builds a round’s snapshot only when a window listens or a request asks, and answers the newest round', async () => {
  const built = vi.spyOn(verdict, 'pipelineVerdict');
  let dashboard: DashboardService | undefined;
  opened = await openDemoCore({
    seed: 3,
    intervalMs: 200,
    attach: (core) => void (dashboard = new DashboardService(core)),
  });
  const { core, deploymentId } = opened;
  const getDashboard = (): Promise<DashboardSnapshot> => dashboard!.handlers().getDashboard({ deploymentId });

  // Nobody listens: rounds go by and no snapshot is built.
  await nextObservation(core, (o) => o.services.every((s) => s.metrics?.ok), 15_000);
  const o2 = await nextObservation(core, () => true, 5000);
  expect(built).not.toHaveBeenCalled();
  // Asked for: the newest round's, built once for that round.
  const snap = await getDashboard();
  expect(snap.ts).toBe(o2.ts);
  expect(snap.values['decode.kv_ratio']).toBeTypeOf('number');
  expect(await getDashboard()).toBe(snap);
  expect(built).toHaveBeenCalledTimes(1);

  // A window listens: every round pushes its own snapshot, the one a request then answers.
  const pushed: DashboardSnapshot[] = [];
  core.on('dashboard', (s) => pushed.push(s));
  const o3 = await nextObservation(core, () => true, 5000);
  const o4 = await nextObservation(core, () => true, 5000);
  expect(pushed.map((s) => s.ts).slice(-2)).toEqual([o3.ts, o4.ts]);
  expect(await getDashboard()).toBe(pushed.at(-1));
  expect(pushed.at(-1)!.verdict.headline).toBeTruthy();
});

it('pushes each round’s signals, its scrapes’ values and the poll’s, to a window that listens', async () => {
  opened = await openDemoCore({
    seed: 4,
    intervalMs: 200,
    attach: (core) => void new DashboardService(core),
  });
  const { core } = opened;
  await nextObservation(core, (o) => o.services.every((s) => s.metrics?.ok), 15_000);
  const pushed: Array<{ ts: number; values: Record<string, number | null> }> = [];
  core.on('signals', (e) => pushed.push(e));
  await nextObservation(core, () => true, 5000);
  const o = await nextObservation(core, () => true, 5000);
  const round = pushed.find((e) => e.ts === o.ts)!;
  // From the decode scrape (KV, queues) and from the poll itself (systemd, health).
  expect(round.values['decode.running']).toBeTypeOf('number');
  expect(round.values['decode.queued']).toBeTypeOf('number');
  expect(round.values['decode.kv_ratio']).toBeTypeOf('number');
  expect(round.values['decode.active']).toBe(1);
});
