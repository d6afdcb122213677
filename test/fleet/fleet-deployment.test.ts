// The demo fleet opened as ONE deployment of the running app (createApp, real SSH to the fleet's own ssh2
// servers on 127.0.0.2–.4, reached through the ssh config the demo writes): five workers on three hosts with
// the router's ids, each worker's KV exactly the simulation's ground truth (its clock stands still), per-worker
// and role-aggregate series in the dashboard's store, GPU readings per host; then one host taken off the
// network: its workers say "unreachable: …" while the other host's keep updating.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp, demoFleetOf, type App } from '../../src/main/compose';
import type { DeploymentSummary, Observation, ServiceObservation } from '../../src/shared/domain';
import type { ScopedKey } from '../../src/shared/signals/scoped-key';
import { manualClock } from '../demo/helpers';

let app: App;
let dir: string;
let summary: DeploymentSummary;

/** Resolves with the first observation of the deployment that passes `ok` (polls at the app's 300 ms). */
function observation(ok: (o: Observation) => boolean, what: string, ms = 20_000): Promise<Observation> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      app.core.off('observation', on);
      reject(new Error(`no observation within ${ms} ms where ${what}`));
    }, ms);
    const on = (o: Observation): void => {
      if (o.deploymentId !== summary.deployment.id || !ok(o)) return;
      clearTimeout(timer);
      app.core.off('observation', on);
      resolve(o);
    };
    app.core.on('observation', on);
  });
}

const byId = (o: Observation, id: string): ServiceObservation => {
  const s = o.services.find((x) => x.id === id);
  if (!s) throw new Error(`no service ${id} in the observation (${o.services.map((x) => x.id).join(', ')})`);
  return s;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pd-fleet-deployment-'));
  app = createApp({
    shell: 'browser',
    intervalMs: 300,
    dataDir: dir,
    record: false,
    demoFleetClock: manualClock(),
    demoFleetSeed: 11,
  });
  summary = await app.handlers.openDemo({ topology: 'fleet' });
}, 60_000);

afterAll(async () => {
  await app?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('opens the demo fleet as one deployment: a router and five workers on three hosts, each link its own', async () => {
  expect((await app.handlers.listDeployments({})).length).toBe(1);
  const services = summary.deployment.services.map((s) => ({
    id: s.id,
    role: s.role,
    host: s.hostId,
    unit: s.unit,
    units: s.units?.map((u) => `${u.hostId}/${u.unit}#${u.nodeRank}`),
  }));
  expect(services).toEqual([
    { id: 'router', role: 'router', host: 'gpu-a', unit: 'sglang-router.service', units: undefined },
    { id: 'prefill-0', role: 'prefill', host: 'gpu-a', unit: 'sglang-prefill-0.service', units: undefined },
    { id: 'prefill-1', role: 'prefill', host: 'gpu-a', unit: 'sglang-prefill-1.service', units: undefined },
    { id: 'decode-0', role: 'decode', host: 'gpu-b', unit: 'sglang-decode-0.service', units: undefined },
    { id: 'decode-1', role: 'decode', host: 'gpu-b', unit: 'sglang-decode-1.service', units: undefined },
    {
      id: 'decode-2',
      role: 'decode',
      host: 'gpu-b',
      unit: 'sglang-decode-2.service',
      units: ['gpu-b/sglang-decode-2.service#0', 'gpu-c/sglang-decode-2.service#1'],
    },
  ]);
  expect(summary.hosts?.map((h) => [h.host.id, h.connection.state])).toEqual([
    ['gpu-a', 'connected'],
    ['gpu-b', 'connected'],
    ['gpu-c', 'connected'],
  ]);
  expect(summary.fleet?.unplaced).toEqual([]);
  expect(summary.fleet?.routers.map((r) => r.workers.length)).toEqual([5]);
  // The demo fleet's hosts each saw exactly one SSH connection from the app: one link per host.
  const fleet = demoFleetOf(app.core)!;
  for (const h of fleet.hosts) expect(h.channels.connections, h.name).toBe(1);
}, 30_000);

it("gives every worker the KV the simulation's ground truth holds, and the rank-1 unit's state under decode-2", async () => {
  const fleet = demoFleetOf(app.core)!;
  const o = await observation(
    (x) =>
      x.services.filter((s) => s.kv && s.systemd).length === 5 &&
      byId(x, 'decode-2').units?.[1].systemd !== undefined,
    "all five workers have a KV reading and gpu-c's monitor has reported",
  );
  const truth = fleet.groundTruth().workers;
  expect(truth.map((w) => w.name)).toEqual(['prefill-0', 'prefill-1', 'decode-0', 'decode-1', 'decode-2']);
  for (const w of truth) {
    const s = byId(o, w.name);
    expect(s.hostId, w.name).toBe(w.units[0].host);
    expect(s.unit, w.name).toBe(w.units[0].unit);
    expect({ used: s.kv?.usedTokens, capacity: s.kv?.capacityTokens }, w.name).toEqual({
      used: w.kv?.usedTokens,
      capacity: w.kv?.capacityTokens,
    });
    expect(s.systemd?.activeState, w.name).toBe('active');
  }
  const d2 = byId(o, 'decode-2');
  expect(d2.units?.map((u) => [u.hostId, u.nodeRank, u.systemd?.activeState, u.systemd?.mainPid])).toEqual(
    truth[4].units.map((u) => [u.host, u.nodeRank, u.activeState, u.mainPid]),
  );
  // The decode workers differ (uneven load): the screens have something to tell apart.
  expect(new Set(truth.filter((w) => w.role === 'decode').map((w) => w.kv?.usedTokens)).size).toBe(3);
}, 30_000);

it('keeps per-worker series, role aggregates (sums of tokens, ratio of the sums) and GPUs per host', async () => {
  const fleet = demoFleetOf(app.core)!;
  await observation((x) => x.services.filter((s) => s.kv).length === 5, 'all five have KV');
  const truth = fleet.groundTruth().workers.filter((w) => w.role === 'decode');
  const keys: ScopedKey[] = [
    'decode.kv_used',
    'decode.kv_capacity',
    'decode.kv_ratio',
    ...truth.map((w): ScopedKey => `decode.kv_used@${w.name}`),
    'prefill.kv_used@prefill-1',
    'router.router_requests_per_s',
  ];
  const r = await app.handlers.getSeries({ deploymentId: summary.deployment.id, keys, maxPoints: 100 });
  const last = (key: string): number | undefined => {
    const col = r.series.find((s) => s.key === key);
    const v = col?.v.filter((x): x is number => typeof x === 'number');
    return v?.at(-1);
  };
  for (const w of truth) expect(last(`decode.kv_used@${w.name}`), w.name).toBe(w.kv?.usedTokens);
  const used = truth.reduce((a, w) => a + (w.kv?.usedTokens ?? 0), 0);
  const capacity = truth.reduce((a, w) => a + (w.kv?.capacityTokens ?? 0), 0);
  expect(last('decode.kv_used')).toBe(used);
  expect(last('decode.kv_capacity')).toBe(capacity);
  // The rings keep 32-bit floats.
  expect(last('decode.kv_ratio')).toBeCloseTo(used / capacity, 6);
  expect(last('prefill.kv_used@prefill-1')).toBe(fleet.groundTruth().workers[1].kv?.usedTokens);
  // nvidia-smi runs every 5 s on each host; gpu-c's two GPUs are its own series, apart from gpu-b's.
  const deadline = Date.now() + 15_000;
  let gpu;
  do {
    await new Promise((res) => setTimeout(res, 500));
    gpu = await app.handlers.getSeries({
      deploymentId: summary.deployment.id,
      keys: ['gpu.0.util@gpu-a', 'gpu.7.util@gpu-b', 'gpu.1.mem_used@gpu-c'],
      maxPoints: 10,
    });
  } while (gpu.series.some((s) => s.t.length === 0) && Date.now() < deadline);
  for (const s of gpu.series) expect(s.t.length, s.key).toBeGreaterThan(0);
}, 40_000);

it('refuses an app restart of a role of a fleet and names the rolling restart that does it', async () => {
  const before = demoFleetOf(app.core)!.unitHistory().length;
  const plan = await app.handlers.planRestart({ deploymentId: summary.deployment.id, target: 'decode' });
  expect(plan.blockedReason).toContain('is a fleet');
  expect(plan.blockedReason).toContain('`pd-console restart decode --host gpu-a`');
  await expect(
    app.handlers.startRestart({ deploymentId: summary.deployment.id, target: 'decode' }),
  ).rejects.toThrow(/is a fleet/);
  // Nothing was stopped or started anywhere.
  expect(demoFleetOf(app.core)!.unitHistory().length).toBe(before);
}, 30_000);

it("says 'unreachable: …' for the workers of a host taken off the network; the other hosts keep updating", async () => {
  const fleet = demoFleetOf(app.core)!;
  await fleet.stopHost('gpu-b');
  const o = await observation(
    (x) => byId(x, 'decode-0').systemdError?.startsWith('unreachable: ') === true,
    'decode-0 says it is unreachable',
  );
  for (const id of ['decode-0', 'decode-1', 'decode-2']) {
    const s = byId(o, id);
    expect(s.systemdError, id).toMatch(/^unreachable: /);
    // No /health reading now: what was seen before is its lastSeen.
    expect(s.health, id).toBeUndefined();
    expect(s.kv, id).toBeUndefined();
  }
  // decode-2's rank-1 unit lives on gpu-c, which is still up: its state is still read.
  expect(byId(o, 'decode-2').units?.[1]).toMatchObject({
    hostId: 'gpu-c',
    systemd: { activeState: 'active' },
  });
  // gpu-a's workers and the router are read all the same, on later polls.
  const later = await observation(
    (x) => x.ts > o.ts && byId(x, 'prefill-0').metrics?.ok === true,
    'prefill-0 scraped after gpu-b went away',
  );
  for (const id of ['router', 'prefill-0', 'prefill-1']) {
    const s = byId(later, id);
    expect(s.systemdError, id).toBeUndefined();
    expect(s.metrics?.ok, id).toBe(true);
  }
  expect(byId(later, 'prefill-1').kv?.usedTokens).toBe(fleet.groundTruth().workers[1].kv?.usedTokens);
  const hosts = (await app.handlers.listDeployments({}))[0].hosts;
  expect(hosts?.map((h) => [h.host.id, h.connection.state === 'connected'])).toEqual([
    ['gpu-a', true],
    ['gpu-b', false],
    ['gpu-c', true],
  ]);
}, 60_000);
