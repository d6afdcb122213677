// A rolling restart of decode on the demo fleet — three hosts, each its own ssh2 server on its own loopback
// address, reached through the app's real SSH client (one SshConnection per host) — checked against the
// simulation's unit history: never two decode workers down at once, and the multi-node decode-2 stops and
// starts its node rank 1 unit (gpu-c) before rank 0 (gpu-b).
import { afterEach, describe, expect, it } from 'vitest';
import { acceleratedClock } from '../../src/main/core/clock';
import { SshConnection } from '../../src/main/core/ssh/connection';
import { startDemoFleet, type DemoFleet } from '../../src/main/demo/fleet';
import type { UnitTransition } from '../../src/main/demo/simulation';
import { buildRollPlan } from '../../src/main/core/actions/roll-plan';
import { RollRun } from '../../src/main/core/actions/roll-run';
import { rollLinks } from '../../src/main/core/actions/roll-links';
import { defaultSettings } from '../../src/main/core/actions/restart-settings';
import type { RollOperation, RollUnit, RollWorker } from '../../src/shared/contract';

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

describe('rolling restart on the demo fleet (three hosts, real SSH)', () => {
  it('restarts decode-0, decode-1, decode-2 one at a time; decode-2 rank 1 (gpu-c) goes first', async () => {
    const clock = acceleratedClock(100);
    fleet = await startDemoFleet({ clock, seed: 5, historyMs: 10 * 60_000 });
    const f = fleet;
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
