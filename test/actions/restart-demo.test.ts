// Restarts against the demo host over real SSH, with the simulation and the orchestrator on one accelerated
// clock. Every outcome is checked against what the demo host really did (its simulation state), and every
// failure mode ends in the message an operator needs.
import { afterEach, describe, expect, it } from 'vitest';
import type { RestartOperation } from '../../src/shared/contract';
import type { Observation } from '../../src/shared/domain';
import { nextObservation } from '../support/demo-core';
import { openFixture, stepOf, type Fixture } from './demo-fixture';

let f: Fixture | undefined;
afterEach(async () => {
  await f?.stop();
  f = undefined;
});

const SIM_MIN = 60_000;

/** The first observation that has systemd state for every service and a scrape of both servers. */
function settled(fx: Fixture, timeoutMs = 15_000): Promise<Observation> {
  return nextObservation(
    fx.core,
    (o) => o.services.every((s) => s.systemd) && o.services.every((s) => s.metrics?.ok),
    timeoutMs,
  );
}

/** Resolves with the first pushed snapshot matching `pred` (already pushed ones count). */
function pushedWhere(
  fx: Fixture,
  pred: (op: RestartOperation) => boolean,
  timeoutMs = 20_000,
): Promise<RestartOperation> {
  const hit = fx.pushed.find(pred);
  if (hit) return Promise.resolve(hit);
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no matching restartProgress in time')), timeoutMs);
    const on = (op: RestartOperation): void => {
      if (!pred(op)) return;
      clearTimeout(t);
      fx.core.off('restartProgress', on);
      resolve(op);
    };
    fx.core.on('restartProgress', on);
  });
}

async function restart(
  fx: Fixture,
  target: 'prefill' | 'decode' | 'router' | 'stack',
): Promise<RestartOperation> {
  const { operation } = await fx.restart.startRestart({ deploymentId: fx.deploymentId, target });
  return fx.restart.whenDone(operation.id);
}

describe('restart against the demo host', () => {
  it('plans a decode restart with host, unit, exact command, impact and last restart, then walks every step', async () => {
    // Slower than the other tests, so the snapshots catch the load's phases on a busy machine too.
    f = await openFixture({ speed: 25 });
    const obs = await settled(f);
    const plan = await f.restart.planRestart({ deploymentId: f.deploymentId, target: 'decode' });
    const truth = f.demo.sim.snapshot();
    expect(plan.connectedAs).toEqual({ user: 'operator', uid: 1000 });
    expect(plan.stages).toEqual([['decode']]);
    const d = plan.services[0];
    expect(d).toMatchObject({
      role: 'decode',
      unit: 'sglang-decode.service',
      command: 'sudo -n systemctl --no-block restart sglang-decode.service',
      privilege: 'sudo',
      activeState: 'active',
    });
    expect(d.lastRestartAt).toBe(
      obs.services.find((s) => s.role === 'decode')!.systemd!.activeEnterTimestamp,
    );
    expect(d.lastRestartAt).not.toBeNull();
    expect(d.impact.runningOnWorker).toEqual(expect.any(Number));
    expect(d.impact.inFlightAtRouter).toEqual(expect.any(Number));
    expect(plan.routerInFlight).toEqual(expect.any(Number));
    // The demo router lists workers but has no per-worker API: drain is off, and the plan says why.
    expect(d.drain).toEqual({
      supported: false,
      detail: 'drain not supported by this router version: GET /workers/{id} answered HTTP 404',
    });
    expect(plan.drainAvailable).toBe(false);
    expect(plan.sudoersLine).toBe(
      'operator ALL=(root) NOPASSWD: /usr/bin/systemctl --no-block restart sglang-prefill.service, ' +
        '/usr/bin/systemctl --no-block restart sglang-decode.service, /usr/bin/systemctl --no-block restart sglang-router.service',
    );
    expect(plan.blockedReason).toBeUndefined();
    const pidBefore = truth.units.decode.mainPid;

    const started = await f.restart.startRestart({ deploymentId: f.deploymentId, target: 'decode' });
    // A second click joins the running restart instead of starting another.
    const again = await f.restart.startRestart({ deploymentId: f.deploymentId, target: 'decode' });
    expect(again).toMatchObject({ joined: true, operation: { id: started.operation.id } });
    await expect(
      f.restart.startRestart({ deploymentId: f.deploymentId, target: 'stack' }),
    ).rejects.toMatchObject({
      code: 'restart-running',
    });
    const end = await f.restart.whenDone(started.operation.id);

    expect(end.state).toBe('succeeded');
    expect(end.summary).toMatch(/^decode restarted in \d+ min \d+ s$/);
    expect(end.services[0].steps.map((s) => [s.kind, s.state])).toEqual([
      ['command', 'succeeded'],
      ['active', 'succeeded'],
      ['health', 'succeeded'],
      ['router', 'succeeded'],
    ]);
    expect(stepOf(end, 'decode', 'router').detail).toMatch(
      /router reports http:\/\/127\.0\.0\.1:30200 healthy/,
    );
    const now = f.demo.sim.snapshot().units.decode;
    expect(now.mainPid).not.toBe(pidBefore);
    expect(now.activeState).toBe('active');
    // The restart took the simulated minutes a decode load takes, not the real seconds the test took.
    expect(end.elapsedMs).toBeGreaterThan(90_000);

    // The state was visible at each moment: every step was seen running, and the load's progress as it went.
    for (const kind of ['command', 'active', 'health', 'router'])
      expect(f.pushed.some((op) => stepOf(op, 'decode', kind).state === 'running')).toBe(true);
    const phases = f.pushed.map((op) => op.services[0].progress).filter((p) => p !== undefined);
    expect(phases.some((p) => p.phase === 'weights' && p.done! < p.total!)).toBe(true);
    expect(phases.some((p) => p.phase === 'cuda-graph')).toBe(true);
    expect(phases.at(-1)).toMatchObject({ phase: 'ready', label: 'server reports ready' });
    expect(end.services[0].journal.map((l) => l.text).join('\n')).toMatch(/fired up and ready to roll/);
    // Its journal tells the load and stops once it serves: the requests it logs while the router takes it back
    // would push the ready line out of the panel.
    const atRouter = f.pushed.find((op) => stepOf(op, 'decode', 'router').state === 'running')!;
    expect(end.services[0].journal.length).toBe(atRouter.services[0].journal.length);

    const events = await f.core.listEvents({ deploymentId: f.deploymentId });
    const mine = events.filter((e) => e.kind === 'action' || e.kind === 'restart-step');
    expect(mine.map((e) => e.title)).toEqual([
      'tester started a restart of decode on demo GPU host (simulated)',
      expect.stringMatching(/^decode restart: Send the restart command — succeeded \(\d/),
      expect.stringMatching(/^decode restart: systemd reports the unit active — succeeded/),
      expect.stringMatching(/^decode restart: Server answers \/health with 200 — succeeded/),
      expect.stringMatching(/^decode restart: Router reports the worker healthy — succeeded/),
      expect.stringMatching(/^restart of decode succeeded after \d+ min \d+ s$/),
    ]);
    expect(mine.every((e) => e.detail?.includes(`operation ${end.id}`))).toBe(true);
    expect(await f.restart.getRestart({ operationId: end.id })).toMatchObject({ state: 'succeeded' });
  });

  it('restarts the stack: prefill and decode together, the router only after both are healthy', async () => {
    f = await openFixture();
    await settled(f);
    const end = await restart(f, 'stack');
    expect(end.state).toBe('succeeded');
    expect(end.stages).toEqual([['prefill', 'decode'], ['router']]);
    const healthyAt = Math.max(
      stepOf(end, 'prefill', 'health').endedAt!,
      stepOf(end, 'decode', 'health').endedAt!,
    );
    expect(stepOf(end, 'router', 'command').startedAt!).toBeGreaterThanOrEqual(healthyAt);
    // Parallel: decode's command went out before prefill finished loading.
    expect(stepOf(end, 'decode', 'command').startedAt!).toBeLessThan(
      stepOf(end, 'prefill', 'health').endedAt!,
    );
    expect(stepOf(end, 'prefill', 'router')).toMatchObject({ state: 'skipped' });
    expect(stepOf(end, 'router', 'router')).toMatchObject({ state: 'succeeded' });
    expect(stepOf(end, 'router', 'router').detail).toMatch(
      /^\/readiness 200 \(prefill healthy, decode healthy\)/,
    );
    const truth = f.demo.sim.snapshot().units;
    for (const role of ['prefill', 'decode', 'router'] as const)
      expect(truth[role].activeState).toBe('active');
  });

  it('sudo asking for a password: nothing restarts, and the sudoers line that would allow it is shown', async () => {
    f = await openFixture();
    await settled(f);
    f.demo.sim.setFault('sudo-password', true);
    const pid = f.demo.sim.snapshot().units.decode.mainPid;
    const end = await restart(f, 'decode');
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({
      role: 'decode',
      step: 'command',
      message: expect.stringMatching(
        /^sudo on demo GPU host \(simulated\) asks for a password, so sglang-decode.service cannot be restarted from here: sudo: a password is required$/,
      ),
      sudoersLine: expect.stringMatching(
        /^operator ALL=\(root\) NOPASSWD: \/usr\/bin\/systemctl --no-block restart sglang-prefill\.service, /,
      ),
    });
    expect(end.failure?.hint).toMatch(/visudo -f \/etc\/sudoers\.d\/pd-console/);
    expect(end.failure?.journalTail).toBeUndefined();
    expect(f.demo.sim.snapshot().units.decode.mainPid).toBe(pid);
    expect(stepOf(end, 'decode', 'active').state).toBe('skipped');
  });

  it('connected as root: plain systemctl, no sudo involved (even where sudo would ask for a password)', async () => {
    f = await openFixture({ sshUser: 'root' });
    await settled(f);
    f.demo.sim.setFault('sudo-password', true);
    const plan = await f.restart.planRestart({ deploymentId: f.deploymentId, target: 'router' });
    expect(plan.connectedAs).toEqual({ user: 'root', uid: 0 });
    expect(plan.services[0]).toMatchObject({
      privilege: 'root',
      command: 'systemctl --no-block restart sglang-router.service',
    });
    const end = await restart(f, 'router');
    expect(end.state).toBe('succeeded');
    expect(stepOf(end, 'router', 'router').detail).toMatch(
      /^\/readiness 200 \(prefill healthy, decode healthy\)/,
    );
  });

  it('polkit mode without a polkit rule: systemd refuses, and the hint says how to switch back to sudo', async () => {
    f = await openFixture({ restart: { settings: { polkit: true } } });
    await settled(f);
    const end = await restart(f, 'router');
    expect(end.failure).toMatchObject({
      step: 'command',
      message:
        'systemd on demo GPU host (simulated) refused the restart: Failed to restart sglang-router.service: Interactive authentication required.',
    });
    expect(end.failure?.hint).toMatch(/turn "polkit" off in the restart settings/);
  });

  it('a unit name systemd does not know: refused before anything runs, with how to find the right one', async () => {
    f = await openFixture({
      deployment: (d) => ({
        ...d,
        services: d.services.map((s) => (s.role === 'decode' ? { ...s, unit: 'sglang-decoder.service' } : s)),
      }),
    });
    await settled(f).catch(() => undefined);
    const end = await restart(f, 'decode');
    expect(end.state).toBe('failed');
    expect(end.failure?.message).toBe(
      'sglang-decoder.service not found on demo GPU host (simulated): systemd has no unit by that name',
    );
    expect(end.failure?.hint).toMatch(/systemctl list-units --all 'sglang\*'/);
  });

  it('another process on decode’s GPUs: the restart is refused before anything runs, naming the process', async () => {
    f = await openFixture();
    await settled(f);
    f.demo.sim.setFault('foreign-gpu-process', true, 'decode');
    const before = f.demo.sim.unitHistory.length;
    const plan = await f.restart.planRestart({ deploymentId: f.deploymentId, target: 'stack' });
    expect(plan.blockedReason).toMatch(
      /^GPUs 4,5,6,7 of demo GPU host \(simulated\) run pid \d+ \(python3, \d+ MiB\), not a process of sglang-decode\.service .*: restarting sglang-decode\.service would free nothing and its new server could not load\. End pid \d+/,
    );
    await expect(
      f.restart.startRestart({ deploymentId: f.deploymentId, target: 'decode' }),
    ).rejects.toMatchObject({ code: 'restart-refused', message: plan.blockedReason });
    // Prefill's GPUs hold only its own processes: its restart goes ahead.
    const prefill = await f.restart.planRestart({ deploymentId: f.deploymentId, target: 'prefill' });
    expect(prefill.blockedReason).toBeUndefined();
    expect(f.demo.sim.unitHistory.length).toBe(before);
  });

  it('the unit fails to start: names the step, systemd’s Result and the journal lines that explain it', async () => {
    f = await openFixture();
    await settled(f);
    f.demo.sim.setFault('unit-fails-to-start', true, 'decode');
    const end = await restart(f, 'decode');
    expect(end.state).toBe('failed');
    // Type=simple: systemd calls the unit active as soon as its process runs; the failure comes while the model
    // loads, so the health step sees it (from systemd's state, with its Result).
    expect(stepOf(end, 'decode', 'active').state).toBe('succeeded');
    expect(end.failure).toMatchObject({
      step: 'health',
      result: 'exit-code',
      message: 'sglang-decode.service failed to start: the main process exited with an error, exit status 1',
    });
    expect(end.failure?.journalTail?.join('\n')).toMatch(/RuntimeError: Not enough memory/);
    expect(f.demo.sim.snapshot().units.decode.activeState).toBe('failed');
    expect(stepOf(end, 'decode', 'router').state).toBe('skipped');
  });

  it('a load that hangs: systemd keeps the unit active/running, the health deadline ends it with the load’s last progress', async () => {
    f = await openFixture({ speed: 400 });
    await settled(f);
    f.demo.sim.setFault('start-timeout', true, 'decode');
    const end = await restart(f, 'decode');
    expect(end.state).toBe('failed');
    expect(stepOf(end, 'decode', 'active').state).toBe('succeeded');
    expect(end.failure?.step).toBe('health');
    expect(end.failure?.message).toMatch(
      /^decode never answered http:\/\/127\.0\.0\.1:30200\/health with 200 within 35 min 0 s \(last: GET http:\/\/127\.0\.0\.1:30200\/health → connection refused .* — starting the server process \(\d+ min since start[^)]*\)\)$/,
    );
    // Nothing in systemd times out a Type=simple start: our own health deadline (35 min) is what ended it.
    expect(f.demo.sim.snapshot().units.decode).toMatchObject({ activeState: 'active', subState: 'running' });
    const health = stepOf(end, 'decode', 'health');
    expect(health.endedAt! - health.startedAt!).toBeGreaterThanOrEqual(35 * SIM_MIN);
    expect(end.failure?.journalTail?.join('\n')).toMatch(/Init torch distributed begin/);
  });

  it('our own health deadline, configured short: says what the load was doing when it gave up', async () => {
    f = await openFixture({ restart: { settings: { timeouts: { server: { healthMs: SIM_MIN } } } } });
    await settled(f);
    f.demo.sim.setFault('start-timeout', true, 'decode');
    const end = await restart(f, 'decode');
    expect(end.failure?.step).toBe('health');
    // The load's age is as of its last reading, on the demo's accelerated clock: under load it may read 59 s or
    // 2 min as well as 1 min, so the figure is checked for its form, the stage for its words.
    expect(end.failure?.message).toMatch(
      /^decode never answered http:\/\/127\.0\.0\.1:30200\/health with 200 within 1 min 0 s \(last: .* — starting the server process \(\d+ (min|s) since start[^)]*\)\)$/,
    );
    expect(end.failure?.journalTail?.join('\n')).toMatch(/Init torch distributed begin/);
  });

  it('/health never turns 200: fails at the health step with the last answer', async () => {
    // The health step starts as the model begins to load (Type=simple): its deadline must cover the load.
    f = await openFixture({ restart: { settings: { timeouts: { server: { healthMs: 3 * SIM_MIN } } } } });
    await settled(f);
    f.demo.sim.setFault('health-never-ok', true, 'decode');
    const end = await restart(f, 'decode');
    expect(end.state).toBe('failed');
    expect(end.failure?.step).toBe('health');
    expect(end.failure?.message).toMatch(
      /^decode never answered http:\/\/127\.0\.0\.1:30200\/health with 200 within 3 min 0 s \(last: GET http:\/\/127\.0\.0\.1:30200\/health → 503/,
    );
    expect(stepOf(end, 'decode', 'active').state).toBe('succeeded');
  });

  it('the router never re-adds the worker: fails at the router step, saying what the router reports', async () => {
    f = await openFixture({ restart: { settings: { timeouts: { server: { routerMs: SIM_MIN } } } } });
    await settled(f);
    f.demo.sim.setFault('router-never-readds', true, 'decode');
    const end = await restart(f, 'decode');
    expect(end.state).toBe('failed');
    expect(end.failure?.step).toBe('router');
    expect(end.failure?.message).toMatch(
      /^the router never re-added decode within 1 min 0 s: the router reports http:\/\/127\.0\.0\.1:30200 unhealthy, circuit breaker open/,
    );
    expect(stepOf(end, 'decode', 'health').state).toBe('succeeded');
  });

  it('the SSH connection drops mid-restart: reconnects and keeps following to the observed end', async () => {
    f = await openFixture();
    await settled(f);
    const { operation } = await f.restart.startRestart({ deploymentId: f.deploymentId, target: 'decode' });
    await pushedWhere(f, (op) => stepOf(op, 'decode', 'active').state === 'running');
    f.demo.sim.dropConnections();
    const down = await pushedWhere(f, (op) => op.link === 'down');
    expect(down.summary).toMatch(/lost contact with the host, reconnecting/);
    const end = await f.restart.whenDone(operation.id);
    expect(end.state).toBe('succeeded');
    expect(end.link).toBe('up');
    expect(f.demo.sim.snapshot().units.decode.activeState).toBe('active');
  });

  it('the link is down when a deadline passes: the outcome is unknown, not a failure nobody saw', async () => {
    f = await openFixture({ restart: { settings: { timeouts: { server: { healthMs: SIM_MIN } } } } });
    await settled(f);
    // Same fault as the health test above: with the link up it ends as a failure, here it must not.
    f.demo.sim.setFault('health-never-ok', true, 'decode');
    const { operation } = await f.restart.startRestart({ deploymentId: f.deploymentId, target: 'decode' });
    await pushedWhere(f, (op) => stepOf(op, 'decode', 'health').state === 'running');
    f.demo.sim.reboot(60 * SIM_MIN);
    const end = await f.restart.whenDone(operation.id);
    expect(end.state).toBe('unknown');
    expect(end.failure?.step).toBe('health');
    expect(end.failure?.message).toMatch(
      /^lost contact with demo GPU host \(simulated\) at the health step's deadline .*the outcome is unknown/,
    );
    expect(stepOf(end, 'decode', 'health').state).toBe('unknown');
    expect(end.summary).toMatch(/^decode restart outcome unknown after/);
  });

  it('cancel between steps: the next service is never touched', async () => {
    f = await openFixture({ restart: { settings: { stackOrder: 'prefill-first' } } });
    await settled(f);
    const pids = f.demo.sim.snapshot().units;
    const { operation } = await f.restart.startRestart({ deploymentId: f.deploymentId, target: 'stack' });
    expect(operation.stages).toEqual([['prefill'], ['decode'], ['router']]);
    // The model loads while the health step waits (Type=simple: active at once): cancel there.
    await pushedWhere(f, (op) => stepOf(op, 'prefill', 'health').state === 'running');
    const asked = await f.restart.cancelRestart({ operationId: operation.id });
    expect(asked.cancelRequested).toBe(true);
    const end = await f.restart.whenDone(operation.id);
    expect(end.state).toBe('cancelled');
    expect(stepOf(end, 'prefill', 'health').state).toBe('cancelled');
    expect(stepOf(end, 'prefill', 'health').detail).toMatch(/continues its restart on its own/);
    expect(end.services.find((s) => s.role === 'decode')?.state).toBe('cancelled');
    const now = f.demo.sim.snapshot().units;
    expect(now.decode.mainPid).toBe(pids.decode.mainPid);
    expect(now.router.mainPid).toBe(pids.router.mainPid);
  });

  it('guard rails: read-only refuses in the core, disconnected refuses, and both say so in the plan', async () => {
    f = await openFixture({ restart: { lockReadOnly: true } });
    await settled(f);
    const plan = await f.restart.planRestart({ deploymentId: f.deploymentId, target: 'decode' });
    expect(plan.blockedReason).toBe('PD Console is in read-only mode: restarts are switched off');
    await expect(
      f.restart.startRestart({ deploymentId: f.deploymentId, target: 'decode' }),
    ).rejects.toMatchObject({
      code: 'read-only',
    });
    await expect(f.restart.setRestartSettings({ readOnly: false })).rejects.toMatchObject({
      code: 'read-only-locked',
    });
    await f.stop();

    f = await openFixture();
    await settled(f);
    f.demo.sim.reboot(60 * SIM_MIN);
    await new Promise<void>((resolve) => {
      const on = (): void => {
        if (f!.core.connectionOf(f!.deploymentId).isConnected) return;
        f!.core.off('connection', on);
        resolve();
      };
      f!.core.on('connection', on);
    });
    const offline = await f.restart.planRestart({ deploymentId: f.deploymentId, target: 'decode' });
    expect(offline.blockedReason).toMatch(/^not connected to demo GPU host \(simulated\)/);
    await expect(
      f.restart.startRestart({ deploymentId: f.deploymentId, target: 'decode' }),
    ).rejects.toMatchObject({
      code: 'not-connected',
    });
  });
});
