// What the fleet screens show for a deployment: one row per worker with its host and KV, unreachable hosts
// said per worker while the rest keeps its figures, the role's aggregate (Σused / Σcapacity, the fullest
// worker, healthy x/N), the order (problems first, then fullest), collapsing past a screenful without hiding a
// problem, and GPUs grouped by host and worker.
import { describe, expect, it } from 'vitest';
import {
  gpusByHost,
  hostOrder,
  roleServices,
  spansHosts,
  roleAggregate,
  routerRows,
  sortByFullest,
  visibleRows,
  workerRows,
} from '../../src/renderer/src/workers/fleet-model';
import { demoFleet, fleetFixture, type WorkerSpec } from './fixture';
import type { RouterWorkerState } from '../../src/shared/contract';
import type { Role } from '../../src/shared/domain';
import { routerViewOf } from '../../src/shared/router-health';

describe('fleet screens: worker rows', () => {
  it('the demo fleet: 5 workers on their hosts, each with its own KV and requests', () => {
    const { summary, latest, dashboard } = demoFleet();
    // One router is its card; two prefill and three decode workers are their role's groups.
    expect(['router', 'prefill', 'decode'].map((r) => roleServices(summary, r as Role).one?.id)).toEqual([
      'router',
      undefined,
      undefined,
    ]);
    const rows = workerRows(summary, latest, dashboard);
    expect(rows.map((r) => `${r.id}@${r.host}`)).toEqual([
      'prefill-0@gpu-a',
      'prefill-1@gpu-a',
      'decode-0@gpu-b',
      'decode-1@gpu-b',
      'decode-2@gpu-b',
    ]);
    const d1 = rows.find((r) => r.id === 'decode-1')!;
    expect(d1.kv?.ratio).toBeCloseTo(0.97, 3);
    expect([d1.running, d1.queued]).toEqual([30, 4]);
    expect(d1.healthy).toBe(true);
    // The multi-node worker lists both nodes, rank 0 first.
    expect(rows.find((r) => r.id === 'decode-2')!.units.map((u) => `${u.host}:${u.nodeRank}`)).toEqual([
      'gpu-b:0',
      'gpu-c:1',
    ]);
  });

  it("a role's PD stage queues per worker and summed: a prefill with nothing queued may hold a bootstrap queue", () => {
    const spec = (id: string, port: number, stage?: Record<string, number>): WorkerSpec => ({
      id,
      role: 'prefill',
      host: 'gpu-a',
      port,
      kv: [0, 1_000_000],
      stage,
    });
    const { summary, latest, dashboard } = fleetFixture(
      [
        spec('prefill-0', 30100, { prefill_bootstrap_queue: 34, prefill_inflight_queue: 0 }),
        spec('prefill-1', 30101, { prefill_bootstrap_queue: 23 }),
      ],
      { hosts: ['gpu-a'] },
    );
    const rows = workerRows(summary, latest, dashboard);
    const p0 = rows.find((r) => r.id === 'prefill-0')!;
    expect(p0.queued).toBe(0);
    expect(p0.stage).toEqual([
      { queue: 'prefill_bootstrap_queue', n: 34 },
      { queue: 'prefill_inflight_queue', n: 0 },
    ]);
    // prefill-1 does not report its inflight queue: unknown, not 0, and the sum counts only who reports.
    expect(rows.find((r) => r.id === 'prefill-1')!.stage[1]).toEqual({
      queue: 'prefill_inflight_queue',
      n: null,
    });
    expect(roleAggregate(rows, 'prefill').stage).toEqual([
      { queue: 'prefill_bootstrap_queue', n: 57 },
      { queue: 'prefill_inflight_queue', n: 0 },
    ]);
    // No worker reports a queue: the role's figure is unknown.
    const none = fleetFixture([spec('prefill-0', 30100)], { hosts: ['gpu-a'] });
    expect(roleAggregate(workerRows(none.summary, none.latest, none.dashboard), 'prefill').stage).toEqual([
      { queue: 'prefill_bootstrap_queue', n: null },
      { queue: 'prefill_inflight_queue', n: null },
    ]);
  });

  it('a worker loading its model after a restart is not healthy; one not asked since it started is checking', () => {
    const now = 30 * 60_000;
    const spec = (id: string, port: number): WorkerSpec => ({ id, role: 'decode', host: 'gpu-b', port });
    const { summary, latest, dashboard } = fleetFixture(
      [
        spec('decode-0', 30200),
        { ...spec('decode-1', 30201), health: null, startedAt: now - 60_000 },
        { ...spec('decode-2', 30202), health: null },
      ],
      { hosts: ['gpu-b'] },
    );
    const rows = workerRows(summary, latest, dashboard, { now, stalled: false });
    expect(rows.map((r) => [r.id, r.healthy, r.checking, r.tone])).toEqual([
      ['decode-0', true, false, 'ok'],
      ['decode-1', false, false, 'warn'],
      ['decode-2', false, true, 'idle'],
    ]);
    const agg = roleAggregate(rows, 'decode');
    expect([agg.healthy, agg.pending, agg.workers]).toEqual([1, 1, 3]);
  });

  it('a one-host pair (one service of each role on one host, ids and all) is three cards; a second worker makes its role a group', () => {
    const { summary } = demoFleet();
    const host = summary.deployment.services[0]!.hostId;
    const one = (role: string) => {
      const { units: _units, ...s } = summary.deployment.services.find((x) => x.role === role)!;
      return { ...s, hostId: host };
    };
    const services = [one('router'), one('prefill'), one('decode')];
    const onHost = <T extends { id: string }>(h: T) => h.id === host;
    const pair = {
      ...summary,
      deployment: { ...summary.deployment, services },
      hosts: summary.hosts?.filter((h) => onHost(h.host)),
      fleet: summary.fleet && { ...summary.fleet, hosts: summary.fleet.hosts.filter(onHost) },
    };
    expect(services.every((x) => x.id !== undefined)).toBe(true);
    const cards = (s: typeof pair) =>
      (['router', 'prefill', 'decode'] as const).map((r) => roleServices(s, r).one !== undefined);
    expect(cards(pair)).toEqual([true, true, true]);
    expect(spansHosts(pair)).toBe(false);
    const second = { ...one('decode'), id: 'decode-1' };
    expect(cards({ ...pair, deployment: { ...pair.deployment, services: [...services, second] } })).toEqual([
      true,
      true,
      false,
    ]);
    // A worker spanning two nodes is its role's group even alone: its units are listed.
    const { units } = summary.deployment.services.find((x) => x.units && x.units.length > 1)!;
    const wide = { ...one('decode'), units };
    expect(
      cards({ ...pair, deployment: { ...pair.deployment, services: [services[0], services[1], wide] } }),
    ).toEqual([true, true, false]);
  });

  it("a host whose link failed: its workers say 'unreachable: reason' and show no stale figures; the rest stays", () => {
    const { summary, latest, dashboard } = demoFleet({
      'gpu-b': { state: 'failed', reason: 'connect ECONNREFUSED 127.0.0.3:2201', at: 5 },
    });
    const rows = workerRows(summary, latest, dashboard);
    for (const r of rows.filter((x) => x.host === 'gpu-b')) {
      expect(r.unreachable).toBe('unreachable: connect ECONNREFUSED 127.0.0.3:2201');
      expect(r.kv).toBeNull();
      expect(r.running).toBeNull();
      expect(r.healthy).toBe(false);
    }
    const p0 = rows.find((r) => r.id === 'prefill-0')!;
    expect(p0.unreachable).toBeUndefined();
    expect(p0.kv?.usedTokens).toBe(200_000);
    // And the aggregate counts what it can read: 0 of 3 decode healthy, no decode KV figure.
    const agg = roleAggregate(rows, 'decode');
    expect([agg.healthy, agg.workers, agg.ratio]).toEqual([0, 3, null]);
  });

  it('a reconnecting link says its last error', () => {
    const { summary, latest, dashboard } = demoFleet({
      'gpu-a': {
        state: 'reconnecting',
        attempt: 2,
        nextAttemptAt: 9,
        lastError: 'keepalive timeout',
        since: 3,
      },
    });
    expect(workerRows(summary, latest, dashboard).find((r) => r.id === 'prefill-1')!.unreachable).toBe(
      'unreachable: keepalive timeout',
    );
    expect(routerRows(summary, latest)[0].unreachable).toBe('unreachable: keepalive timeout');
  });
});

describe('fleet screens: routers', () => {
  it('two routers over the same workers: both shown, each with its own list', () => {
    const { summary, latest } = demoFleet();
    const second = { ...summary.fleet!.routers[0], id: 'gpu-b/sglang-router-b.service', host: 'gpu-b' };
    second.unit = 'sglang-router-b.service';
    second.workers = second.workers.filter((w) => w.role === 'decode');
    summary.fleet!.routers.push(second);
    summary.deployment.services.push({
      role: 'router',
      id: 'router-1',
      hostId: 'gpu-b',
      unit: 'sglang-router-b.service',
      apiUrl: 'http://127.0.0.1:30002',
    });
    const rows = routerRows(summary, latest);
    expect(rows.map((r) => [r.id, r.host, r.lists])).toEqual([
      ['router', 'gpu-a', { prefill: 2, decode: 3, regular: 0 }],
      ['router-1', 'gpu-b', { prefill: 0, decode: 3, regular: 0 }],
    ]);
  });
});

describe('fleet screens: role aggregate', () => {
  it('Σused / Σcapacity, the fullest worker with its host, healthy x/N, requests summed', () => {
    const { summary, latest, dashboard } = demoFleet();
    const agg = roleAggregate(workerRows(summary, latest, dashboard), 'decode');
    expect(agg.usedTokens).toBe(1_100_000 + 1_051_092 + 900_000);
    expect(agg.capacityTokens).toBe(2_167_200 + 1_083_600 + 2_167_200);
    expect(agg.ratio).toBeCloseTo(3_051_092 / 5_418_000, 6);
    // Not the mean of the ratios (0.66): the big pools weigh more.
    expect(agg.ratio).not.toBeCloseTo((0.5076 + 0.97 + 0.4153) / 3, 2);
    expect(agg.fullest).toEqual({ id: 'decode-1', host: 'gpu-b', ratio: 1_051_092 / 1_083_600 });
    expect([agg.healthy, agg.workers]).toEqual([3, 3]);
    expect([agg.running, agg.queued]).toEqual([60, 5]);
  });

  it('an unhealthy worker counts against healthy x/N', () => {
    const f = fleetFixture(
      [
        { id: 'decode-0', role: 'decode', host: 'h1', port: 1, kv: [1, 10] },
        { id: 'decode-1', role: 'decode', host: 'h1', port: 2, kv: [1, 10], health: false },
        { id: 'decode-2', role: 'decode', host: 'h2', port: 3, kv: [1, 10], active: 'failed' },
      ],
      { hosts: ['h1', 'h2'] },
    );
    const agg = roleAggregate(workerRows(f.summary, f.latest, f.dashboard), 'decode');
    expect([agg.healthy, agg.workers]).toEqual([1, 3]);
  });

  it('a worker whose state is not read yet is pending, not counted down (the first poll after open)', () => {
    const f = fleetFixture(
      [
        { id: 'decode-0', role: 'decode', host: 'h1', port: 1, kv: [1, 10] },
        { id: 'decode-1', role: 'decode', host: 'h1', port: 2, kv: [1, 10] },
      ],
      { hosts: ['h1'] },
    );
    const unread = f.latest.services.find((s) => s.id === 'decode-1')!;
    delete unread.systemd;
    delete unread.health;
    const rows = workerRows(f.summary, f.latest, f.dashboard);
    expect(rows.find((r) => r.id === 'decode-1')!.tone).toBe('idle');
    const agg = roleAggregate(rows, 'decode');
    expect([agg.healthy, agg.pending, agg.workers]).toEqual([1, 1, 2]);
  });
});

function npmd(n: number, m: number, over: Partial<Record<string, Partial<WorkerSpec>>> = {}) {
  const ws: WorkerSpec[] = [];
  for (let i = 0; i < n; i++)
    ws.push({
      id: `prefill-${i}`,
      role: 'prefill',
      host: `gpu-${i % 4}`,
      port: 30100 + i,
      kv: [i * 10, 100],
    });
  for (let i = 0; i < m; i++)
    ws.push({
      id: `decode-${i}`,
      role: 'decode',
      host: `gpu-${4 + (i % 4)}`,
      port: 30200 + i,
      kv: [(i * 37) % 100, 100],
      ...over[`decode-${i}`],
    });
  return fleetFixture(ws, { hosts: Array.from({ length: 8 }, (_, i) => `gpu-${i}`) });
}

describe('fleet screens: order and collapse', () => {
  it('sorted problems first, then the fullest first, then by id', () => {
    const f = npmd(2, 8, { 'decode-5': { active: 'failed' }, 'decode-6': { health: false } });
    const sorted = sortByFullest(
      workerRows(f.summary, f.latest, f.dashboard).filter((r) => r.role === 'decode'),
    );
    // KV of decode-i is (i·37 mod 100) %: 0, 37, 74, 11, 48, 85, 22, 59.
    expect(sorted.map((r) => r.id)).toEqual([
      'decode-5', // failed (85 % KV, but down first)
      'decode-6', // /health failing
      'decode-2', // 74 %
      'decode-7', // 59 %
      'decode-4', // 48 %
      'decode-1', // 37 %
      'decode-3', // 11 %
      'decode-0', // 0 %
    ]);
  });

  it('8 rows show as they are; past 8 the fullest 7 and "n more", never hiding a worker with a problem', () => {
    const eight = npmd(1, 8);
    const rows8 = sortByFullest(
      workerRows(eight.summary, eight.latest, eight.dashboard).filter((r) => r.role === 'decode'),
    );
    expect(visibleRows(rows8, 8, false).hidden).toEqual([]);

    const twelve = npmd(1, 12);
    const rows12 = sortByFullest(
      workerRows(twelve.summary, twelve.latest, twelve.dashboard).filter((r) => r.role === 'decode'),
    );
    const { shown, hidden } = visibleRows(rows12, 8, false);
    expect([shown.length, hidden.length]).toEqual([7, 5]);
    // What is hidden is the emptiest.
    expect(Math.max(...hidden.map((r) => r.kv!.ratio))).toBeLessThanOrEqual(
      Math.min(...shown.map((r) => r.kv!.ratio)),
    );
    expect(visibleRows(rows12, 8, true).hidden).toEqual([]);

    const broken = npmd(
      1,
      12,
      Object.fromEntries([...Array(10).keys()].map((i) => [`decode-${i}`, { health: false }])),
    );
    const rowsB = sortByFullest(
      workerRows(broken.summary, broken.latest, broken.dashboard).filter((r) => r.role === 'decode'),
    );
    const vb = visibleRows(rowsB, 8, false);
    expect(vb.shown.filter((r) => r.tone !== 'ok')).toHaveLength(10);
    expect(vb.hidden.every((r) => r.tone === 'ok')).toBe(true);
  });
});

describe('fleet screens: GPUs by host and worker', () => {
  it('each host lists the workers whose units run there, a multi-node worker under both hosts', () => {
    const { summary, latest, dashboard } = demoFleet();
    const g = gpusByHost(workerRows(summary, latest, dashboard), hostOrder(summary));
    expect(
      g.map((h) => `${h.host}: ${h.workers.map((w) => `${w.id}[${w.gpus.join(',')}]`).join(' ')}`),
    ).toEqual([
      'gpu-a: prefill-0[0,1,2,3] prefill-1[4,5,6,7]',
      'gpu-b: decode-0[0,1,2,3] decode-1[4,5] decode-2[6,7]',
      'gpu-c: decode-2[0,1]',
    ]);
    expect(g[2].workers[0].nodeRank).toBe(1);
  });
});

describe('fleet screens agree with the router, as the verdict does', () => {
  // The router's newest scrape: decode-1 answers its own /health, but the router has it unhealthy, breaker open.
  const routerSays = (decode1: Partial<RouterWorkerState>): RouterWorkerState[] => [
    { url: 'http://gpu-a:30100', healthy: true, cbState: 'closed' },
    { url: 'http://gpu-a:30101', healthy: true, cbState: 'closed' },
    { url: 'http://gpu-b:30200', healthy: true, cbState: 'closed' },
    { url: 'http://gpu-b:30201', healthy: false, cbState: 'open', ...decode1 },
    { url: 'http://gpu-b:30202', healthy: true, cbState: 'closed' },
  ];

  it('"3/3 healthy" by their own health, "2/3 healthy at the router" by its gauges; the row says which', () => {
    const { summary, latest, dashboard } = demoFleet();
    const rows = workerRows(summary, latest, { ...dashboard, routerWorkers: routerSays({}) });
    const d1 = rows.find((r) => r.id === 'decode-1')!;
    expect(d1.healthy).toBe(true);
    expect(d1.atRouter).toEqual({ state: 'unhealthy', breakerOpen: true });
    expect(d1.tone).toBe('warn');
    expect(rows.find((r) => r.id === 'decode-0')!.atRouter).toEqual({ state: 'healthy', breakerOpen: false });
    const agg = roleAggregate(rows, 'decode');
    expect([agg.healthy, agg.healthyAtRouter, agg.workers]).toEqual([3, 2, 3]);
    expect(roleAggregate(rows, 'prefill').healthyAtRouter).toBe(2);
    // Listed first: the operator sees it without scrolling.
    expect(sortByFullest(rows.filter((r) => r.role === 'decode'))[0].id).toBe('decode-1');
    // The router card counts as the router's workers_healthy / workers_total do (what the verdict quotes).
    const [router] = routerRows(summary, latest, { routerWorkers: routerSays({}) });
    expect(router.healthyAtRouter).toEqual({ healthy: 4, total: 5, removed: 0 });
    const [removed] = routerRows(summary, latest, { routerWorkers: routerSays({ removed: true }) });
    expect(removed.healthyAtRouter).toEqual({ healthy: 4, total: 4, removed: 1 });
  });

  it('before the router reports, or where it lists none of them, nothing is claimed for the router', () => {
    const { summary, latest, dashboard } = demoFleet();
    const rows = workerRows(summary, latest, dashboard);
    expect(rows.every((r) => r.atRouter === undefined)).toBe(true);
    expect(roleAggregate(rows, 'decode').healthyAtRouter).toBeNull();
    expect(routerRows(summary, latest, dashboard)[0].healthyAtRouter).toBeNull();
  });

  it('a DP-aware server (listed once per rank) is healthy at the router only when every rank is', () => {
    const listed: RouterWorkerState[] = [
      { url: 'http://gpu-b:30200@0', healthy: true },
      { url: 'http://gpu-b:30200@1', healthy: false },
    ];
    expect(routerViewOf('http://GPU-B:30200/', listed)).toEqual({ state: 'unhealthy', breakerOpen: false });
    expect(routerViewOf('http://gpu-b:30200', [listed[0]])).toEqual({ state: 'healthy', breakerOpen: false });
    expect(routerViewOf('http://gpu-b:3020', listed)).toBeUndefined();
  });
});
