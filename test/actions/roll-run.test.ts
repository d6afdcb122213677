// The roll executor against a fake fleet (roll-fake.ts): what the "hosts" saw — the unit history, the
// commands — is what is checked, so a roll that claims more than it did fails here.
import { describe, expect, it } from 'vitest';
import { buildRollPlan, withDrain } from '../../src/main/core/actions/roll-plan';
import { RollRun, type RollTimeouts } from '../../src/main/core/actions/roll-run';
import type { WorkerDrain } from '../../src/main/core/actions/drain';
import type { RollOperation, RollPlan, RollTarget } from '../../src/shared/contract';
import { FakeFleet, fleetWorkers } from './roll-fake';

function start(
  fleet: FakeFleet,
  target: RollTarget,
  opts: { timeouts?: Partial<RollTimeouts>; onChange?: (op: RollOperation) => void } = {},
): RollRun {
  const plan = buildRollPlan({
    workers: fleet.workers,
    target,
    health: fleet.health(),
    privilegeOf: () => 'sudo',
  });
  return new RollRun({ id: 'roll-1', plan, workers: fleet.workers, io: fleet.io(), ...opts });
}

const decode: RollTarget = { kind: 'role', role: 'decode' };
const touched = (fleet: FakeFleet, unit: string): string[] =>
  fleet.commands.filter((c) => c.command.includes(unit)).map((c) => c.command);

describe('roll executor', () => {
  it('restarts every decode worker one at a time, never two down at once, the multi-node worker rank 1 first', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    const end = await start(fleet, decode).done;
    expect(end.state).toBe('succeeded');
    expect(end.summary).toMatch(
      /^restarted every decode worker, one at a time \(3\) in \d+ s: decode-0, decode-1, decode-2$/,
    );
    expect(fleet.maxDownAtOnce('decode')).toBe(1);
    // Every decode unit went down and came back, in worker order.
    expect(fleet.history.map((h) => `${h.state} ${h.host}/${h.unit}`)).toEqual([
      'inactive gpu-b/sglang-decode-0.service',
      'active gpu-b/sglang-decode-0.service',
      'inactive gpu-b/sglang-decode-1.service',
      'active gpu-b/sglang-decode-1.service',
      'inactive gpu-c/sglang-decode-2.service',
      'inactive gpu-b/sglang-decode-2.service',
      'active gpu-c/sglang-decode-2.service',
      'active gpu-b/sglang-decode-2.service',
    ]);
    // GPUs were seen free and the port was checked before the start.
    const d0 = touched(fleet, 'sglang-decode-0.service');
    // Its GPUs were seen to hold only its own processes (systemctl show for its MainPID, then ps) before the stop.
    expect(d0[0]).toMatch(/^systemctl show .*sglang-decode-0\.service$/);
    expect(d0.filter((c) => c.includes('--no-block'))[0]).toBe(
      'sudo -n systemctl --no-block stop sglang-decode-0.service',
    );
    const seq = fleet.commands.map((c) => c.command);
    const firstStart = seq.indexOf('sudo -n systemctl --no-block start sglang-decode-0.service');
    expect(seq.slice(0, firstStart).some((c) => c.startsWith('nvidia-smi') && c.endsWith('-i 0,1,2,3'))).toBe(
      true,
    );
    expect(seq.slice(0, firstStart)).toContain('ss -ltn');
    expect(end.workers.every((w) => w.steps.every((s) => s.state === 'succeeded'))).toBe(true);
    expect(end.workers[0].steps.find((s) => s.kind === 'gpus-free')?.detail).toBe(
      'no compute process on GPUs 0,1,2,3 of gpu-b',
    );
  });

  it('stops at a worker whose GPUs stay busy, naming the worker, the step and what still serves; later workers are untouched', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    fleet.unit('gpu-b', 'sglang-decode-1.service').stuckGpus = true;
    const end = await start(fleet, decode, { timeouts: { freeMs: 60 } }).done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({
      worker: 'decode-1',
      workerId: 'http://127.0.0.3:30201',
      step: 'gpus-free',
      stillServing: ['router', 'prefill-0', 'prefill-1', 'decode-0', 'decode-2'],
    });
    expect(end.failure!.message).toMatch(
      /^decode-1: GPUs 4,5 on gpu-b were not free within 0 s after sglang-decode-1.service stopped \(GPUs 4,5 of gpu-b still run pid \d+ \(70000 MiB\), pid \d+ \(70000 MiB\)\)$/,
    );
    expect(end.failure!.hint).toContain('decode-1 was stopped by this roll and may still be down');
    expect(end.summary).toContain('at decode-1, step gpus-free');
    expect(end.workers.map((w) => w.state)).toEqual(['succeeded', 'failed', 'skipped']);
    // Not started with the GPUs busy, and decode-2 never touched.
    expect(touched(fleet, 'sglang-decode-1.service')).not.toContain(
      'sudo -n systemctl --no-block start sglang-decode-1.service',
    );
    expect(touched(fleet, 'sglang-decode-2.service')).toEqual([]);
  });

  it('pauses while a host link is down, says which host, and carries on once it is back', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    const states: RollOperation[] = [];
    let dropped = false;
    fleet.beforeExec = (host, command) => {
      if (
        !dropped &&
        host === 'gpu-b' &&
        command.startsWith('systemctl show') &&
        command.endsWith('sglang-decode-1.service') &&
        fleet.commands.some((c) => c.command.endsWith('stop sglang-decode-1.service'))
      ) {
        dropped = true;
        fleet.down.add('gpu-b');
        setTimeout(() => fleet.down.delete('gpu-b'), 80);
      }
    };
    const end = await start(fleet, decode, { onChange: (op) => states.push(op) }).done;
    const paused = states.find((s) => s.state === 'paused');
    expect(paused?.paused).toMatchObject({ hostLabel: 'gpu-b' });
    expect(paused?.paused?.reason).toBe(
      'lost contact with gpu-b during "Stop sglang-decode-1.service on gpu-b"; waiting for the link to come back',
    );
    expect(paused?.summary).toContain('decode-1 (2/3)');
    expect(paused?.summary).toContain('paused: lost contact with gpu-b');
    expect(paused?.workers[1].state).toBe('running');
    expect(end.state).toBe('succeeded');
    expect(fleet.maxDownAtOnce('decode')).toBe(1);
  });

  it('a link that stays down ends the roll as unknown, never as a success it did not see', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    fleet.beforeExec = (host, command) => {
      if (host === 'gpu-c' && command.includes('stop sglang-decode-2'))
        queueMicrotask(() => fleet.down.add('gpu-c'));
    };
    const end = await start(
      fleet,
      { kind: 'worker', worker: 'sglang-decode-2.service' },
      { timeouts: { linkMs: 50 } },
    ).done;
    expect(end.state).toBe('unknown');
    expect(end.failure).toMatchObject({ worker: 'decode-2', step: 'stop' });
    expect(end.failure!.message).toMatch(
      /^decode-2: lost contact with gpu-c during "Stop sglang-decode-2.service on gpu-c \(node rank 1\)" for \d+ s; the outcome is unknown/,
    );
    expect(end.workers[0].state).toBe('unknown');
    // Only the GPU check on the running worker succeeded: nothing after the stop is claimed.
    expect(end.workers[0].steps.filter((s) => s.state === 'succeeded').map((s) => s.kind)).toEqual([
      'gpu-owners',
      'gpu-owners',
    ]);
    expect(end.summary).toMatch(/^roll outcome unknown after/);
  });

  it("the router's host link dropping while it is asked about a worker pauses the roll; staying down, the outcome is unknown", async () => {
    const fleet = new FakeFleet(fleetWorkers());
    const states: RollOperation[] = [];
    const end = await start(
      fleet,
      { kind: 'worker', worker: 'decode-0' },
      {
        timeouts: { linkMs: 50 },
        onChange: (op) => {
          states.push(op);
          // decode-0 is on gpu-b; the router is read through gpu-a.
          if (op.workers[0].steps.at(-1)?.state === 'running') fleet.down.add('gpu-a');
        },
      },
    ).done;
    expect(states.find((s) => s.state === 'paused')?.paused).toMatchObject({ hostLabel: 'gpu-a' });
    expect(end.state).toBe('unknown');
    expect(end.failure).toMatchObject({ worker: 'decode-0', step: 'router' });
    expect(end.failure!.message).toMatch(/^decode-0: lost contact with gpu-a during "/);
    expect(fleet.unit('gpu-b', 'sglang-decode-0.service').state).toBe('active');
  });

  it('cancel finishes the worker being restarted, then stops before the next', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    let roll: RollRun | undefined;
    let asked = false;
    roll = start(fleet, decode, {
      onChange: (op) => {
        if (!asked && op.workers[0].steps[0].state === 'succeeded') {
          asked = true;
          roll!.cancel();
        }
      },
    });
    const end = await roll.done;
    expect(end.state).toBe('cancelled');
    expect(end.workers.map((w) => w.state)).toEqual(['succeeded', 'cancelled', 'cancelled']);
    expect(fleet.unit('gpu-b', 'sglang-decode-0.service').state).toBe('active');
    expect(touched(fleet, 'sglang-decode-1.service')).toEqual([]);
    expect(end.summary).toMatch(/^roll cancelled after \d+ s; restarted: decode-0$/);
    roll = undefined;
  });

  it('checks the router again before each worker: stops when no other worker of the role is healthy now', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    const r = start(fleet, decode, {
      onChange: (op) => {
        // decode-0 restarted, then decode-0 and decode-2 turn unhealthy: decode-1 would be the last one.
        if (op.workers[0].state === 'succeeded') {
          fleet.forceUnhealthy.add('http://127.0.0.3:30200');
          fleet.forceUnhealthy.add('http://127.0.0.3:30202');
        }
      },
    });
    const end = await r.done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({ worker: 'decode-1', step: 'preflight' });
    expect(end.failure!.message).toBe(
      'not stopping decode-1: it would leave the router no healthy decode worker — no other decode worker is healthy now: decode-0 unhealthy (the router reports http://127.0.0.3:30200 unhealthy); decode-2 unhealthy (the router reports http://127.0.0.3:30202 unhealthy)',
    );
    expect(touched(fleet, 'sglang-decode-1.service')).toEqual([]);
  });

  it('a refused plan sends nothing', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    fleet.forceUnhealthy.add('http://127.0.0.3:30201');
    fleet.forceUnhealthy.add('http://127.0.0.3:30202');
    const end = await start(fleet, { kind: 'worker', worker: 'decode-0' }).done;
    expect(end.state).toBe('failed');
    expect(end.failure?.step).toBe('preflight');
    expect(end.failure?.message).toMatch(
      /^refused: restarting decode-0 first would leave the router no healthy decode worker/,
    );
    expect(fleet.commands).toEqual([]);
  });
});

/** A one-host 1P1D shape of the fake fleet: router, prefill-0 and decode-0. */
function pair(): FakeFleet {
  return new FakeFleet(fleetWorkers().filter((w) => ['router', 'prefill-0', 'decode-0'].includes(w.name)));
}

/** The whole pair's plan as the in-place stack restart orders it: prefill and decode together, then the router. */
function stagedPlan(fleet: FakeFleet): RollPlan {
  const plan = buildRollPlan({
    workers: fleet.workers,
    target: { kind: 'deployment' },
    health: fleet.health(),
    privilegeOf: () => 'sudo',
  });
  const id = (name: string) => fleet.workers.find((w) => w.name === name)!.id;
  plan.stages = [[id('prefill-0'), id('decode-0')], [id('router')]];
  return plan;
}

function startStaged(fleet: FakeFleet, timeouts: Partial<RollTimeouts> = {}): RollRun {
  return new RollRun({
    id: 'roll-1',
    plan: stagedPlan(fleet),
    workers: fleet.workers,
    io: fleet.io(),
    timeouts,
  });
}

describe('roll executor, stages', () => {
  it('an internal error in one worker of a stage ends the roll only once its sibling came back', async () => {
    const fleet = pair();
    const plan = stagedPlan(fleet);
    let broke: () => void = () => undefined;
    const decodeBroke = new Promise<void>((r) => (broke = r));
    const base = fleet.io();
    const io = fleet.io({
      followStart: async (a) => {
        if (a.worker.name === 'decode-0') {
          setTimeout(broke, 0);
          throw new Error('a bug in the follower');
        }
        // prefill-0 starts only after decode-0's follower broke: the roll must wait for it.
        await decodeBroke;
        return base.followStart(a);
      },
    });
    const end = await new RollRun({ id: 'roll-1', plan, workers: fleet.workers, io }).done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({ step: 'internal' });
    expect(end.failure!.message).toBe('the roll stopped on an internal error: a bug in the follower');
    expect(end.workers.map((w) => `${w.name} ${w.state}`)).toEqual([
      'prefill-0 succeeded',
      'decode-0 failed',
      'router skipped',
    ]);
    expect(fleet.unit('gpu-a', 'sglang-prefill-0.service').state).toBe('active');
  });

  it('restarts the workers of a stage together and the next stage only once every one of them came back', async () => {
    const fleet = pair();
    const prefill = fleet.unit('gpu-a', 'sglang-prefill-0.service');
    const decode = fleet.unit('gpu-b', 'sglang-decode-0.service');
    // prefill-0's GPUs are seen busy until decode-0 is down too: one worker at a time could never get past it.
    fleet.answer = (host, command) =>
      host === 'gpu-a' &&
      command.startsWith('nvidia-smi') &&
      prefill.state === 'inactive' &&
      decode.state === 'active'
        ? { stdout: `${prefill.pid}, GPU-gpu-a-0, 70000\n`, stderr: '', exitCode: 0 }
        : undefined;
    const end = await startStaged(fleet, { freeMs: 5_000 }).done;
    expect(end.state).toBe('succeeded');
    expect(end.workers.map((w) => `${w.name} ${w.state}`)).toEqual([
      'prefill-0 succeeded',
      'decode-0 succeeded',
      'router succeeded',
    ]);
    const seq = fleet.history.map((h) => `${h.state} ${h.unit}`);
    const routerDown = seq.indexOf('inactive sglang-router.service');
    expect(routerDown).toBeGreaterThan(seq.indexOf('active sglang-prefill-0.service'));
    expect(routerDown).toBeGreaterThan(seq.indexOf('active sglang-decode-0.service'));
    expect(seq.at(-1)).toBe('active sglang-router.service');
    expect(end.summary).toMatch(
      /^restarted the whole deployment \(3 workers\) in \d+ s: prefill-0, decode-0, router$/,
    );
  });

  it('a worker that fails lets its stage sibling finish, then stops before the next stage', async () => {
    const fleet = pair();
    fleet.unit('gpu-b', 'sglang-decode-0.service').stuckGpus = true;
    const end = await startStaged(fleet, { freeMs: 300 }).done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({ worker: 'decode-0', step: 'gpus-free' });
    expect(end.failure!.hint).toMatch(
      /decode-0 was stopped by this roll and may still be down; the workers of the stages after it were not touched\.$/,
    );
    expect(end.workers.map((w) => `${w.name} ${w.state}`)).toEqual([
      'prefill-0 succeeded',
      'decode-0 failed',
      'router skipped',
    ]);
    expect(fleet.unit('gpu-a', 'sglang-prefill-0.service').state).toBe('active');
    expect(touched(fleet, 'sglang-router.service')).toEqual([]);
  });
});

/** A router that can drain decode-0: what it was told, and the requests decode-0 still runs per reading. */
function drainable(fleet: FakeFleet, running: Array<number | null | 'no-scrape'>, addFails = false) {
  const said: string[] = [];
  const decode = fleet.workers.find((w) => w.name === 'decode-0')!;
  const drain: WorkerDrain = {
    url: decode.id,
    routerUrl: 'http://127.0.0.2:30001',
    remove: async () => {
      said.push(`remove (decode-0 ${fleet.unit('gpu-b', 'sglang-decode-0.service').state})`);
    },
    add: async () => {
      said.push(`add (decode-0 ${fleet.unit('gpu-b', 'sglang-decode-0.service').state})`);
      if (addFails) throw new Error('POST /workers answered 500');
    },
    running: async () => running.shift() ?? 0,
    readdCommand: `curl -X POST http://127.0.0.2:30001/workers -d '{"url":"${decode.id}"}'`,
  };
  const plan = buildRollPlan({
    workers: fleet.workers,
    target: { kind: 'worker', worker: 'decode-0' },
    health: fleet.health(),
    privilegeOf: () => 'sudo',
  });
  plan.workers[0].steps = withDrain(plan.workers[0].steps, drain.routerUrl);
  const io = fleet.io({ drainOf: (w) => (w.id === decode.id ? drain : undefined) });
  return { said, plan, io };
}

describe('roll executor, drain', () => {
  it('takes the worker out of the router, waits for its running requests, restarts it, then registers it again', async () => {
    const fleet = pair();
    const { said, plan, io } = drainable(fleet, ['no-scrape', 3, 1, 0]);
    const details: string[] = [];
    const end = await new RollRun({
      id: 'roll-1',
      plan,
      workers: fleet.workers,
      io,
      onChange: (op) => {
        const d = op.workers[0].steps[0].detail;
        if (d && details.at(-1) !== d) details.push(d);
      },
    }).done;
    expect(end.state).toBe('succeeded');
    expect(end.workers[0].steps.map((s) => `${s.kind} ${s.state}`)).toEqual([
      'drain succeeded',
      'gpu-owners succeeded',
      'stop succeeded',
      'gpus-free succeeded',
      'port-free succeeded',
      'start succeeded',
      'readd succeeded',
      'router succeeded',
    ]);
    // Out of the router while it still served, back in once it was up again.
    expect(said).toEqual(['remove (decode-0 active)', 'add (decode-0 active)']);
    expect(fleet.history.map((h) => `${h.state} ${h.unit}`)).toEqual([
      'inactive sglang-decode-0.service',
      'active sglang-decode-0.service',
    ]);
    expect(details).toEqual([
      'removing http://127.0.0.3:30200 from the router',
      'removed from the router; waiting for the monitor to scrape the worker again',
      'removed from the router; 3 requests still running',
      'removed from the router; 1 request still running',
      'removed from the router; no requests running',
    ]);
    expect(end.workers[0].steps[6].detail).toBe('the router accepted http://127.0.0.3:30200');
  });

  it('past the drain timeout the restart goes ahead and says so', async () => {
    const fleet = pair();
    const { plan, io } = drainable(fleet, Array<number>(10_000).fill(2));
    const end = await new RollRun({
      id: 'roll-1',
      plan,
      workers: fleet.workers,
      io,
      timeouts: { drainMs: 50 },
    }).done;
    expect(end.state).toBe('succeeded');
    expect(end.workers[0].steps[0].detail).toBe(
      'removed from the router; 2 requests still running after 0 s; restarting anyway',
    );
  });

  it('a cancel while draining puts the worker back and stops nothing', async () => {
    const fleet = pair();
    const { said, plan, io } = drainable(fleet, Array<number>(10_000).fill(4));
    const roll: RollRun = new RollRun({
      id: 'roll-1',
      plan,
      workers: fleet.workers,
      io,
      onChange: (op) => {
        if (op.workers[0].steps[0].detail?.endsWith('4 requests still running') && !op.cancelRequested)
          roll.cancel();
      },
    });
    const end = await roll.done;
    expect(end.state).toBe('cancelled');
    expect(end.workers[0].state).toBe('cancelled');
    expect(end.workers[0].steps[0]).toMatchObject({
      state: 'cancelled',
      detail: 'cancelled; the worker was registered with the router again',
    });
    expect(said).toEqual(['remove (decode-0 active)', 'add (decode-0 active)']);
    expect(fleet.history).toEqual([]);
    expect(end.summary).toMatch(/^roll cancelled after \d+ s; nothing was restarted$/);
  });

  it('a cancel that arrives before the drain leaves the router untouched', async () => {
    const fleet = pair();
    const { said, plan, io } = drainable(fleet, [0]);
    const roll: RollRun = new RollRun({
      id: 'roll-1',
      plan,
      workers: fleet.workers,
      io,
      onChange: (op) => {
        if (op.workers[0].state === 'running' && !op.cancelRequested) roll.cancel();
      },
    });
    const end = await roll.done;
    expect(end.state).toBe('cancelled');
    expect(end.workers[0].steps[0]).toMatchObject({
      state: 'cancelled',
      detail: 'cancelled before anything was changed',
    });
    expect(said).toEqual([]);
    expect(fleet.commands).toEqual([]);
  });

  it('a re-add the router refuses fails the roll with the command to run by hand', async () => {
    const fleet = pair();
    const { plan, io } = drainable(fleet, [0], true);
    const end = await new RollRun({ id: 'roll-1', plan, workers: fleet.workers, io }).done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({
      worker: 'decode-0',
      step: 'readd',
      message:
        'decode-0: could not register http://127.0.0.3:30200 with the router again: POST /workers answered 500',
    });
    expect(end.failure!.hint).toMatch(
      /^The worker restarted and is healthy but the router does not route to it\. On the host run: curl -X POST /,
    );
    expect(fleet.unit('gpu-b', 'sglang-decode-0.service').state).toBe('active');
  });
});
