// A rolling restart of decode on the demo fleet — three hosts, each its own ssh2 server on its own loopback
// address, reached through the app's real SSH client (one SshConnection per host) — checked against the
// simulation's unit history: never two decode workers down at once, and the multi-node decode-2 stops and
// starts its node rank 1 unit (gpu-c) before rank 0 (gpu-b). Before any stop, the GPU check reads the
// running workers' GPUs (nvidia-smi, systemctl show, ps on each host): another process on a worker's GPUs
// refuses the roll with nothing stopped; nvidia-smi missing rolls only when the operator chooses to.
import { afterEach, describe, expect, it } from 'vitest';
import { acceleratedClock } from '../../src/main/core/clock';
import { SshConnection } from '../../src/main/core/ssh/connection';
import { startDemoFleet, type DemoFleet } from '../../src/main/demo/fleet';
import type { UnitTransition } from '../../src/main/demo/simulation';
import { buildRollPlan } from '../../src/main/core/actions/roll-plan';
import { RollRun } from '../../src/main/core/actions/roll-run';
import { rollLinks } from '../../src/main/core/actions/roll-links';
import { NO_MONITOR } from '../../src/main/core/monitor/scrape-feed';
import { prepareRoll } from '../../src/main/core/actions/roll-session';
import { defaultSettings } from '../../src/main/core/actions/restart-settings';
import type { RollOperation, RollUnit, RollWorker } from '../../src/shared/contract';
import type { HostConfig } from '../../src/shared/domain';

let fleet: DemoFleet | undefined;
const conns: SshConnection[] = [];
afterEach(async () => {
  await Promise.all(conns.splice(0).map((c) => c.stop()));
  await fleet?.stop();
  fleet = undefined;
});

/** The fleet's workers as discovery would give them (fleet-topology.md), URLs as the router lists them. */
function workersOf(f: DemoFleet): RollWorker[] {
  const a = (h: string) => f.host(h as 'gpu-a').address;
  const unit = (hostId: string, name: string, gpus: number[], nodeRank = 0): RollUnit => ({
    hostId,
    hostLabel: hostId,
    unit: name,
    nodeRank,
    gpus,
  });
  const url = (h: string, port: number) => `http://${a(h)}:${port}`;
  return [
    {
      id: url('gpu-a', 30001),
      name: 'router',
      role: 'router',
      apiUrl: 'http://127.0.0.1:30001',
      metricsUrl: 'http://127.0.0.1:29001/metrics',
      units: [unit('gpu-a', 'sglang-router.service', [])],
    },
    ...[0, 1].map((n): RollWorker => ({
      id: url('gpu-a', 30100 + n),
      name: `prefill-${n}`,
      role: 'prefill',
      apiUrl: `http://127.0.0.1:${30100 + n}`,
      metricsUrl: `http://127.0.0.1:${30100 + n}/metrics`,
      bootstrapPort: 8998 + n,
      units: [unit('gpu-a', `sglang-prefill-${n}.service`, n ? [4, 5, 6, 7] : [0, 1, 2, 3])],
    })),
    ...(
      [
        [0, [unit('gpu-b', 'sglang-decode-0.service', [0, 1, 2, 3])]],
        [1, [unit('gpu-b', 'sglang-decode-1.service', [4, 5])]],
        [
          2,
          [
            unit('gpu-b', 'sglang-decode-2.service', [6, 7], 0),
            unit('gpu-c', 'sglang-decode-2.service', [0, 1], 1),
          ],
        ],
      ] as const
    ).map(([n, units]): RollWorker => ({
      id: url('gpu-b', 30200 + n),
      name: `decode-${n}`,
      role: 'decode',
      apiUrl: `http://127.0.0.1:${30200 + n}`,
      metricsUrl: `http://127.0.0.1:${30200 + n}/metrics`,
      units: [...units],
    })),
  ];
}

/** The most decode workers that had a unit not active at the same moment, replaying the unit history. */
function maxDecodeDown(history: UnitTransition[], workers: RollWorker[]): number {
  const workerOf = new Map<string, string>();
  for (const w of workers)
    if (w.role === 'decode') for (const u of w.units) workerOf.set(`${u.hostId}/${u.unit}`, w.name);
  const notActive = new Set<string>();
  let max = 0;
  for (const e of history) {
    const key = `${e.host}/${e.unit}`;
    if (!workerOf.has(key)) continue;
    if (e.activeState === 'active') notActive.delete(key);
    else notActive.add(key);
    max = Math.max(max, new Set([...notActive].map((k) => workerOf.get(k))).size);
  }
  return max;
}

/** One SshConnection per fleet host, connected. */
async function connect(f: DemoFleet): Promise<Map<string, SshConnection>> {
  const links = new Map<string, SshConnection>();
  for (const h of f.hosts) {
    const conn = new SshConnection({
      label: h.name,
      configure: async () => ({
        host: h.address,
        port: h.port,
        username: f.username,
        privateKey: f.clientPrivateKey,
        hostVerifier: (key: Buffer) => key.equals(h.hostKeyPublic),
      }),
    });
    conns.push(conn);
    links.set(h.name, conn);
  }
  await Promise.all(conns.map(async (c) => (await c.start(), c.waitConnected(10_000))));
  return links;
}

/** Each decode unit with its main pid and state, as the simulation has it. */
function decodeUnits(f: DemoFleet): string[] {
  return f
    .groundTruth()
    .workers.filter((w) => w.role === 'decode')
    .flatMap((w) => w.units.map((u) => `${u.host}/${u.unit} ${u.activeState} ${u.mainPid}`));
}

describe('rolling restart on the demo fleet (three hosts, real SSH)', () => {
  it('restarts decode-0, decode-1, decode-2 one at a time; decode-2 rank 1 (gpu-c) goes first', async () => {
    const clock = acceleratedClock(100);
    fleet = await startDemoFleet({ clock, seed: 5, historyMs: 10 * 60_000 });
    const f = fleet;
    const links = await connect(f);
    // The demo's ss: gpu-a's bound ports (HTTP and bootstrap), and decode-2's rank 1 connected from gpu-c.
    expect((await links.get('gpu-a')!.exec('ss -ltn')).stdout).toMatch(/0\.0\.0\.0:8999 /);
    const peers = await links.get('gpu-b')!.exec(`ss -Htn state established '( sport = :5757 )'`);
    expect(peers.stdout).toMatch(/^0 +0 +127\.0\.0\.3:5757 +127\.0\.0\.4:\d+$/m);
    const workers = workersOf(f);
    const io = rollLinks({
      rollId: 'roll-t',
      deploymentId: 'fleet',
      workers,
      links,
      clock,
      pollMs: 1000,
      minRealGapMs: 20,
      settings: defaultSettings(),
      scrapes: NO_MONITOR,
      privilegeOf: () => 'sudo',
    });
    try {
      const health = await io.readHealth();
      expect([...health.values()].map((h) => h.state)).toEqual(Array(5).fill('healthy'));
      const plan = buildRollPlan({
        workers,
        target: { kind: 'role', role: 'decode' },
        health,
        privilegeOf: () => 'sudo',
      });
      expect(plan.refused).toBeUndefined();
      const from = f.unitHistory().length;
      const seen: RollOperation[] = [];
      const end = await new RollRun({ id: 'roll-t', plan, workers, io, onChange: (op) => seen.push(op) })
        .done;
      expect(end.state, JSON.stringify(end.failure)).toBe('succeeded');
      expect(end.workers.map((w) => `${w.name} ${w.state}`)).toEqual([
        'decode-0 succeeded',
        'decode-1 succeeded',
        'decode-2 succeeded',
      ]);
      const history = f.unitHistory().slice(from);
      expect(maxDecodeDown(history, workers)).toBe(1);
      // Each decode unit went down and came back once; prefill and the router were never touched.
      const d2 = history.filter((e) => e.unit === 'sglang-decode-2.service');
      const firstDown = (host: string) => d2.findIndex((e) => e.host === host && e.activeState !== 'active');
      const firstUp = (host: string) => d2.findIndex((e) => e.host === host && e.activeState === 'active');
      expect(firstDown('gpu-c')).toBeGreaterThanOrEqual(0);
      expect(firstDown('gpu-c')).toBeLessThan(firstDown('gpu-b'));
      expect(firstUp('gpu-c')).toBeLessThan(firstUp('gpu-b'));
      expect(history.filter((e) => !e.unit.startsWith('sglang-decode-'))).toEqual([]);
      // The truth after the roll: all five workers healthy at the router again.
      expect(f.groundTruth().workers.map((w) => `${w.name} ${w.routerHealth}`)).toEqual([
        'prefill-0 healthy',
        'prefill-1 healthy',
        'decode-0 healthy',
        'decode-1 healthy',
        'decode-2 healthy',
      ]);
      // GPUs were seen free on both hosts of decode-2 before it started.
      expect(end.workers[2].steps.filter((s) => s.kind === 'gpus-free').map((s) => s.detail)).toEqual([
        'no compute process on GPUs 0,1 of gpu-c',
        'no compute process on GPUs 6,7 of gpu-b',
      ]);
    } finally {
      io.dispose();
    }
  }, 120_000);
});

describe('the GPU check on the demo fleet, before anything is stopped (three hosts, real SSH)', () => {
  const hosts = (f: DemoFleet) =>
    new Map<string, HostConfig>(
      f.hosts.map((h) => [h.name, { id: h.name, label: h.name, kind: 'ssh', alias: h.name }]),
    );

  it("another process on decode-1's GPUs: the plan refuses, naming it, and no unit is stopped", async () => {
    const clock = acceleratedClock(100);
    fleet = await startDemoFleet({ clock, seed: 5, historyMs: 10 * 60_000 });
    const f = fleet;
    const links = await connect(f);
    f.setFault('foreign-gpu-process', true, 'decode-1');
    const before = decodeUnits(f);
    const from = f.unitHistory().length;
    const prepared = await prepareRoll(
      { kind: 'role', role: 'decode' },
      {
        deploymentId: 'fleet',
        workers: workersOf(f),
        links,
        hosts: hosts(f),
        clock,
        settings: defaultSettings(),
        scrapes: NO_MONITOR,
        pollMs: 1000,
        minRealGapMs: 20,
      },
    );
    try {
      const { plan } = prepared;
      const d1 = f.groundTruth().workers.find((w) => w.name === 'decode-1')!.units[0].mainPid;
      expect(plan.refused).toBe(
        `decode-1: GPUs 4,5 of gpu-b run pid 4190065 (python3, 61440 MiB), not a process of sglang-decode-1.service (MainPID ${d1} and its 4 descendants): stopping decode-1 would free nothing, so it is not stopped`,
      );
      expect(plan.refusedHint).toMatch(
        /^End pid 4190065 on gpu-b \(`ps -o pid,user,args -p 4190065` shows whose\)/,
      );
      // Read on the running workers: the others' GPUs hold only their own scheduler processes.
      const gpu = plan.checks.filter((c) => c.name.startsWith('the GPUs of'));
      expect(gpu.map((c) => `${c.name}: ${c.ok}`)).toEqual([
        'the GPUs of decode-0 run only its own processes: true',
        'the GPUs of decode-1 run only its own processes: false',
        'the GPUs of decode-2 run only its own processes: true',
      ]);
      expect(gpu[2].detail).toMatch(
        // Node rank 1 of the two-node worker runs no detokenizer: one descendant fewer than node 0.
        /^GPUs 0,1 of gpu-c run only processes of sglang-decode-2\.service \(MainPID \d+ and its 3 descendants\): pid \d+, \d+; GPUs 6,7 of gpu-b run only processes of sglang-decode-2\.service \(MainPID \d+ and its 4 descendants\)/,
      );
      const end = await prepared.start().done;
      expect(end.state).toBe('failed');
      expect(end.failure).toMatchObject({ step: 'preflight', message: `refused: ${plan.refused}` });
      // The simulation: no decode unit changed state or process.
      expect(f.unitHistory().slice(from)).toEqual([]);
      expect(decodeUnits(f)).toEqual(before);
    } finally {
      prepared.dispose();
    }
  }, 60_000);

  it('nvidia-smi missing on gpu-b: the plan says the check cannot be read; the roll goes only when chosen, saying what it did not check', async () => {
    const clock = acceleratedClock(100);
    fleet = await startDemoFleet({ clock, seed: 5, historyMs: 10 * 60_000 });
    const f = fleet;
    const links = await connect(f);
    f.setFault('nvidia-smi-missing', true, 'gpu-b');
    const ctx = {
      deploymentId: 'fleet',
      workers: workersOf(f),
      links,
      hosts: hosts(f),
      clock,
      settings: defaultSettings(),
      scrapes: NO_MONITOR,
      pollMs: 1000,
      minRealGapMs: 20,
    };
    const target = { kind: 'worker' as const, worker: 'decode-1' };
    const from = f.unitHistory().length;
    let prepared = await prepareRoll(target, ctx);
    try {
      expect(prepared.plan.refused).toBeUndefined();
      expect(prepared.plan.checks.find((c) => c.unreadable)).toMatchObject({
        name: 'the GPUs of decode-1 run only its own processes',
        detail:
          "nvidia-smi is not installed on gpu-b or not on the SSH user's PATH (exit 127: bash: nvidia-smi: command not found)",
      });
      const refused = await prepared.start().done;
      expect(refused.failure?.message).toMatch(
        /^refused: the GPU check could not be read \(nvidia-smi is not installed on gpu-b/,
      );
      expect(f.unitHistory().slice(from)).toEqual([]);
    } finally {
      prepared.dispose();
    }
    prepared = await prepareRoll(target, ctx);
    try {
      const end = await prepared.start(undefined, { withoutGpuCheck: true }).done;
      expect(end.state, JSON.stringify(end.failure)).toBe('succeeded');
      expect(
        end.workers[0].steps.filter((s) => s.kind.startsWith('gpu')).map((s) => `${s.kind} ${s.state}`),
      ).toEqual(['gpu-owners skipped', 'gpus-free skipped']);
      expect(
        f
          .unitHistory()
          .slice(from)
          .map((e) => `${e.unit} ${e.activeState}`)
          .filter((e) => / (inactive|active)$/.test(e)),
      ).toEqual(['sglang-decode-1.service inactive', 'sglang-decode-1.service active']);
    } finally {
      prepared.dispose();
    }
  }, 90_000);
});
