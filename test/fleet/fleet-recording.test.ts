// The demo fleet recorded by the running app (createApp, real SSH to the fleet's three ssh2 servers) and opened
// in review: the file holds every host (format 1.4), the review lists the hosts and workers as live did, each
// worker's KV series equals what the live store had, the role total is there, the journal of workers on every
// host is in it, GPUs per host, and a restart is refused with the read-only message. The Python reference
// decoder of docs/recording-format.md reads the same file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import type { DeploymentSummary, Observation } from '../../src/shared/domain';
import type { ScopedKey } from '../../src/shared/signals/scoped-key';
import type { RouterWorkerState, ScrapeFamilies, SeriesColumn } from '../../src/shared/contract';
import { readHeader } from '../../src/main/core/recording';

const DECODES = ['decode-0', 'decode-1', 'decode-2'];
let app: App;
let dir: string;
let live: DeploymentSummary;
let sessionId: string;
let liveKv: SeriesColumn[];
/** The decode role's TTFT and e2e p50/p99 as the live store had them (its workers' merged buckets). */
let liveQ: SeriesColumn[];
/** The router's own list of its workers as the live dashboard had it last. */
let liveRouterWorkers: RouterWorkerState[] | undefined;
let liveFamilies: Record<string, ScrapeFamilies> | undefined;
const ROLE_QUANTILES = [
  'decode.ttft_p50_s',
  'decode.ttft_p99_s',
  'decode.e2e_p50_s',
  'decode.e2e_p99_s',
] as ScopedKey[];

function observations(n: number, ms = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = 0;
    const timer = setTimeout(
      () => reject(new Error(`fewer than ${n} fleet observations with KV in ${ms} ms`)),
      ms,
    );
    const on = (o: Observation): void => {
      if (o.deploymentId !== live.deployment.id) return;
      if (!DECODES.every((id) => o.services.find((s) => s.id === id)?.kv)) return;
      if (++seen < n) return;
      clearTimeout(timer);
      app.core.off('observation', on);
      resolve();
    };
    app.core.on('observation', on);
  });
}

const values = (c: SeriesColumn): number[] => c.v.filter((x): x is number => x !== null);
const points = (c: SeriesColumn): [number, number][] =>
  c.t.flatMap((t, k) => (c.v[k] === null ? [] : [[t, c.v[k]] as [number, number]]));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pd-fleet-recording-'));
  app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir, record: true, demoFleetSeed: 11 });
  live = await app.handlers.openDemo({ topology: 'fleet' });
  await observations(12);
  const status = await app.handlers.getRecordingStatus({});
  sessionId = status.active.find((a) => a.deploymentId === live.deployment.id)!.sessionId!;
  // What the live store had, read before the deployment closes (its store goes with it).
  liveKv = (
    await app.handlers.getSeries({
      deploymentId: live.deployment.id,
      keys: DECODES.map((id) => `decode.kv_ratio@${id}` as ScopedKey),
      maxPoints: 100_000,
    })
  ).series;
  liveQ = (
    await app.handlers.getSeries({
      deploymentId: live.deployment.id,
      keys: ROLE_QUANTILES,
      maxPoints: 100_000,
    })
  ).series;
  const liveSnapshot = await app.handlers.getDashboard({ deploymentId: live.deployment.id });
  liveRouterWorkers = liveSnapshot.routerWorkers;
  liveFamilies = liveSnapshot.families;
  await app.handlers.closeDeployment({ deploymentId: live.deployment.id });
  for (let i = 0; i < 100; i++) {
    const s = (await app.handlers.listSessions({})).find((x) => x.id === sessionId);
    if (s?.state === 'complete') break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);

afterAll(async () => {
  await app?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("keeps each worker's metric families apart live (workers of a role may run different versions)", () => {
  expect(Object.keys(liveFamilies ?? {}).sort()).toEqual(
    [...DECODES, 'prefill-0', 'prefill-1', 'router'].sort(),
  );
  for (const [id, f] of Object.entries(liveFamilies ?? {})) expect(f.used, id).toBeGreaterThan(3);
});

it('records the whole fleet: format 1.4 with every host, the workers and their units in the header', async () => {
  const h = await readHeader(join(dir, 'recordings', `${sessionId}.pdrec.jsonl.gz`));
  expect(h.minorVersion).toBe(4);
  expect(h.fleet?.hosts.map((x) => x.id)).toEqual(['gpu-a', 'gpu-b', 'gpu-c']);
  expect(h.fleet?.fleet.workers.map((w) => w.url).sort()).toEqual(
    live.fleet!.workers.map((w) => w.url).sort(),
  );
  expect(h.fleet?.links.map((l) => l.connection.state)).toEqual(['connected', 'connected', 'connected']);
  const d2 = h.deployment.services.find((s) => s.id === 'decode-2')!;
  expect(d2.units?.map((u) => `${u.hostId}#${u.nodeRank}`)).toEqual(['gpu-b#0', 'gpu-c#1']);
});

it('opens in review as the live view showed it: hosts, workers, per-worker KV equal to live, the role total', async () => {
  const opened = await app.handlers.openSessionReview({ id: sessionId });
  const s = opened.summary;
  const rid = s.deployment.id;
  expect(s.hosts?.map((h) => h.host.id)).toEqual(['gpu-a', 'gpu-b', 'gpu-c']);
  expect(s.fleet?.workers).toHaveLength(5);
  expect(s.deployment.services.map((x) => x.id)).toEqual(live.deployment.services.map((x) => x.id));
  expect(s.latest?.services.map((x) => `${x.id}@${x.hostId}`)).toEqual(
    live.deployment.services.map((x) => `${x.id}@${x.hostId}`),
  );
  // A multi-node worker's units, each with its recorded state.
  const d2 = s.latest!.services.find((x) => x.id === 'decode-2')!;
  expect(d2.units?.map((u) => [u.hostId, u.nodeRank, u.systemd?.activeState])).toEqual([
    ['gpu-b', 0, 'active'],
    ['gpu-c', 1, 'active'],
  ]);
  // Every scrape row, not the overview's (the request waits for the full read).
  const keys = DECODES.map((id) => `decode.kv_ratio@${id}` as ScopedKey);
  const rev = (await app.handlers.getSeries({ deploymentId: rid, keys, maxPoints: 100_000 })).series;
  for (const [i, id] of DECODES.entries()) {
    // The live store writes a worker's KV with the poll that carried it, from its host's newest observation (on a
    // loaded machine a round may carry one twice, or skip a scrape); the recording evaluates it at every scrape.
    // So every live figure is in the review, exactly (float32, as both keep them), in the same order, at its
    // scrape's time — at or before the poll that brought it live.
    const got = points(rev[i]);
    const want = points(liveKv[i]);
    expect(want.length, `live ${id}`).toBeGreaterThan(5);
    let k = 0;
    for (const [t, v] of want) {
      if (k > 0 && got[k - 1][1] === v) continue;
      while (k < got.length && got[k][1] !== v) k++;
      expect(k, `${id}: live value ${v} at ${t} in review (in order)`).toBeLessThan(got.length);
      expect(got[k][0]).toBeLessThanOrEqual(t);
      k++;
    }
    expect(got.length).toBeGreaterThanOrEqual(new Set(want.map((p) => p[1])).size);
  }
  expect(new Set(values(rev[0])).size + new Set(values(rev[1])).size).toBeGreaterThan(2);
  // The role total: KV tokens summed over the workers, with the ratio of the sums.
  const total = await app.handlers.getSeries({
    deploymentId: rid,
    keys: [
      'decode.kv_used',
      'decode.kv_capacity',
      ...DECODES.map((id) => `decode.kv_capacity@${id}` as ScopedKey),
    ],
    maxPoints: 100_000,
  });
  const cap = values(total.series[1]).at(-1)!;
  const caps = total.series.slice(2).map((c) => values(c).at(-1)!);
  expect(cap).toBe(Math.fround(caps.reduce((a, b) => a + b, 0)));
  // The dashboard at the cursor: per-worker values, GPUs of every host, the verdict from the workers.
  const snap = await app.handlers.getDashboard({ deploymentId: rid });
  for (const id of DECODES) expect(snap.values[`decode.kv_ratio@${id}`]).toEqual(expect.any(Number));
  for (const host of ['gpu-a', 'gpu-b', 'gpu-c']) {
    expect(snap.values[`gpu.0.util@${host}`], `GPU 0 of ${host}`).toEqual(expect.any(Number));
    // Each host's GPU table at the cursor, as live shows it, not the origin's only.
    expect(snap.gpu[host]?.gpus.length, `GPU table of ${host}`).toBeGreaterThan(0);
  }
  // The router's own list of its workers (its worker page's table, the verdict's "unhealthy at the router"),
  // as live had it: every worker by URL with its role and health.
  const listed = (ws: RouterWorkerState[] | undefined): string[] =>
    (ws ?? []).map((w) => `${w.url} ${w.role ?? '?'} ${w.healthy}`);
  expect(listed(liveRouterWorkers)).toHaveLength(5);
  expect(listed(snap.routerWorkers)).toEqual(listed(liveRouterWorkers));
});

it("shows the role's latency quantiles at every poll live did, from the workers' merged buckets", async () => {
  const rid = (await app.handlers.openSessionReview({ id: sessionId })).summary.deployment.id;
  const rev = (await app.handlers.getSeries({ deploymentId: rid, keys: ROLE_QUANTILES, maxPoints: 100_000 }))
    .series;
  for (const [i, key] of ROLE_QUANTILES.entries()) {
    const want = points(liveQ[i]);
    expect(want.length, `live ${key}`).toBeGreaterThan(5);
    const got = new Map(points(rev[i]));
    // Each poll's figure from the scrapes the round carried (the recorded poll times), so the review has one
    // wherever live had one. They are equal only where no host's next poll was in flight: live leaves out a worker
    // whose next scrape reached the store before the round did (its window moved on), which on this loaded
    // two-core machine is most rounds; test/review/fleet-quantiles.test.ts compares the figures exactly.
    for (const [t] of want) expect(got.get(t), `${key} at ${t}`).toEqual(expect.any(Number));
  }
});

it('holds the journal of every worker on every host, and refuses restarts as a recording', async () => {
  const rid = (await app.handlers.openSessionReview({ id: sessionId })).summary.deployment.id;
  const r = await app.handlers.getDashboard({ deploymentId: rid });
  const around = await app.handlers.journalAround({ deploymentId: rid, ts: r.ts, spanMs: 600_000 });
  const units = new Set(around.lines.map((l) => l.unit));
  for (const u of ['sglang-prefill-0.service', 'sglang-decode-0.service', 'sglang-decode-1.service'])
    expect(units, [...units].join(', ')).toContain(u);
  const decode = await app.handlers.journalAround({
    deploymentId: rid,
    ts: r.ts,
    spanMs: 600_000,
    role: 'decode',
  });
  expect(decode.lines.length).toBeGreaterThan(0);
  expect(decode.lines.every((l) => (l.unit ?? '').startsWith('sglang-decode-'))).toBe(true);
  await expect(
    app.handlers.planRestart({ deploymentId: rid, role: 'decode' } as never),
  ).rejects.toMatchObject({ code: 'review-read-only' });
});

it("a worker's recorded journal is that worker's lines only (every node of it), labelled by host and node rank", async () => {
  const rid = (await app.handlers.openSessionReview({ id: sessionId })).summary.deployment.id;
  const r = await app.handlers.getDashboard({ deploymentId: rid });
  const around = await app.handlers.journalAround({
    deploymentId: rid,
    ts: r.ts,
    spanMs: 600_000,
    role: 'decode',
    worker: 'decode-1',
  });
  expect(around.lines.length).toBeGreaterThan(0);
  // The role's other workers share the role: filtered by role, decode-0's and decode-2's lines came along.
  expect(new Set(around.lines.map((l) => l.unit))).toEqual(new Set(['sglang-decode-1.service']));
  expect(around.lines.every((l) => l.host === 'gpu-b' && l.nodeRank === undefined)).toBe(true);
  const follow = await app.handlers.followJournal({
    deploymentId: rid,
    role: 'decode',
    worker: 'decode-2',
    lines: 500,
  });
  expect(new Set(follow.lines.map((l) => l.unit))).toEqual(new Set(['sglang-decode-2.service']));
  const nodes = new Set(follow.lines.map((l) => `${l.host}#${l.nodeRank}`));
  expect(nodes.has('gpu-b#0'), [...nodes].join(' ')).toBe(true);
  // Node rank 1 (gpu-c) logs little once started, so a short session may hold none of its lines; any it holds
  // are labelled as that node.
  expect(
    [...nodes].every((n) => n === 'gpu-b#0' || n === 'gpu-c#1'),
    [...nodes].join(' '),
  ).toBe(true);
});

it('is read by the reference Python decoder of docs/recording-format.md (full stream and 1.4 signal rows)', () => {
  const doc = readFileSync(join(__dirname, '../../docs/recording-format.md'), 'utf8');
  const code = /<!-- reference-decoder -->\n```python\n([\s\S]*?)```/.exec(doc)![1];
  const py = join(dir, 'decode.py');
  writeFileSync(py, code);
  const file = join(dir, 'recordings', `${sessionId}.pdrec.jsonl.gz`);
  const full = execFileSync('python3', [py, file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const targets = new Set(
    full
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as [string])[0]),
  );
  for (const t of ['decode@decode-0', 'decode@decode-2', 'prefill@prefill-1', 'router@router', 'gpu@gpu-c'])
    expect(targets, [...targets].join(', ')).toContain(t);
  const sig = execFileSync('python3', [py, '--signals', file], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const groups = new Set(
    sig
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as [string])[0]),
  );
  for (const g of ['decode@decode-1', 'decode', 'gpu@gpu-b'])
    expect(groups, [...groups].join(', ')).toContain(g);
});
