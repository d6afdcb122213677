// `pd-console restart decode --host gpu-a` on the demo fleet, end to end: the CLI follows the router from gpu-a
// to gpu-b and gpu-c through the ssh config the fleet writes (real SSH client, one link per host), plans the
// rolling restart and runs it; the simulation's unit history shows never two decode workers down at once.
// With another process on a decode worker's GPUs the plan it prints refuses the roll, and nothing is stopped;
// with nvidia-smi missing it says the check cannot be read and starts only with --without-gpu-check.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restartCommand } from '../../src/main/cli/restart-command';
import { captureRestartIo } from '../support/restart-io';
import { createApp } from '../../src/main/compose';
import { acceleratedClock } from '../../src/main/core/clock';
import { startDemoFleet, type DemoFleet } from '../../src/main/demo/fleet';
import type { RollOperation, RollPlan } from '../../src/shared/contract';

let fleet: DemoFleet;
let dir: string;
let home: string;
const clock = acceleratedClock(100);

beforeAll(async () => {
  fleet = await startDemoFleet({ clock, seed: 3, historyMs: 10 * 60_000 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'pd-restart-fleet-'));
  home = (await fleet.writeSshConfig(path.join(dir, 'home'))).home;
}, 60_000);
afterAll(async () => {
  await fleet?.stop();
  await rm(dir, { recursive: true, force: true });
});

const capture = captureRestartIo;

function app() {
  const a = createApp({ shell: 'cli', intervalMs: 1000, dataDir: path.join(dir, 'data'), homeDir: home });
  return a;
}

/** Most decode workers (by unit → worker) with a unit not active at once, replaying the history. */
function maxDown(from: number, workerOf: Map<string, string>): number {
  const down = new Set<string>();
  let max = 0;
  for (const e of fleet.unitHistory().slice(from)) {
    const k = `${e.host}/${e.unit}`;
    if (!workerOf.has(k)) continue;
    if (e.activeState === 'active') down.delete(k);
    else down.add(k);
    max = Math.max(max, new Set([...down].map((x) => workerOf.get(x))).size);
  }
  return max;
}

describe('pd-console restart on the demo fleet', () => {
  it('rolls every decode worker from gpu-a, one at a time, the multi-node decode-2 as one worker', async () => {
    const io = capture();
    const from = fleet.unitHistory().length;
    const code = await restartCommand(['decode', '--host', 'gpu-a', '--yes', '--json'], io, {
      app: app(),
      sshHome: home,
    });
    const lines = io.out().trim().split('\n');
    expect(lines, io.err()).toHaveLength(2);
    const { plan } = JSON.parse(lines[0]) as { plan: RollPlan };
    const { operation } = JSON.parse(lines[1]) as { operation: RollOperation };
    expect(plan.workers.map((w) => `${w.name} ${w.workerId}`)).toEqual([
      'decode-0 http://127.0.0.3:30200',
      'decode-1 http://127.0.0.3:30201',
      'decode-2 http://127.0.0.3:30202',
    ]);
    expect(plan.workers[2].steps.filter((s) => s.kind === 'stop').map((s) => s.hostLabel)).toEqual([
      'gpu-c',
      'gpu-b',
    ]);
    expect(code, `${io.err()}\n${JSON.stringify(operation.failure)}`).toBe(0);
    expect(operation.state).toBe('succeeded');
    const workerOf = new Map<string, string>([
      ['gpu-b/sglang-decode-0.service', 'decode-0'],
      ['gpu-b/sglang-decode-1.service', 'decode-1'],
      ['gpu-b/sglang-decode-2.service', 'decode-2'],
      ['gpu-c/sglang-decode-2.service', 'decode-2'],
    ]);
    expect(maxDown(from, workerOf)).toBe(1);
    // Each of the four decode units went down and came back.
    const units = new Set(
      fleet
        .unitHistory()
        .slice(from)
        .filter((e) => e.activeState === 'inactive')
        .map((e) => `${e.host}/${e.unit}`),
    );
    expect([...units].sort()).toEqual([...workerOf.keys()].sort());
    expect(io.err()).toMatch(/decode-2 +Stop sglang-decode-2\.service on gpu-c \(node rank 1\): succeeded/);
    expect(io.err()).toMatch(
      /✔ restarted every decode worker, one at a time \(3\) in .*: decode-0, decode-1, decode-2/,
    );
  }, 180_000);
});

describe('pd-console restart on the demo fleet: the GPU check in the plan', () => {
  it("another process on decode-1's GPUs: the plan shows the failed check and the refusal; nothing is stopped (exit 2)", async () => {
    fleet.setFault('foreign-gpu-process', true, 'decode-1');
    try {
      const io = capture();
      const from = fleet.unitHistory().length;
      const code = await restartCommand(['decode', '--host', 'gpu-a', '--yes'], io, {
        app: app(),
        sshHome: home,
      });
      expect(code, io.err()).toBe(2);
      const out = io.out();
      expect(out).toMatch(/^Rolling restart plan: every decode worker, one at a time \(3\)$/m);
      expect(out).toMatch(
        /^ {4}GPUs 4,5 on gpu-b run only sglang-decode-1\.service's processes \(before the stop\)$/m,
      );
      expect(out).toMatch(
        /^ {2}✖ the GPUs of decode-1 run only its own processes: GPUs 4,5 of gpu-b run pid 4190065 \(python3, 61440 MiB\), not a process of sglang-decode-1\.service \(MainPID \d+ and its 4 descendants\): stopping decode-1 would free nothing$/m,
      );
      expect(out).toMatch(/^ {2}✔ the GPUs of decode-0 run only its own processes: /m);
      expect(out).toMatch(
        /^! Refused: decode-1: GPUs 4,5 of gpu-b run pid 4190065 \(python3, 61440 MiB\), .*: stopping decode-1 would free nothing, so it is not stopped$/m,
      );
      expect(out).toMatch(/^ {2}next: End pid 4190065 on gpu-b .* then plan again\.$/m);
      expect(out).not.toMatch(/Started roll/);
      expect(io.err()).toMatch(/^pd-console restart: refused: decode-1: GPUs 4,5 of gpu-b run pid 4190065/m);
      expect(fleet.unitHistory().slice(from)).toEqual([]);
    } finally {
      fleet.setFault('foreign-gpu-process', false);
    }
  }, 60_000);

  it('nvidia-smi missing on gpu-b: the plan says the check cannot be read; the roll needs --without-gpu-check, and then goes', async () => {
    fleet.setFault('nvidia-smi-missing', true, 'gpu-b');
    try {
      const io = capture();
      const from = fleet.unitHistory().length;
      const code = await restartCommand(['decode@decode-1', '--host', 'gpu-a', '--yes'], io, {
        app: app(),
        sshHome: home,
      });
      expect(code, io.err()).toBe(2);
      expect(io.out()).toMatch(
        /^ {2}\? the GPUs of decode-1 run only its own processes: cannot be read — nvidia-smi is not installed on gpu-b or not on the SSH user's PATH \(exit 127: bash: nvidia-smi: command not found\)$/m,
      );
      expect(io.out()).toMatch(
        /^! The GPU check could not be read: the roll starts only with --without-gpu-check/m,
      );
      expect(io.err()).toMatch(
        /^pd-console restart: refused: the GPU check could not be read \(nvidia-smi is not installed on gpu-b.*\nhint: pass --without-gpu-check to roll without it/m,
      );
      expect(fleet.unitHistory().slice(from)).toEqual([]);
      // Chosen: the worker restarts, and the output says which checks were not made.
      const chosen = capture();
      expect(
        await restartCommand(['decode@decode-1', '--host', 'gpu-a', '--yes', '--without-gpu-check'], chosen, {
          app: app(),
          sshHome: home,
        }),
        chosen.err(),
      ).toBe(0);
      expect(chosen.out()).toMatch(
        /decode-1 +GPUs 4,5 on gpu-b run only sglang-decode-1\.service's processes \(before the stop\): skipped — not checked, as chosen \(roll without the GPU check\): nvidia-smi is not installed on gpu-b/,
      );
      expect(chosen.out()).toMatch(
        /decode-1 +GPUs 4,5 on gpu-b run no process: skipped — not checked, as chosen/,
      );
      expect(
        fleet
          .unitHistory()
          .slice(from)
          .filter((e) => /^(active|inactive)$/.test(e.activeState))
          .map((e) => `${e.unit} ${e.activeState}`),
      ).toEqual(['sglang-decode-1.service inactive', 'sglang-decode-1.service active']);
    } finally {
      fleet.setFault('nvidia-smi-missing', false);
    }
  }, 60_000);
});
