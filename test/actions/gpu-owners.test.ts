// The roll's GPU check before a worker is stopped: the compute processes nvidia-smi lists on the worker's GPUs
// against the worker's own processes (MainPID and descendants, from `ps`). Judged from real-format answers
// (nvidia-smi's CSV, systemctl show, procps), then through the plan and the executor against the fake fleet,
// where what the "hosts" were sent is what is checked: a roll that stops first and asks afterwards fails here.
import { describe, expect, it } from 'vitest';
import {
  judgeGpuOwners,
  readPlanGpuOwners,
  type GpuOwnersReading,
} from '../../src/main/core/actions/gpu-owners';
import { buildRollPlan, startRefusal } from '../../src/main/core/actions/roll-plan';
import { RollRun } from '../../src/main/core/actions/roll-run';
import type { ExecResult } from '../../src/main/core/ssh/connection';
import type { RollPlan, RollTarget, RollUnit } from '../../src/shared/contract';
import { FakeFleet, fleetWorkers } from './roll-fake';

const unit: RollUnit = {
  hostId: 'fleet-b',
  hostLabel: 'fleet-b',
  unit: 'sglang-decode-1.service',
  nodeRank: 0,
  gpus: [0, 1, 2, 3],
};
const ok = (stdout: string): ExecResult => ({ stdout, stderr: '', exitCode: 0 });
const fail = (exitCode: number, stderr: string, stdout = ''): ExecResult => ({ stdout, stderr, exitCode });
const uuid = (g: number) => `GPU-6f1c1d4e-08d3-2b5c-9a1e-${String(g).padStart(12, '0')}`;
const apps = (...rows: Array<[number, number, number]>) =>
  ok(rows.map(([pid, g, mib]) => `${pid}, ${uuid(g)}, ${mib}`).join('\n') + (rows.length ? '\n' : ''));
const show = (mainPid: number, active = mainPid ? 'active' : 'inactive') =>
  ok(
    [
      `Id=${unit.unit}`,
      'LoadState=loaded',
      `ActiveState=${active}`,
      `SubState=${active === 'active' ? 'running' : 'dead'}`,
      'Result=success',
      `MainPID=${mainPid}`,
      `ExecMainPID=${mainPid || 4100}`,
      'NRestarts=0',
      'InvocationID=1f0e3c5a7b9d4e2f8a6c0b1d3e5f7a9c',
      '',
    ].join('\n'),
  );
/** procps `ps -e -o pid=,ppid=,args=`: pid and ppid right-aligned in 7 columns. */
const ps = (...rows: Array<[number, number, string]>) =>
  ok(
    [[1, 0, '/sbin/init'] as [number, number, string], ...rows]
      .map(([pid, ppid, args]) => `${String(pid).padStart(7)} ${String(ppid).padStart(7)} ${args}`)
      .join('\n') + '\n',
  );
const SGLANG: Array<[number, number, string]> = [
  [4100, 1, '/opt/sglang/venv/bin/python3 -m sglang.launch_server --port 30201 --tp 4'],
  [4101, 4100, '/opt/sglang/venv/bin/python3 -c from multiprocessing.resource_tracker import main;main(5)'],
  [4102, 4100, 'sglang::detokenizer'],
  [4103, 4100, 'sglang::scheduler_TP0'],
  [4104, 4100, 'sglang::scheduler_TP1'],
  // A grandchild: a rank's own worker process still belongs to the unit.
  [4110, 4104, 'sglang::scheduler_TP1_worker'],
];
const reading = (r: Partial<GpuOwnersReading>): GpuOwnersReading => ({
  unit,
  apps: apps([4103, 0, 70000], [4104, 1, 70000], [4110, 1, 512]),
  show: show(4100),
  ps: ps(...SGLANG),
  ...r,
});

describe('who holds a worker’s GPUs, judged from what the host answered', () => {
  it('own processes only (children and grandchildren of MainPID): the check passes', () => {
    expect(judgeGpuOwners(reading({}))).toEqual({
      kind: 'own',
      detail:
        'GPUs 0,1,2,3 of fleet-b run only processes of sglang-decode-1.service (MainPID 4100 and its 5 descendants): pid 4103, 4104, 4110',
    });
    expect(judgeGpuOwners(reading({ apps: apps() }))).toEqual({
      kind: 'own',
      detail: 'no compute process on GPUs 0,1,2,3 of fleet-b now',
    });
  });

  it("another process on the worker's GPUs: stopping the worker would free nothing, said with its pid and program", () => {
    const v = judgeGpuOwners(
      reading({
        apps: apps([4103, 0, 70000], [8102, 0, 30720], [8102, 1, 30720], [4104, 1, 70000]),
        ps: ps(...SGLANG, [8102, 1, '/usr/bin/python3 /home/alice/train.py --token s3cret']),
      }),
    );
    expect(v).toEqual({
      kind: 'foreign',
      detail:
        'GPUs 0,1,2,3 of fleet-b run pid 8102 (python3, 61440 MiB), not a process of sglang-decode-1.service (MainPID 4100 and its 5 descendants)',
      hint: 'End pid 8102 on fleet-b (`ps -o pid,user,args -p 8102` shows whose) or move it to other GPUs, then plan again.',
    });
    // The program by name only: its arguments may carry secrets.
    expect(JSON.stringify(v)).not.toContain('s3cret');
    // A unit that runs nothing: whatever holds its GPUs is someone else's.
    expect(
      judgeGpuOwners(
        reading({ apps: apps([8102, 2, 30720]), show: show(0), ps: ps([8102, 1, 'python3 x.py']) }),
      ),
    ).toMatchObject({
      kind: 'foreign',
      detail:
        'GPUs 0,1,2,3 of fleet-b run pid 8102 (python3, 30720 MiB), while sglang-decode-1.service runs no process (inactive)',
    });
  });

  it('what cannot be read is said, with why: nvidia-smi missing, failing or too old, ps missing, a hidden MainPID, a container, a vanished pid', () => {
    const cases: Array<[Partial<GpuOwnersReading>, string]> = [
      [
        { apps: fail(127, 'bash: line 1: nvidia-smi: command not found') },
        "nvidia-smi is not installed on fleet-b or not on the SSH user's PATH (exit 127: bash: line 1: nvidia-smi: command not found)",
      ],
      [
        {
          apps: fail(
            9,
            '',
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
          ),
        },
        "nvidia-smi on fleet-b did not list the compute processes (exit 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.)",
      ],
      [
        { apps: fail(2, '', 'Field "gpu_uuid" is not a valid field to query.\n\n') },
        'nvidia-smi on fleet-b did not list the compute processes (exit 2: Field "gpu_uuid" is not a valid field to query.)',
      ],
      [
        { ps: fail(127, 'bash: ps: command not found') },
        '`ps -e -o pid=,ppid=,args=` failed on fleet-b (exit 127: bash: ps: command not found)',
      ],
      [
        // hidepid=2: this user sees only its own processes, not the unit's.
        { ps: ps([30011, 1, '-bash'], [30020, 30011, 'ps -e -o pid=,ppid=,args=']) },
        "the process table of fleet-b does not show sglang-decode-1.service's MainPID 4100: this user cannot see its processes (/proc mounted with hidepid) or it runs in another PID namespace",
      ],
      [
        {
          apps: apps([91234, 0, 70000]),
          ps: ps(
            [
              4100,
              1,
              '/usr/bin/docker run --rm --gpus all lmsysorg/sglang:v0.5.4 python3 -m sglang.launch_server',
            ],
            [88000, 1, '/usr/bin/containerd-shim-runc-v2 -namespace moby -id 3f2a'],
            [91234, 88000, 'python3 -m sglang.launch_server'],
          ),
        },
        "sglang-decode-1.service on fleet-b runs a container (docker): its processes are not descendants of the unit's MainPID on the host, so it cannot be told whose processes hold GPUs 0,1,2,3 of fleet-b",
      ],
      [
        { apps: apps([4103, 0, 70000], [9999, 3, 1024]) },
        'nvidia-smi lists pid 9999 on GPUs 0,1,2,3 of fleet-b, which the process table of fleet-b does not show: it ended meanwhile (plan again), or this user cannot see it',
      ],
    ];
    for (const [r, detail] of cases)
      expect(judgeGpuOwners(reading(r))).toEqual({ kind: 'unreadable', detail });
  });

  it('an answer that is not what the command prints fails at once, quoted with its control characters visible', () => {
    expect(
      judgeGpuOwners(
        reading({ apps: ok('\x1b[31mUnable to determine the device handle\x00 for GPU0000:5D:00.0\r\n') }),
      ),
    ).toEqual({
      kind: 'garbage',
      detail:
        'nvidia-smi --query-compute-apps on fleet-b answered something that is not its CSV table: "\\u001b[31mUnable to determine the device handle\\u0000 for GPU0000:5D:00.0\\r\\n"',
    });
    expect(judgeGpuOwners(reading({ ps: ok('<html><body>Service Unavailable</body></html>\n') }))).toEqual({
      kind: 'garbage',
      detail:
        '`ps -e -o pid=,ppid=,args=` on fleet-b answered something that is not a process table: "<html><body>Service Unavailable</body></html>\\n"',
    });
    const v = judgeGpuOwners(reading({ show: ok(`Failed to connect to bus: ${'x'.repeat(200)}`) }));
    expect(v.kind).toBe('garbage');
    expect(v.detail).toMatch(
      /^systemctl show sglang-decode-1\.service on fleet-b answered without ActiveState\/LoadState: "Failed to connect to bus: x+"… \(226 characters\)$/,
    );
  });
});

// ---- through the plan and the executor, on the fake fleet ------------------------------------------------

const decode: RollTarget = { kind: 'role', role: 'decode' };
const sentTo = (fleet: FakeFleet, unitName: string) =>
  fleet.commands.filter((c) => c.command.includes('--no-block') && c.command.endsWith(unitName));

/** The plan as prepareRoll makes it: drafted, then who holds each planned worker's GPUs read on the hosts. */
async function planOn(fleet: FakeFleet, target: RollTarget): Promise<RollPlan> {
  const input = {
    workers: fleet.workers,
    target,
    health: fleet.health(),
    privilegeOf: () => 'sudo' as const,
  };
  const draft = buildRollPlan(input);
  const links = new Map(['gpu-a', 'gpu-b', 'gpu-c'].map((h) => [h, fleet.link(h)]));
  return buildRollPlan({
    ...input,
    gpuOwners: await readPlanGpuOwners(draft.workers, fleet.workers, links),
  });
}

describe('the GPU check in the plan and the roll', () => {
  it("a foreign process on decode-1's GPUs: the plan refuses with its pid, and the roll stops nothing", async () => {
    const fleet = new FakeFleet(fleetWorkers());
    fleet.foreign.push({ host: 'gpu-b', pid: 8102, gpus: [4, 5] });
    const plan = await planOn(fleet, decode);
    expect(plan.refused).toBe(
      'decode-1: GPUs 4,5 of gpu-b run pid 8102 (python3, 61440 MiB), not a process of sglang-decode-1.service (MainPID 1500 and its 2 descendants): stopping decode-1 would free nothing, so it is not stopped',
    );
    expect(plan.refusedHint).toBe(
      'End pid 8102 on gpu-b (`ps -o pid,user,args -p 8102` shows whose) or move it to other GPUs, then plan again.',
    );
    expect(plan.checks.filter((c) => c.name.startsWith('the GPUs of')).map((c) => [c.name, c.ok])).toEqual([
      ['the GPUs of decode-0 run only its own processes', true],
      ['the GPUs of decode-1 run only its own processes', false],
      ['the GPUs of decode-2 run only its own processes', true],
    ]);
    const end = await new RollRun({ id: 'r', plan, workers: fleet.workers, io: fleet.io() }).done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({
      step: 'preflight',
      message: `refused: ${plan.refused}`,
      hint: `Nothing was stopped. ${plan.refusedHint}`,
    });
    // Not decode-0 either: the roll as a whole does not start.
    for (const u of ['sglang-decode-0.service', 'sglang-decode-1.service', 'sglang-decode-2.service'])
      expect(sentTo(fleet, u)).toEqual([]);
    expect(fleet.history).toEqual([]);
  });

  it('a foreign process that arrives during the roll: checked again on the running worker, which is not stopped', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    const plan = await planOn(fleet, decode);
    expect(plan.refused).toBeUndefined();
    const end = await new RollRun({
      id: 'r',
      plan,
      workers: fleet.workers,
      io: fleet.io(),
      timeouts: { freeMs: 60_000 },
      onChange: (op) => {
        if (op.workers[0].state === 'succeeded' && !fleet.foreign.length)
          fleet.foreign.push({ host: 'gpu-b', pid: 8102, gpus: [5] });
      },
    }).done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({ worker: 'decode-1', step: 'gpu-owners' });
    expect(end.failure!.message).toBe(
      'decode-1: GPUs 4,5 of gpu-b run pid 8102 (python3, 30720 MiB), not a process of sglang-decode-1.service (MainPID 1500 and its 2 descendants): stopping decode-1 would free nothing, so it was not stopped',
    );
    expect(end.failure!.hint).toBe(
      'End pid 8102 on gpu-b (`ps -o pid,user,args -p 8102` shows whose) or move it to other GPUs, then plan again. Neither this worker nor the ones after it were touched.',
    );
    expect(sentTo(fleet, 'sglang-decode-1.service')).toEqual([]);
    expect(sentTo(fleet, 'sglang-decode-2.service')).toEqual([]);
    expect(fleet.unit('gpu-b', 'sglang-decode-1.service').state).toBe('active');
  });

  it('nvidia-smi missing on gpu-b: the plan offers to roll without the check; without that choice nothing is sent', async () => {
    const fleet = new FakeFleet(fleetWorkers());
    fleet.answer = (host, command) =>
      host === 'gpu-b' && command.startsWith('nvidia-smi')
        ? { stdout: '', stderr: 'bash: line 1: nvidia-smi: command not found\n', exitCode: 127 }
        : undefined;
    const plan = await planOn(fleet, { kind: 'worker', worker: 'decode-1' });
    expect(plan.refused).toBeUndefined();
    expect(plan.checks.find((c) => c.unreadable)).toEqual({
      name: 'the GPUs of decode-1 run only its own processes',
      ok: false,
      unreadable: true,
      detail:
        "nvidia-smi is not installed on gpu-b or not on the SSH user's PATH (exit 127: bash: line 1: nvidia-smi: command not found)",
    });
    expect(startRefusal(plan)).toBe(
      "the GPU check could not be read (nvidia-smi is not installed on gpu-b or not on the SSH user's PATH (exit 127: bash: line 1: nvidia-smi: command not found)); the roll starts only when you choose to roll without it",
    );
    expect(startRefusal(plan, true)).toBeNull();
    const before = fleet.commands.length;
    const refused = await new RollRun({ id: 'r', plan, workers: fleet.workers, io: fleet.io() }).done;
    expect(refused.state).toBe('failed');
    expect(refused.failure?.message).toBe(`refused: ${startRefusal(plan)}`);
    expect(fleet.commands.length).toBe(before);
    // Chosen: the roll goes, and says which checks it did not make.
    const end = await new RollRun({
      id: 'r2',
      plan,
      workers: fleet.workers,
      io: fleet.io(),
      withoutGpuCheck: true,
    }).done;
    expect(end.state).toBe('succeeded');
    const steps = end.workers[0].steps;
    expect(steps.filter((s) => s.kind.startsWith('gpu')).map((s) => [s.kind, s.state])).toEqual([
      ['gpu-owners', 'skipped'],
      ['gpus-free', 'skipped'],
    ]);
    expect(steps[0].detail).toBe(
      "not checked, as chosen (roll without the GPU check): nvidia-smi is not installed on gpu-b or not on the SSH user's PATH (exit 127: bash: line 1: nvidia-smi: command not found)",
    );
  });

  it('an answer that cannot be parsed fails the plan at once, quoting it', async () => {
    const garbage = '\x1b[1mGPU 00000000:9A:00.0: GPU is lost\x07\n';
    const fleet = new FakeFleet(fleetWorkers());
    fleet.answer = (host, command) =>
      host === 'gpu-b' && command.startsWith('nvidia-smi')
        ? { stdout: garbage, stderr: '', exitCode: 0 }
        : undefined;
    const plan = await planOn(fleet, { kind: 'worker', worker: 'decode-0' });
    expect(plan.refused).toBe(
      'decode-0: the GPU check failed: nvidia-smi --query-compute-apps on gpu-b answered something that is not its CSV table: "\\u001b[1mGPU 00000000:9A:00.0: GPU is lost\\u0007\\n"',
    );
    expect(startRefusal(plan, true)).toBe(plan.refused);
  });

  it('after the stop, an answer that cannot be parsed fails the GPUs-free step on its first reading, not after two minutes', async () => {
    const garbage = '\x1b[1mGPU 00000000:9A:00.0: GPU is lost\x07\n';
    const fleet = new FakeFleet(fleetWorkers());
    const okPlan = await planOn(fleet, { kind: 'worker', worker: 'decode-0' });
    fleet.answer = (host, command) =>
      host === 'gpu-b' &&
      command.startsWith('nvidia-smi') &&
      fleet.commands.some((c) => c.command.endsWith('stop sglang-decode-0.service'))
        ? { stdout: garbage, stderr: '', exitCode: 0 }
        : undefined;
    const end = await new RollRun({
      id: 'r',
      plan: okPlan,
      workers: fleet.workers,
      io: fleet.io(),
      timeouts: { freeMs: 10 * 60_000 },
    }).done;
    expect(end.state).toBe('failed');
    expect(end.failure).toMatchObject({ worker: 'decode-0', step: 'gpus-free' });
    expect(end.failure!.message).toBe(
      'decode-0: nvidia-smi --query-compute-apps on gpu-b answered something that is not its CSV table: "\\u001b[1mGPU 00000000:9A:00.0: GPU is lost\\u0007\\n"',
    );
    const stopAt = fleet.commands.findIndex((c) => c.command.endsWith('stop sglang-decode-0.service'));
    expect(fleet.commands.slice(stopAt).filter((c) => c.command.startsWith('nvidia-smi'))).toHaveLength(1);
  });
});
