// Review's signal table of a fleet recording (format 1.4): each worker's group under the keys the live store
// files it under (`decode.kv_ratio@decode-1`), evaluated from that worker's own target by the one evaluator; per
// role the aggregate under the unscoped keys, made as the live store makes it from each poll (KV tokens summed
// over the workers with the ratio of those sums, up only while every worker is, restarts summed); the only
// router also as the role's own series; and each host's GPUs as `gpu@<host>`.
import type { SignalMissing } from '@shared/contract';
import { serviceId, type Role } from '@shared/domain';
import type { Recording } from '../store/recording/types';
import { MONITOR_FAMILIES, MONITOR_TARGET } from '../store/recording/host-series';
import { workerTarget } from '../store/recording/fleet-targets';
import { evaluateTarget, notExposed as notExposedIn, type KvMeta } from '../signals/evaluate';
import { KV_SOURCE_METRICS } from '../signals/evaluate/kv';
import { timeToFull } from '../signals/evaluate/time-to-full';
import { fleetQuantiles, WindowBucketCursor, type WindowBuckets } from '../signals/fleet-quantile';
import { valueIndexAt, type TargetColumns } from './target-columns';
import type { GroupColumns } from './signal-table';
import type { ReviewData, RoleInfo, SeenSeries } from './review-data';
import { buildGroup, medianStep, recordedCapacity } from './group-columns';
import { gpuGroup } from './host-columns';

type Computed = Pick<ReviewData, 'lastScrapeTs' | 'warnings' | 'roles' | 'kv' | 'notExposed' | 'roleInfo'> & {
  groups: Map<string, GroupColumns>;
};

interface Worker {
  id: string;
  group: GroupColumns;
  stepMs: number;
}

export function buildFleetReviewData(
  rec: Recording,
  targets: ReadonlyMap<string, TargetColumns>,
  seen: Map<string, SeenSeries>,
  opts: { rateWindowMs?: number },
): Computed {
  const services = rec.header.deployment.services;
  const roles: Role[] = [...new Set(services.map((s) => s.role))];
  const groups = new Map<string, GroupColumns>();
  const kv = new Map<string, { source: Int8Array; metas: KvMeta[] }>();
  const notExposed: Record<string, SignalMissing> = {};
  const roleInfo = new Map<string, RoleInfo>();
  const byRole = new Map<Role, Worker[]>();
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
    list.push({ id, group: g.group, stepMs });
    byRole.set(s.role, list);
    // The only router of a fleet is also the role's own series, as live (signals-store.ts).
    if (s.role === 'router' && services.filter((x) => x.role === 'router').length === 1) {
      const own = buildGroup('router', scrapeT, signals, stepMs, rec, undefined, (src) => src === target);
      groups.set('router', own.group);
      if (signals) kv.set('router', { source: own.kvSource, metas: signals.kvMetas });
      roleInfo.set('router', roleInfo.get(target)!);
    }
  }
  const polls = targets.get(MONITOR_TARGET)?.t;
  for (const [role, workers] of byRole) {
    if (role === 'router') continue;
    const group = aggregate(role, workers, polls);
    addQuantiles(group, role, workers, targets, opts.rateWindowMs ?? 60_000);
    groups.set(role, group);
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
  return { lastScrapeTs, warnings: [...rec.warnings], roles, groups, kv, notExposed, roleInfo };
}

/**
 * A role's aggregate at every poll (the monitor's rows; each worker's scrape rows when none were recorded): each
 * worker's values at its last row at or before the poll, a worker not scraped then counting as down.
 */
function aggregate(role: Role, workers: Worker[], polls: Float64Array | undefined): GroupColumns {
  const t = polls?.length ? polls : Float64Array.from(new Set(workers.flatMap((w) => [...w.group.t]))).sort();
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
  const at = workers.map(() => -1);
  for (let i = 0; i < n; i++) {
    let u = 0;
    let c = 0;
    let e = 0;
    let hasE = false;
    let f = 0;
    let top = -Infinity;
    let withKv = 0;
    let r = 0;
    let hasR = false;
    const up = new Map<string, number>();
    workers.forEach((w, j) => {
      const wt = w.group.t;
      while (at[j] + 1 < wt.length && wt[at[j] + 1] <= t[i]) at[j]++;
      const k = at[j];
      const v = (key: string): number =>
        k < 0 ? NaN : (w.group.cols.get(`${role}.${key}@${w.id}`)?.[k] ?? NaN);
      for (const [key] of states) {
        const x = v(key);
        up.set(key, Math.min(up.get(key) ?? 1, x === x ? x : 0));
      }
      const rs = v('restarts');
      if (rs === rs) {
        r += rs;
        hasR = true;
      }
      const scraped = v('metrics_ok') === 1 && t[i] - wt[k] <= 2.5 * w.stepMs;
      const wu = v('kv_used');
      const wc = v('kv_capacity');
      if (!scraped || !(wu === wu) || !(wc === wc)) return;
      withKv++;
      u += wu;
      c += wc;
      const ev = v('kv_evictable');
      if (ev === ev) {
        e += ev;
        hasE = true;
      }
      const fr = v('kv_free');
      f += fr === fr ? fr : Math.max(0, wc - wu - (ev === ev ? ev : 0));
      top = Math.max(top, v('kv_ratio'));
    });
    for (const [key, c2] of states) c2[i] = up.get(key) ?? NaN;
    if (hasR) restarts[i] = r;
    if (withKv === 0) continue;
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
 * The role's quantiles at every row of its aggregate, as the live store writes them at each poll: from the
 * window buckets of the scrape each worker answered that poll with (the monitor's `up` for the worker), summed by
 * bound (fleet-quantile.ts). That scrape is the one at the host poll the round carried (`pdc_polled_at_ms`): a
 * host's poll in flight has its scrape in the file already, but live reads it only with the next round. Files
 * without the poll times take each worker's newest scrape at or before the row; without a monitor, a worker's
 * scrape at the row itself.
 */
function addQuantiles(
  group: GroupColumns,
  role: Role,
  workers: Worker[],
  targets: ReadonlyMap<string, TargetColumns>,
  windowMs: number,
): void {
  const { t } = group;
  const monitor = targets.get(MONITOR_TARGET);
  const byPoll = monitor?.t === t;
  const ofWorker = (family: string, id: string) =>
    monitor?.series(family).find((s) => s.labels.role === role && s.labels.worker === id);
  const scraped = workers.flatMap((w) => {
    const cols = targets.get(workerTarget(role, w.id));
    if (!cols?.rows) return [];
    const up = byPoll ? ofWorker(MONITOR_FAMILIES.up, w.id) : undefined;
    const polledAt = byPoll ? ofWorker(MONITOR_FAMILIES.polledAt, w.id) : undefined;
    return [{ cols, cursor: new WindowBucketCursor(cols, windowMs), up, polledAt, row: -1 }];
  });
  const set = (name: string, i: number, v: number): void => {
    const key = `${role}.${name}`;
    let c = group.cols.get(key);
    if (!c) group.cols.set(key, (c = new Float32Array(t.length).fill(NaN)));
    c[i] = v;
  };
  const at: WindowBuckets[] = [];
  for (let i = 0; i < t.length; i++) {
    at.length = 0;
    for (const w of scraped) {
      const st = w.cols.t;
      let scrapeT = t[i];
      let exact = !w.up;
      if (w.up) {
        const k = valueIndexAt(w.up, i);
        if (k < 0 || w.up.v[k] !== 1) continue;
        const p = w.polledAt ? valueIndexAt(w.polledAt, i) : -1;
        if (p >= 0) {
          scrapeT = w.polledAt!.v[p];
          exact = true;
        }
      }
      while (w.row + 1 < st.length && st[w.row + 1] <= scrapeT) w.row++;
      if (w.row < 0 || (exact && st[w.row] !== scrapeT)) continue;
      at.push(w.cursor.at(w.row));
    }
    if (at.length === 0) continue;
    const q = fleetQuantiles(at);
    for (const name in q) set(name, i, q[name]);
  }
}
