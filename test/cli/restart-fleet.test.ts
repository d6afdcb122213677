// `pd-console restart ROLE@URL|UNIT`: one worker restarted by the roll executor over real SSH against the demo
// host — stop, its GPUs seen free (nvidia-smi), its ports free (ss), start, /health, the router's health —
// checked against what the simulation did.
import { afterEach, describe, expect, it } from 'vitest';
import { restartCommand } from '../../src/main/cli/restart-command';
import { captureRestartIo } from '../support/restart-io';
import type { RollOperation, RollPlan } from '../../src/shared/contract';
import { openFixture, type Fixture } from '../actions/demo-fixture';

let f: Fixture | undefined;
afterEach(async () => {
  await f?.stop();
  f = undefined;
});

const capture = captureRestartIo;

async function app() {
  f = await openFixture();
  const fx = f;
  return {
    core: fx.core,
    handlers: { ...fx.core.handlers(), ...fx.restart.handlers(), ...fx.roll.handlers() },
    shutdown: async () => undefined,
  };
}

describe('pd-console restart ROLE@WORKER (demo host, real SSH)', () => {
  it('restarts one worker step by step: stop, GPUs and ports free, start, healthy at the router', async () => {
    const a = await app();
    const before = f!.demo.sim.snapshot().units;
    const schedulers = f!.demo.sim.units.decode.children?.schedulers ?? [];
    const io = capture();
    const code = await restartCommand(['decode@sglang-decode.service', '--yes', '--json'], io, { app: a });
    const [planLine, opLine] = io.out().trim().split('\n');
    const { plan } = JSON.parse(planLine) as { plan: RollPlan };
    const { operation } = JSON.parse(opLine) as { operation: RollOperation };
    expect(io.err()).toMatch(/^Rolling restart plan: decode-0 \(http:\/\/127\.0\.0\.1:30200\)$/m);
    expect(code, io.err()).toBe(0);
    expect(plan.workers.map((w) => w.steps.map((s) => s.command ?? s.kind))).toEqual([
      [
        'gpu-owners',
        'sudo -n systemctl --no-block stop sglang-decode.service',
        'gpus-free',
        'port-free',
        'sudo -n systemctl --no-block start sglang-decode.service',
        'router',
      ],
    ]);
    expect(operation.state).toBe('succeeded');
    const steps = operation.workers[0].steps;
    expect(steps.map((s) => s.state)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    // On the running worker: the GPU processes nvidia-smi lists are the scheduler children of its MainPID (SGLang
    // also runs multiprocessing's resource tracker and the detokenizer under it).
    expect(steps[0].detail).toBe(
      `GPUs 4,5,6,7 of demo GPU host (simulated) run only processes of sglang-decode.service (MainPID ${before.decode.mainPid} and its 6 descendants): pid ${schedulers.join(', ')}`,
    );
    expect(steps[2].detail).toBe('no compute process on GPUs 4,5,6,7 of demo GPU host (simulated)');
    expect(steps[3].detail).toBe('nothing listens on port 30200 of demo GPU host (simulated)');
    expect(steps[4].detail).toMatch(
      /exit 0: systemd queued the start; .*GET http:\/\/127\.0\.0\.1:30200\/health → 200/,
    );
    expect(steps[5].detail).toMatch(/the router reports http:\/\/127\.0\.0\.1:30200 healthy/);
    // The simulation: a new decode process, serving; prefill and router untouched.
    const after = f!.demo.sim.snapshot().units;
    expect(after.decode.mainPid).not.toBe(before.decode.mainPid);
    expect(after.decode).toMatchObject({ activeState: 'active', healthy: true });
    expect(after.prefill.mainPid).toBe(before.prefill.mainPid);
    expect(after.router.mainPid).toBe(before.router.mainPid);
    // Human progress names the worker at each step.
    expect(io.err()).toMatch(
      /decode-0 +Stop sglang-decode\.service on demo GPU host \(simulated\): succeeded — sglang-decode\.service stopped/,
    );
    expect(io.err()).toMatch(/✔ restarted decode-0 \(http:\/\/127\.0\.0\.1:30200\) in /);
    // The roll was the app's: its roll service ran it, as a roll started from the UI is run, and recorded it.
    const rolls = await a.handlers.listRolls({ deploymentId: f!.deploymentId });
    expect(rolls.map((r) => [r.id, r.state])).toEqual([[operation.id, 'succeeded']]);
    const events = await a.handlers.listEvents({ deploymentId: f!.deploymentId });
    expect(events.map((e) => e.title)).toContain(
      'tester started a rolling restart of decode-0 (http://127.0.0.1:30200)',
    );
  });

  it('the SSH link drops mid-roll: the roll pauses, says so, and carries on to the observed end', async () => {
    const a = await app();
    const io = capture();
    const sim = f!.demo.sim;
    const pid = sim.snapshot().units.decode.mainPid;
    const run = restartCommand(['decode@sglang-decode.service', '--yes'], io, { app: a });
    // Drop every connection once the roll has stopped decode (it is then checking GPUs and ports).
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (sim.snapshot().units.decode.activeState !== 'inactive') return;
        clearInterval(t);
        sim.dropConnections();
        resolve();
      }, 5);
    });
    expect(await run, io.out()).toBe(0);
    expect(io.out()).toMatch(/paused — lost contact with demo GPU host \(simulated\)/);
    expect(io.out()).toMatch(/link back: the roll carries on/);
    expect(sim.snapshot().units.decode).toMatchObject({ activeState: 'active', healthy: true });
    expect(sim.snapshot().units.decode.mainPid).not.toBe(pid);
  });

  it('checks the prefill bootstrap port read from its ExecStart', async () => {
    const a = await app();
    const io = capture();
    expect(await restartCommand(['prefill@http://127.0.0.1:30100', '--yes'], io, { app: a })).toBe(0);
    expect(io.out()).toMatch(
      /bootstrap port 8998 on demo GPU host \(simulated\) is free: succeeded — nothing listens on port 8998/,
    );
  });

  it('refuses a worker of another role, an unknown worker and an unconfirmed roll, and sends nothing', async () => {
    const a = await app();
    const pid = f!.demo.sim.snapshot().units.prefill.mainPid;
    let io = capture();
    expect(await restartCommand(['decode@sglang-prefill.service', '--yes'], io, { app: a })).toBe(2);
    expect(io.err()).toContain(
      'decode@sglang-prefill.service names prefill-0, a prefill worker: use prefill@sglang-prefill.service',
    );
    io = capture();
    expect(await restartCommand(['decode@http://10.1.0.13:30000', '--yes'], io, { app: a })).toBe(2);
    expect(io.err()).toMatch(
      /refused: no worker "http:\/\/10\.1\.0\.13:30000" in this deployment; known: router \(demo\/sglang-router\.service\), prefill-0 \(http:\/\/127\.0\.0\.1:30100\), decode-0/,
    );
    io = capture();
    expect(await restartCommand(['prefill@sglang-prefill.service'], io, { app: a })).toBe(2);
    expect(io.err()).toContain('stdin is not a terminal. Pass --yes');
    io = capture();
    expect(await restartCommand(['stack@x'], io, { app: a })).toBe(2);
    expect(f!.demo.sim.snapshot().units.prefill.mainPid).toBe(pid);
  });
});
