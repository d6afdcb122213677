// Everything review mode shows of one recording, built once when it is opened: the signal table, the KV source
// per row, what the servers never exposed, and the recorded events, unit states, health results and journal.
// Every recording is read as a fleet: a one-host file whose services are named by role is renamed first as the
// app names that deployment today (fleet-of-one.ts). Each worker's group is filed under the keys the live store
// files it under (`decode.kv_ratio@decode-1`), evaluated from that worker's own target by the one evaluator; per
// role the aggregate under the unscoped keys, made as the live store makes it from each poll (the workers' values
// combined by live's combineWorkers, KV tokens summed over the workers with the ratio of those sums, up only while
// every worker is, restarts summed, a role of one worker with its dp ranks' KV); the only router also as the
// role's own series; and each host's GPUs as `gpu@<host>`.
import type { SignalMissing } from '@shared/contract';
import { ROLES, serviceId, type Role } from '@shared/domain';
import type { JournalLine, Recording } from '../recording/types';
import { MONITOR_FAMILIES, MONITOR_TARGET } from '../recording/host-series';
import { parseSource, workerTarget } from '../recording/fleet-targets';
import { fleetOfOne, renameRecording } from '../recording/fleet-of-one';
import { evaluateTarget, notExposed as notExposedIn, type KvMeta } from '../signals/evaluate';
import { KV_SOURCE_METRICS } from '../signals/evaluate/kv';
import { timeToFull } from '../signals/evaluate/time-to-full';
import { WindowBucketCursor, type WindowBuckets } from '../signals/fleet-quantile';
import { combineWorkers } from '../signals/fleet-aggregate';
import { alignTargets, valueIndexAt, type AlignedSeries, type TargetColumns } from './target-columns';
import { SignalTable, type GroupColumns } from './signal-table';
import type { ReviewData, RoleInfo, SeenSeries } from './types';
import {
  buildGroup,
  medianStep,
  recordedCapacity,
  routerWorkerTimeline,
  type RouterWorkerTimeline,
} from './group-columns';
import { gpuGroup } from './host-columns';

export { medianStep };
export type { RouterWorkerTimeline };
export type { ReviewData, RoleInfo, SeenSeries } from './types';

/** A recorded source or target (`decode`, `decode@decode-1`, `decode@decode-2#1`) → its role. */
export function roleOf(source: string): Role | null {
  const r = parseSource(source).group;
  return (ROLES as readonly string[]).includes(r) ? (r as Role) : null;
}

interface Worker {
  id: string;
  group: GroupColumns;
  stepMs: number;
  /** The group's row of each of the worker's scrapes. */
  scrapeRow: Int32Array;
}

/**
 * The review of `rec`. A file whose services are named by role is renamed in place first (its series, unit
 * states, health results and journal), so `rec` reads as the fleet of one afterwards.
 */
export function buildReviewData(
  rec: Recording,
  seenAsRead: Map<string, SeenSeries> = new Map(),
  opts: { rateWindowMs?: number } = {},
): ReviewData {
  const naming = fleetOfOne(rec.header);
  if (naming) renameRecording(rec, naming);
  const seen = naming
    ? new Map([...seenAsRead].map(([target, s]) => [naming.source(target), s]))
    : seenAsRead;
  const targets = alignTargets(rec.series);
  const services = rec.header.deployment.services;
  const roles: Role[] = [...new Set(services.map((s) => s.role))];
  const groups = new Map<string, GroupColumns>();
  const kv = new Map<string, { source: Int8Array; metas: KvMeta[] }>();
  const notExposed: Record<string, SignalMissing> = {};
  const roleInfo = new Map<string, RoleInfo>();
  const byRole = new Map<Role, Worker[]>();
  let routerWorkers: RouterWorkerTimeline | undefined;
  let lastScrapeTs = -Infinity;
  for (const s of services) {
    const id = serviceId(s);
    const target = workerTarget(s.role, id);
    const cols = targets.get(target);
    const signals = cols
      ? evaluateTarget(cols, s.role, {
          ...opts,
          rankTokens: true,
          capacityFromServerInfo: recordedCapacity(targets, s.role, cols.t, id),
        })
      : null;
    const scrapeT = cols?.t ?? new Float64Array(0);
    if (scrapeT.length) lastScrapeTs = Math.max(lastScrapeTs, scrapeT[scrapeT.length - 1]);
    const stepMs = medianStep(scrapeT);
    const g = buildGroup(s.role, scrapeT, signals, stepMs, rec, id, (src) => src === target);
    groups.set(target, g.group);
    // The first router's list is the deployment's, as live (signals-store.ts): the screens show one router's.
    if (s.role === 'router' && id === 'router') routerWorkers = routerWorkerTimeline(scrapeT, signals);
    if (signals && cols) {
      kv.set(target, { source: g.kvSource, metas: signals.kvMetas });
      const missing = notExposedIn(
        s.role,
        (name) => cols.has(name),
        'not in this recording: the server did not expose it while the session was recorded',
      );
      for (const [k, v] of Object.entries(missing)) notExposed[`${k}@${id}`] = v;
      if (s.role !== 'router' && signals.kvMetas.length === 0)
        notExposed[`${s.role}.kv_ratio@${id}`] = {
          expected: KV_SOURCE_METRICS,
          why: 'no KV-cache figure in this recording: the server exposed none of these with a known capacity (and no /server_info capacity was recorded for it)',
        };
      else delete notExposed[`${s.role}.kv_ratio@${id}`];
    }
    const seenOf = seen.get(target);
    roleInfo.set(target, { families: seenOf?.families.size ?? 0, series: seenOf?.series ?? 0, stepMs });
    const list = byRole.get(s.role) ?? [];
    list.push({ id, group: g.group, stepMs, scrapeRow: g.scrapeRow });
    byRole.set(s.role, list);
    // The only router of a fleet is also the role's own series, as live (signals-store.ts).
    if (s.role === 'router' && services.filter((x) => x.role === 'router').length === 1) {
      const own = buildGroup('router', scrapeT, signals, stepMs, rec, undefined, (src) => src === target);
      groups.set('router', own.group);
      if (signals) kv.set('router', { source: own.kvSource, metas: signals.kvMetas });
      roleInfo.set('router', roleInfo.get(target)!);
    }
  }
  for (const [role, workers] of byRole) {
    if (role === 'router') continue;
    groups.set(role, aggregate(role, workers, targets, opts.rateWindowMs ?? 60_000));
    const first = kv.get(workerTarget(role, workers[0].id));
    const ratio = groups.get(role)!.cols.get(`${role}.kv_ratio`)!;
    if (first?.metas.length)
      kv.set(role, {
        source: Int8Array.from(ratio, (x) => (x === x ? 0 : -1)),
        metas: first.metas.slice(0, 1),
      });
    roleInfo.set(role, {
      families: Math.max(...workers.map((w) => roleInfo.get(workerTarget(role, w.id))?.families ?? 0)),
      series: Math.max(...workers.map((w) => roleInfo.get(workerTarget(role, w.id))?.series ?? 0)),
      stepMs: Math.max(...workers.map((w) => w.stepMs)),
    });
  }
  for (const h of rec.header.fleet?.hosts ?? []) {
    const gpu = gpuGroup(targets, h.id);
    if (gpu) groups.set(`gpu@${h.id}`, gpu);
  }
  return reviewDataOf(rec, {
    lastScrapeTs,
    roles,
    groups,
    kv,
    notExposed,
    roleInfo,
    routerWorkers,
  });
}

/** What a review holds: the recording's own span, events and states, and the signals computed from it. */
export function reviewDataOf(
  rec: Recording,
  computed: Pick<
    ReviewData,
    'lastScrapeTs' | 'roles' | 'kv' | 'notExposed' | 'roleInfo' | 'routerWorkers'
  > & {
    groups: Map<string, GroupColumns>;
  },
): ReviewData {
  const { lastScrapeTs, groups, ...signals } = computed;
  return {
    header: rec.header,
    firstTs: rec.firstTs,
    lastTs: rec.lastTs,
    // No scrape at all (a session that never reached a server): the span's end stands in.
    lastScrapeTs: Number.isFinite(lastScrapeTs) ? lastScrapeTs : rec.lastTs,
    closedCleanly: rec.closedCleanly,
    warnings: [...rec.warnings],
    stats: rec.stats,
    table: new SignalTable(groups),
    ...signals,
    events: rec.events,
    unitStates: rec.unitStates,
    health: rec.health,
  };
}

/** Journal lines of a recording, sorted by time (the reader sorts them already). */
export type ReviewJournal = JournalLine[];

/**
 * A role's aggregate at every poll (the monitor's rows; each worker's scrape rows when none were recorded), as the
 * live store writes it from the round (signals-store.ts): from the scrape each worker answered that poll with
 * (carriedScrape), its values combined by live's own combineWorkers (requests and tokens/s summed, gauges by their
 * ranks, the hit rate weighted by prompt tokens/s, quantiles over the summed window buckets) and its KV tokens
 * summed with the ratio of those sums. The states are each worker's last at or before the poll, a worker not
 * recorded by then counting as down.
 */
function aggregate(
  role: Role,
  workers: Worker[],
  targets: ReadonlyMap<string, TargetColumns>,
  windowMs: number,
): GroupColumns {
  const monitor = targets.get(MONITOR_TARGET);
  const t = monitor?.t.length
    ? monitor.t
    : Float64Array.from(new Set(workers.flatMap((w) => [...w.group.t]))).sort();
  const n = t.length;
  const out = new Map<string, Float32Array>();
  const col = (k: string): Float32Array => {
    let c = out.get(`${role}.${k}`);
    if (!c) out.set(`${role}.${k}`, (c = new Float32Array(n).fill(NaN)));
    return c;
  };
  const [used, capacity, ratio, fullest, evictable, free] = [
    'kv_used',
    'kv_capacity',
    'kv_ratio',
    'kv_fullest_rank_ratio',
    'kv_evictable',
    'kv_free',
  ].map(col);
  const states = ['active', 'health_ok', 'metrics_ok'].map((k) => [k, col(k)] as const);
  const restarts = col('restarts');
  const ofWorker = (family: string, id: string) =>
    monitor?.series(family).find((s) => s.labels.role === role && s.labels.worker === id);
  const scraped = workers.flatMap((w) => {
    const cols = targets.get(workerTarget(role, w.id));
    if (!cols?.rows) return [];
    // The worker's columns by signal name (`running`), read into one record per worker at each poll: the row
    // live hands combineWorkers.
    const prefix = `${role}.`.length;
    const suffix = `@${w.id}`;
    const values = [...w.group.cols]
      .filter(([key]) => key.endsWith(suffix))
      .map(([key, c]) => [key.slice(prefix, -suffix.length), c] as const);
    const record: Record<string, number> = Object.fromEntries(values.map(([name]) => [name, NaN]));
    const carried = carriedScrape(
      cols,
      w.stepMs,
      ofWorker(MONITOR_FAMILIES.up, w.id),
      ofWorker(MONITOR_FAMILIES.polledAt, w.id),
    );
    return [{ w, cursor: new WindowBucketCursor(cols, windowMs), carried, values, record }];
  });
  const oneWorkerRanks =
    workers.length === 1 && scraped.length === 1
      ? scraped[0].values
          .filter(([name]) => /^kv_rank\..+\.ratio$/.test(name))
          .map(([name]) => [name, col(name)] as const)
      : [];
  const rows: Record<string, number>[] = [];
  const buckets: WindowBuckets[] = [];
  /** combineWorkers' figures by name: the role's columns without building their keys at every poll. */
  const byName = new Map<string, Float32Array>();
  // Each worker's state columns, looked up once (the loop below runs per poll and worker).
  const stateOf = workers.map((w) => {
    const of = (k: string) => w.group.cols.get(`${role}.${k}@${w.id}`);
    return { states: states.map(([k]) => of(k)), restarts: of('restarts') };
  });
  const up = new Float64Array(states.length);
  const at = workers.map(() => -1);
  for (let i = 0; i < n; i++) {
    up.fill(1);
    let r = 0;
    let hasR = false;
    for (let j = 0; j < workers.length; j++) {
      const wt = workers[j].group.t;
      while (at[j] + 1 < wt.length && wt[at[j] + 1] <= t[i]) at[j]++;
      const k = at[j];
      const own = stateOf[j];
      for (let s = 0; s < up.length; s++) {
        const x = k < 0 ? NaN : (own.states[s]?.[k] ?? NaN);
        up[s] = Math.min(up[s], x === x ? x : 0);
      }
      const rs = k < 0 ? NaN : (own.restarts?.[k] ?? NaN);
      if (rs === rs) {
        r += rs;
        hasR = true;
      }
    }
    for (let s = 0; s < up.length; s++) states[s][1][i] = up[s];
    if (hasR) restarts[i] = r;
    rows.length = 0;
    buckets.length = 0;
    for (const x of scraped) {
      const k = x.carried(t[i], i);
      if (k < 0) continue;
      const g = x.w.scrapeRow[k];
      for (const [name, c] of x.values) x.record[name] = c[g];
      rows.push(x.record);
      buckets.push(x.cursor.at(k));
    }
    const combined = combineWorkers(rows, buckets);
    for (const name in combined) {
      let c = byName.get(name);
      if (!c) byName.set(name, (c = col(name)));
      c[i] = combined[name];
    }
    // KV from the workers whose scrape has it, overwriting combineWorkers' figures for these keys as live does.
    let u = 0;
    let c = 0;
    let e = 0;
    let hasE = false;
    let f = 0;
    let top = -Infinity;
    let withKv = 0;
    for (const row of rows) {
      const wu = row.kv_used;
      const wc = row.kv_capacity;
      if (!(wu === wu) || !(wc === wc)) continue;
      withKv++;
      u += wu;
      c += wc;
      const ev = row.kv_evictable;
      if (ev === ev) {
        e += ev;
        hasE = true;
      }
      const fr = row.kv_free;
      f += fr === fr ? fr : Math.max(0, wc - wu - (ev === ev ? ev : 0));
      const wr = row.kv_fullest_rank_ratio;
      top = Math.max(top, wr === wr ? wr : row.kv_ratio);
    }
    if (withKv === 0) continue;
    // A role of one worker carries that worker's dp ranks under its own keys, as live.
    for (const [name, c] of oneWorkerRanks) c[i] = rows[0][name];
    used[i] = u;
    capacity[i] = c;
    ratio[i] = c > 0 ? u / c : NaN;
    fullest[i] = top;
    evictable[i] = hasE ? e : NaN;
    free[i] = f;
  }
  col('kv_ttf_s').set(timeToFull(t, ratio));
  return { t, cols: out };
}

/**
 * Which scrape of a worker (its row in the target, or -1) the role's row at time `ts`, index `i`, carried, asked
 * in ascending order. With the monitor's rows: none when the worker's scrape failed that poll (`up` 0), else the
 * one at the host poll the round carried (`pdc_polled_at_ms`) — a host's poll in flight has its scrape in the file
 * already, but live reads it only with the next round; files without the poll times take the newest scrape at or
 * before the poll. Without a monitor, the newest scrape at or before the row unless it is older than 2.5 steps.
 */
function carriedScrape(
  cols: TargetColumns,
  stepMs: number,
  up: AlignedSeries | undefined,
  polledAt: AlignedSeries | undefined,
): (ts: number, i: number) => number {
  const st = cols.t;
  let row = -1;
  return (ts, i) => {
    let scrapeT = ts;
    let exact = false;
    if (up) {
      const k = valueIndexAt(up, i);
      if (k < 0 || up.v[k] !== 1) return -1;
      const p = polledAt ? valueIndexAt(polledAt, i) : -1;
      if (p >= 0) {
        scrapeT = polledAt!.v[p];
        exact = true;
      }
    }
    while (row + 1 < st.length && st[row + 1] <= scrapeT) row++;
    if (row < 0 || (exact && st[row] !== scrapeT)) return -1;
    return up || ts - st[row] <= 2.5 * stepMs ? row : -1;
  };
}
