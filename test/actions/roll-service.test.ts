// The roll service (the UI's rolling restart) against the one-host demo over real SSH: the plan it offers,
// a roll it runs to the end as the simulation saw it, and its guard rails against a one-service restart, a
// second roll and read-only mode.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppEvent } from '../../src/shared/domain';
import { RollService } from '../../src/main/core/services/roll';
import { rollDeploymentsOf } from '../../src/main/core/services/roll-deployments';
import { rollEnded } from '../support/roll-ended';
import { firstScrape, openFixture, type Fixture } from './demo-fixture';

let f: (Fixture & { roll: RollService }) | undefined;
afterEach(async () => {
  f?.roll.dispose();
  await f?.stop();
  f = undefined;
});

async function open(opts: Parameters<typeof openFixture>[0] = {}): Promise<Fixture & { roll: RollService }> {
  const fx = await openFixture({ speed: 60, ...opts });
  const roll = new RollService(
    fx.core,
    fx.restart,
    rollDeploymentsOf(
      fx.core.deployments,
      () => fx.clock,
      (id) => fx.restart.scrapesOf(id),
    ),
    {
      pollMs: 1000,
      minRealGapMs: 20,
      userName: () => 'tester',
    },
  );
  await firstScrape(fx);
  return (f = { ...fx, roll });
}

describe('rolling restarts from the API, one-host demo', () => {
  it('plans the decode worker with its exact commands and warns that it is the only one of its role', async () => {
    const fx = await open();
    const plan = await fx.roll.planRoll({
      deploymentId: fx.deploymentId,
      target: { kind: 'role', role: 'decode' },
    });
    expect(plan.refused).toBeUndefined();
    expect(plan.workers.map((w) => w.role)).toEqual(['decode']);
    const steps = plan.workers[0].steps;
    expect(steps.map((s) => s.kind)).toEqual([
      'gpu-owners',
      'stop',
      'gpus-free',
      'port-free',
      'start',
      'router',
    ]);
    expect(
      plan.checks.find((c) => c.name === 'the GPUs of decode-0 run only its own processes'),
    ).toMatchObject({ ok: true });
    expect(steps[1].command).toContain('systemctl --no-block stop sglang-decode.service');
    expect(plan.warnings.join('\n')).toMatch(/only decode worker|only one/i);
    // What the roll cuts off, as the in-place restart's plan says it: from the monitor's latest scrapes.
    const restartPlan = await fx.restart.planRestart({ deploymentId: fx.deploymentId, target: 'decode' });
    const impact = plan.workers[0].impact!;
    expect(impact.runningOnWorker).toEqual(expect.any(Number));
    expect(impact.inFlightAtRouter).toEqual(expect.any(Number));
    expect(impact.notes).toEqual(restartPlan.services[0].impact.notes);
  });

  it('runs a roll to its end, restarts the unit the simulation runs, and writes it on the timeline', async () => {
    const fx = await open();
    const before = fx.demo.sim.unitHistory.length;
    // What the roll says it is restarting now, at each of its pushes (the alerts mark that unit's expected).
    const restarting: string[] = [];
    fx.core.on('rollProgress', (p) => {
      for (const u of fx.restart.running.restarting(p.deploymentId))
        if (u.current) restarting.push(`${u.role} ${u.worker ?? '-'}: ${u.what}`);
    });
    const started = await fx.roll.startRoll({
      deploymentId: fx.deploymentId,
      target: { kind: 'worker', worker: 'sglang-decode.service' },
    });
    expect(started.state).toBe('running');
    const end = await rollEnded(fx.core, started.id);
    expect(end.state, end.summary).toBe('succeeded');
    const seen = fx.demo.sim.unitHistory.slice(before).filter((t) => t.unit === 'sglang-decode.service');
    expect(seen.map((t) => t.activeState)).toContain('inactive');
    expect(seen.at(-1)?.activeState).toBe('active');
    // The end goes on the timeline as the run settles, just after its last push.
    const rollEvents = await vi.waitFor(async () => {
      const events: AppEvent[] = await fx.core.listEvents({ deploymentId: fx.deploymentId });
      const mine = events.filter((e) => /rolling restart/.test(e.title));
      expect(mine.some((x) => /rolling restart of .* succeeded after/.test(x.title))).toBe(true);
      return mine;
    });
    const titles = rollEvents.map((e) => e.title);
    // Decode's roll is decode's: its events mark decode's charts, not prefill's; the worker's own step names
    // decode-0 (the scope of its charts' keys), the roll's start and end name no worker.
    expect(rollEvents.map((e) => e.role)).toEqual(rollEvents.map(() => 'decode'));
    expect(new Set(rollEvents.filter((e) => e.worker !== undefined).map((e) => e.worker))).toEqual(
      new Set(['decode-0']),
    );
    expect(titles.some((t) => /tester started a rolling restart of/.test(t))).toBe(true);
    expect(titles.some((t) => /rolling restart: decode-0 restarted and healthy/.test(t))).toBe(true);
    expect((await fx.roll.listRolls({ deploymentId: fx.deploymentId }))[0].id).toBe(started.id);
    expect(new Set(restarting)).toEqual(
      new Set([
        `decode decode-0: rolling restart of ${started.targetText} by tester: decode-0, 1 of 1 (roll ${started.id})`,
      ]),
    );
    expect(fx.restart.running.restarting(fx.deploymentId)).toEqual([]);
  });

  it('refuses a one-service restart and a second roll while a roll runs, and names the running roll', async () => {
    const fx = await open();
    const started = await fx.roll.startRoll({
      deploymentId: fx.deploymentId,
      target: { kind: 'role', role: 'prefill' },
    });
    await expect(
      fx.restart.startRestart({ deploymentId: fx.deploymentId, target: 'decode' }),
    ).rejects.toMatchObject({ code: 'restart-running', message: expect.stringMatching(/rolling restart/) });
    await expect(
      fx.roll.startRoll({ deploymentId: fx.deploymentId, target: { kind: 'role', role: 'decode' } }),
    ).rejects.toMatchObject({ code: 'restart-running', message: expect.stringContaining(started.id) });
    await fx.roll.cancelRoll({ deploymentId: fx.deploymentId, rollId: started.id });
    const end = await rollEnded(fx.core, started.id);
    // Cancel takes effect between workers: the one being restarted is finished first.
    expect(['cancelled', 'succeeded']).toContain(end.state);
  });

  it('refuses a roll while a one-service restart runs, naming the restart, and takes it once it ended', async () => {
    const fx = await open();
    const { operation } = await fx.restart.startRestart({ deploymentId: fx.deploymentId, target: 'decode' });
    await expect(
      fx.roll.startRoll({ deploymentId: fx.deploymentId, target: { kind: 'role', role: 'prefill' } }),
    ).rejects.toMatchObject({
      code: 'restart-running',
      message: `a restart of decode (operation ${operation.id}) is running on this deployment`,
    });
    expect((await fx.restart.whenDone(operation.id)).state).toBe('succeeded');
    const started = await fx.roll.startRoll({
      deploymentId: fx.deploymentId,
      target: { kind: 'role', role: 'prefill' },
    });
    expect((await rollEnded(fx.core, started.id)).state).toBe('succeeded');
  });

  it('refuses to start in read-only mode and leaves the host untouched', async () => {
    const fx = await open({ restart: { settings: { readOnly: true } } });
    const before = fx.demo.sim.unitHistory.length;
    await expect(
      fx.roll.startRoll({ deploymentId: fx.deploymentId, target: { kind: 'role', role: 'decode' } }),
    ).rejects.toMatchObject({ code: 'read-only' });
    expect(fx.demo.sim.unitHistory.length).toBe(before);
  });

  it('answers an unknown roll with its id', async () => {
    const fx = await open();
    await expect(
      fx.roll.getRoll({ deploymentId: fx.deploymentId, rollId: 'roll-nope' }),
    ).rejects.toMatchObject({ code: 'unknown-roll', message: expect.stringContaining('roll-nope') });
  });
});
