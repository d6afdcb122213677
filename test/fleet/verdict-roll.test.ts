// The overview's verdict during a rolling restart of the demo fleet's decode workers, through the app's API (real
// SSH to the fleet's hosts): while the roll restarts a worker, the router counts that worker unhealthy with its
// circuit breaker open — the console's own doing, which the verdict says ("decode-1 is being restarted by you —
// roll 2/3") instead of blaming the router; and right after each restart, before the monitor has asked the new
// process's /health, the worker is not called down.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { rollEnded } from '../support/roll-ended';
import type { DashboardPush } from '../../src/shared/contract';
import type { DeploymentSummary } from '../../src/shared/domain';

let app: App;
let dir: string;
let summary: DeploymentSummary;
const verdicts: DashboardPush['verdict'][] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pd-fleet-verdict-'));
  app = createApp({ shell: 'browser', intervalMs: 500, dataDir: dir, record: false, demoSpeed: 100 });
  // A window listens: each round's verdict is built and pushed, as on screen.
  app.core.on('dashboard', (p) => verdicts.push(p.verdict));
  summary = await app.handlers.openDemo({ topology: 'fleet' });
  await vi.waitFor(
    () => {
      const latest = app.core.deploymentOf(summary.deployment.id).latest;
      expect(latest?.services.length).toBeGreaterThanOrEqual(6);
      expect(latest?.services.every((s) => s.systemd?.activeState === 'active' && s.health?.ok)).toBe(true);
    },
    { timeout: 30_000, interval: 250 },
  );
}, 90_000);

afterAll(async () => {
  await app?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('each worker the roll restarts is named as restarted by you, with its place; the router is never blamed', async () => {
  const from = verdicts.length;
  const started = await app.handlers.startRoll({
    deploymentId: summary.deployment.id,
    target: { kind: 'role', role: 'decode' },
  });
  const end = await rollEnded(app.core, started.id, 120_000);
  expect(end.state, end.summary).toBe('succeeded');
  const during = verdicts.slice(from);
  // The demo's decode-1 runs hot (its KV near full) whatever the roll does: a verdict that names that bottleneck
  // first still says the restart, as its last evidence ("also: decode-0 is being restarted by you — roll 1/3").
  const said = [...new Set(during.flatMap((v) => [v.headline, ...v.evidence]))];
  for (const [k, worker] of ['decode-0', 'decode-1', 'decode-2'].entries())
    expect(
      said.filter((l) =>
        [
          `${worker} is being restarted by you — roll ${k + 1}/3.`,
          `also: ${worker} is being restarted by you — roll ${k + 1}/3`,
        ].includes(l),
      ),
      said.join('\n'),
    ).not.toEqual([]);
  expect(during.filter((v) => v.kind === 'router-bound').map((v) => v.headline)).toEqual([]);
  expect(during.filter((v) => /not checked yet/.test(v.headline)).map((v) => v.headline)).toEqual([]);
  // Whenever the restart is the verdict (nothing else wrong), it says who serves meanwhile and that nothing is to
  // be done; which workers get such a verdict depends on how hot the others run.
  const restarting = during.filter((v) => v.kind === 'restarting');
  // At least one such moment: without it the checks below would hold of nothing.
  expect(restarting.length, said.join('\n')).toBeGreaterThan(0);
  for (const r of restarting) {
    expect(r.headline).toMatch(/^decode-[012] is being restarted by you — roll [123]\/3\.$/);
    expect(r.evidence).toContain('2 of 3 decode workers serve meanwhile');
    expect(r.nextStep).toMatch(/^nothing to do while the roll runs/);
  }
}, 180_000);
