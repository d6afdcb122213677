// The dashboard snapshot (verdict, KV details, alerts, what is not exposed) of a round is built for a window
// that listens, or when a request asks for it — not every round for nobody (a headless core, the web server
// with no tab open). Either way it is the newest round's, over the real core and the demo host.
import { afterEach, expect, it, vi } from 'vitest';
import * as verdict from '../../src/main/core/signals/verdict';
import { DashboardService } from '../../src/main/core/services/dashboard';
import type { DashboardPush, DashboardSnapshot } from '../../src/shared/contract';
import { afterPush, isWhole } from '../../src/renderer/src/state/dashboard-push';
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
  // Asked for, twice before anything else can arrive: the newest round's, built once for that round. (Asked one
  // after the other, a scrape arriving between them on a loaded machine made a newer snapshot, rightly.)
  const [snap, again] = await Promise.all([getDashboard(), getDashboard()]);
  expect(snap.ts).toBe(o2.ts);
  expect(snap.values['decode.kv_ratio']).toBeTypeOf('number');
  expect(again).toBe(snap);
  expect(built).toHaveBeenCalledTimes(1);

  // A window listens: every round pushes its own snapshot, the one a request then answers (built once).
  const pushed: DashboardPush[] = [];
  core.on('dashboard', (s) => pushed.push(s));
  const o3 = await nextObservation(core, () => true, 5000);
  const o4 = await nextObservation(core, () => true, 5000);
  expect(pushed.map((s) => s.ts).slice(-2)).toEqual([o3.ts, o4.ts]);
  const calls = built.mock.calls.length;
  expect((await getDashboard()).ts).toBe(o4.ts);
  expect(built).toHaveBeenCalledTimes(calls);
  expect(pushed.at(-1)!.verdict.headline).toBeTruthy();
});

it('pushes a round’s changes only: laid over each other, the pushes are every round’s snapshot', async () => {
  let dashboard: DashboardService | undefined;
  opened = await openDemoCore({
    seed: 5,
    intervalMs: 200,
    attach: (core) => void (dashboard = new DashboardService(core)),
  });
  const { core, deploymentId } = opened;
  await nextObservation(core, (o) => o.services.every((s) => s.metrics?.ok), 15_000);
  // Each push beside the snapshot its round answers (cached before the push goes out).
  const rounds: Array<{ push: DashboardPush; snap: Promise<DashboardSnapshot> }> = [];
  const listen = (push: DashboardPush): void =>
    void rounds.push({ push, snap: dashboard!.handlers().getDashboard({ deploymentId }) });
  core.on('dashboard', listen);
  // Until a GPU reading came after the first push (the demo's GPUs are read every 5 s).
  for (let i = 0; i < 80 && !(rounds.length > 3 && rounds.slice(1).some((r) => r.push.gpu)); i++)
    await nextObservation(core, () => true, 5000);

  expect(isWhole(rounds[0].push)).toBe(true);
  const later = rounds.slice(1).map((r) => r.push);
  // Each carries the values that changed (a counter that did not move is not sent again).
  const all = Object.keys(rounds[0].push.values).length;
  expect(later.every((p) => Object.keys(p.values).length < all)).toBe(true);
  expect(later.map((p) => ('since' in p ? p.since : null))).toEqual(
    rounds.slice(0, -1).map((r) => r.push.ts),
  );
  expect(later.filter((p) => p.notExposed === undefined).length).toBeGreaterThan(0);
  expect(later.filter((p) => p.gpu === undefined).length).toBeGreaterThan(0);
  expect(later.some((p) => p.gpu)).toBe(true);
  let held: DashboardSnapshot | undefined;
  for (const r of rounds) {
    held = afterPush(held, r.push);
    expect(held).toEqual(await r.snap);
  }

  // Rounds nobody listened to: the next window's first push is whole again.
  core.off('dashboard', listen);
  await nextObservation(core, () => true, 5000);
  await nextObservation(core, () => true, 5000);
  const back: DashboardPush[] = [];
  core.on('dashboard', (p) => back.push(p));
  await nextObservation(core, () => true, 5000);
  expect(isWhole(back[0])).toBe(true);
}, 40_000);

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
  // A round whose every scrape answered within the poll's budget (on a loaded machine one may not).
  const o = await nextObservation(core, (x) => x.services.every((s) => s.metrics?.ok), 15_000);
  const round = pushed.find((e) => e.ts === o.ts)!;
  // From the decode scrape (KV, queues) and from the poll itself (systemd, health).
  expect(round.values['decode.running']).toBeTypeOf('number');
  expect(round.values['decode.queued']).toBeTypeOf('number');
  expect(round.values['decode.kv_ratio']).toBeTypeOf('number');
  expect(round.values['decode.active']).toBe(1);
});
