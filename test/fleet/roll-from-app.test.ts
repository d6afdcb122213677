// A rolling restart of the demo fleet through the app's API, as the restart dialog makes it (createApp, real
// SSH to the fleet's own ssh2 servers on 127.0.0.2–.4): the plan names every decode worker in order with the
// multi-node decode-2 as one, the roll ends healthy, and the simulation's own unit history shows that no two
// decode workers were ever down at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createApp, demoFleetOf, type App } from '../../src/main/compose';
import { rollEnded } from '../support/roll-ended';
import type { DeploymentSummary } from '../../src/shared/domain';

let app: App;
let dir: string;
let summary: DeploymentSummary;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pd-fleet-roll-'));
  app = createApp({ shell: 'browser', intervalMs: 500, dataDir: dir, record: false, demoSpeed: 100 });
  summary = await app.handlers.openDemo({ topology: 'fleet' });
  // Every unit active and the router's view read once, so the plan starts from a serving fleet.
  await vi.waitFor(
    () => {
      const latest = app.core.deploymentOf(summary.deployment.id).latest;
      expect(latest?.services.length).toBeGreaterThanOrEqual(6);
      expect(latest?.services.every((s) => s.systemd?.activeState === 'active')).toBe(true);
      expect(latest?.services.every((s) => !s.metrics || s.metrics.ok)).toBe(true);
    },
    { timeout: 30_000, interval: 250 },
  );
}, 90_000);

afterAll(async () => {
  await app?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('plans the decode roll over every decode worker, one at a time, the two-node decode-2 as one', async () => {
  const plan = await app.handlers.planRoll({
    deploymentId: summary.deployment.id,
    target: { kind: 'role', role: 'decode' },
  });
  expect(plan.refused).toBeUndefined();
  expect(plan.workers.map((w) => w.name).sort()).toEqual(['decode-0', 'decode-1', 'decode-2']);
  const two = plan.workers.find((w) => w.name === 'decode-2')!;
  // Node rank 1 (gpu-c) stops before rank 0 (gpu-b).
  const stops = two.steps.filter((s) => s.kind === 'stop').map((s) => s.hostId);
  expect(stops).toEqual(['gpu-c', 'gpu-b']);
  expect(plan.checks.length).toBeGreaterThan(0);
  expect(plan.checks.every((c) => c.ok)).toBe(true);
  // What each worker's restart cuts off, from the monitor's scrapes of it, found by its service id.
  for (const w of plan.workers) {
    expect(w.impact?.runningOnWorker, `${w.name}: ${w.impact?.notes.join('; ')}`).toEqual(expect.any(Number));
    expect(w.impact?.notes.join('; ')).not.toMatch(/no metrics scraped/);
  }
});

it('rolls the decode workers to the end without two of them ever down at once', async () => {
  const fleet = demoFleetOf(app.core);
  if (!fleet) throw new Error('the demo fleet is not running in this app');
  const since = fleet.sim.now;
  const started = await app.handlers.startRoll({
    deploymentId: summary.deployment.id,
    target: { kind: 'role', role: 'decode' },
  });
  // A one-service restart beside a running roll is refused, naming the roll.
  await expect(
    app.handlers.startRestart({ deploymentId: summary.deployment.id, target: 'prefill' }),
  ).rejects.toMatchObject({ message: expect.stringMatching(/rolling restart/) });
  const end = await rollEnded(app.core, started.id, 120_000);
  expect(end.state, `${end.summary} ${end.failure?.message ?? ''}`).toBe('succeeded');
  expect(end.workers.map((w) => w.state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  const restarted = new Set(
    fleet
      .unitHistory()
      .filter((t) => t.at >= since && t.activeState === 'inactive')
      .map((t) => t.worker),
  );
  expect([...restarted].sort()).toEqual(['decode-0', 'decode-1', 'decode-2']);
  expect(fleet.maxWorkersDownAtOnce('decode', since)).toBe(1);
  // Each worker's end names it, so it marks that worker's charts; the roll's own events are decode's.
  const events = await app.handlers.listEvents({ deploymentId: summary.deployment.id });
  const ends = events.filter((e) => /^rolling restart: .* restarted and healthy/.test(e.title));
  expect(ends.map((e) => [e.role, e.worker]).sort()).toEqual([
    ['decode', 'decode-0'],
    ['decode', 'decode-1'],
    ['decode', 'decode-2'],
  ]);
  const whole = events.filter((e) => /rolling restart of /.test(e.title));
  expect(whole.map((e) => [e.role, e.worker])).toEqual(whole.map(() => ['decode', undefined]));
}, 180_000);
