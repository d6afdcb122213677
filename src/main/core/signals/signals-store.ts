// Per-deployment signal history, written: every scrape and observation becomes one row of named values in
// bounded ring series (24 h at 1 s by default). It is filled live (core hooks 'scrape' + 'observed') and read
// through SignalHistory (signal-history.ts), the reader a recording's table is too, so charts, latest values and
// growth are answered by one class live and in review; snapshots of both go through one builder
// (signals/dashboard-snapshot.ts).
import type {
  GpuReading,
  RouterWorkerState,
  SeriesQuery,
  SeriesResult,
  SignalMissing,
} from '@shared/contract';
import {
  serviceId,
  type KvUsage,
  type Observation,
  type Role,
  type ServiceObservation,
} from '@shared/domain';
import type { Exposition } from '../probes/exposition/types';
import { combineWorkers, WORKER_INPUTS } from './fleet-aggregate';
import { WindowBucketCursor, type WindowBuckets } from './fleet-quantile';
import { ColumnRing } from './column-ring';
import { typicalGapMs } from './decimate';
import { groupOf, SignalHistory } from './signal-history';
import { evaluateTarget, isSignalInput, notExposed } from './evaluate';
import { compareDpRanks } from './evaluate/kv';
import { expectedMetrics } from './catalog';
import { LiveColumns } from './live-columns';
import { f64, withScratchArrays } from './scratch-arrays';
import { timeToFull } from './evaluate/time-to-full';
import { workersAt } from './evaluate/router-workers';
import { splitScopedKey } from '@shared/signals/scoped-key';

export const DAY_AT_1S = 86_400;

const ABSENT_LIVE = 'no data yet: not scraped so far, or not exposed by this server version';

/** What a deployment never opened answers: no rows. */
const NO_HISTORY = new SignalHistory(new Map(), { gapMs: typicalGapMs, absentWhy: ABSENT_LIVE });

export interface KvMeta {
  source: string;
  sourceMetrics: string[];
  caveat?: string;
}

interface DeploymentSignals {
  roles: Role[];
  rings: Map<string, ColumnRing>;
  /** The rings, read. */
  history: SignalHistory;
  /** The last rate window of each target's scrapes (a role, or in a fleet `role@worker`), for the evaluator. */
  live: Map<string, LiveColumns>;
  /**
   * The family names of each target's live columns when its "not exposed" list was last worked out, and the
   * columns' series generation then (unchanged: the same names, not joined again).
   */
  familiesSeen: Map<string, { generation: number; families: string }>;
  /**
   * A fleet worker's window buckets (`decode@decode-1`), for its role's exact quantiles: the cursor holding them
   * at its newest scrape, that scrape's ts, and the live columns' series generation the cursor was built for.
   */
  windowBuckets: Map<string, { ts: number; cursor: WindowBucketCursor; generation: number }>;
  notExposed: Record<string, SignalMissing>;
  /**
   * The KV source of each worker's figures (`decode@decode-1`), which may differ between workers of different
   * versions, and of each role's (its first worker's with KV at the last poll).
   */
  kvMeta: Map<string, KvMeta>;
  gpuIndices: Set<number>;
  /** dp ranks seen per worker (`decode@decode-1`), and per role where the role's own keys carry them. */
  kvRanks: Map<string, Set<string>>;
  /** The workers of the router's newest scrape. */
  routerWorkers?: RouterWorkerState[];
}

export interface SignalsStoreOptions {
  /** Rows per group (role or GPU); default 86,400 = 24 h at 1 s. */
  capacity?: number;
  /** Window of rates and quantiles (ms); default 60 s. */
  rateWindowMs?: number;
}

export class SignalsStore {
  private readonly deployments = new Map<string, DeploymentSignals>();
  readonly capacity: number;
  readonly rateWindowMs: number;

  constructor(opts: SignalsStoreOptions = {}) {
    this.capacity = opts.capacity ?? DAY_AT_1S;
    this.rateWindowMs = opts.rateWindowMs ?? 60_000;
  }

  /** Starts (or keeps) the history of a deployment with these roles. */
  open(deploymentId: string, roles: readonly Role[]): void {
    if (this.deployments.has(deploymentId)) return;
    const rings = new Map<string, ColumnRing>();
    this.deployments.set(deploymentId, {
      roles: [...roles],
      rings,
      history: new SignalHistory(rings, { gapMs: typicalGapMs, absentWhy: ABSENT_LIVE }),
      live: new Map(),
      familiesSeen: new Map(),
      windowBuckets: new Map(),
      notExposed: {},
      kvMeta: new Map(),
      gpuIndices: new Set(),
      kvRanks: new Map(),
    });
  }

  close(deploymentId: string): void {
    this.deployments.delete(deploymentId);
  }

  has(deploymentId: string): boolean {
    return this.deployments.has(deploymentId);
  }

  roles(deploymentId: string): Role[] {
    return [...(this.deployments.get(deploymentId)?.roles ?? [])];
  }

  /**
   * dp ranks with their own KV series, per worker (`decode@decode-1`) and per role where the role's own keys
   * carry them (a role of one worker); none for single-rank servers.
   */
  kvRanks(deploymentId: string): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [group, ranks] of this.deployments.get(deploymentId)?.kvRanks ?? [])
      out[group] = [...ranks].sort(compareDpRanks);
    return out;
  }

  gpuIndices(deploymentId: string): number[] {
    return [...(this.deployments.get(deploymentId)?.gpuIndices ?? [])].sort((a, b) => a - b);
  }

  /**
   * One parsed /metrics scrape of `role` taken at `ts`: appended to the role's live columns, and the newest row
   * of every signal evaluated by the one evaluator (the code review runs over a whole recording). KV usage is
   * not among them: the monitor evaluates it once per scrape, with /server_info's capacity where the scrape
   * lacks one, and it arrives with the observation of the same poll (ingestObservation).
   */
  ingest(
    deploymentId: string,
    ts: number,
    role: Role,
    exp: Exposition,
    /** A fleet's worker (or router) id: its values go to its own keys (`decode.kv_ratio@decode-1`). */
    scope?: string,
  ): Record<string, number | null> {
    const d = this.need(deploymentId);
    const target = scopedGroup(role, scope);
    let live = d.live.get(target);
    if (!live)
      d.live.set(target, (live = new LiveColumns({ keepMs: this.rateWindowMs, track: isSignalInput })));
    if (!live.append(ts, exp)) return {};
    const cols = live.columns(role);
    const last = cols.rows - 1;
    const values: Record<string, number | null> = {};
    // Only the newest row of each column is kept, copied out here: the columns themselves are scratch arrays
    // the next scrape's evaluation uses again.
    withScratchArrays(() => {
      const sig = evaluateTarget(cols, role, { rateWindowMs: this.rateWindowMs, from: last, kv: false });
      sig.values.forEach((col, key) => {
        const v = col[last];
        values[key] = v === v ? v : null;
      });
      // In a fleet the first router's list is the deployment's (the screens show one router's workers).
      if (role === 'router' && (scope === undefined || scope === 'router'))
        d.routerWorkers = sig.workers ? workersAt(sig.workers, last - (sig.workersFrom ?? 0)) : [];
    });
    if (scope !== undefined && role !== 'router') {
      // While no series came or went the worker's cursor is rewound onto the new columns, not built again.
      const prev = d.windowBuckets.get(target);
      const generation = live.seriesGeneration;
      const cursor =
        prev?.generation === generation
          ? prev.cursor.rewind(cols)
          : new WindowBucketCursor(cols, this.rateWindowMs);
      cursor.at(last);
      d.windowBuckets.set(target, { ts, cursor, generation });
    }
    // Every family a signal reads is kept in the live columns: what they lack, the server did not serve for a
    // whole rate window.
    const seen = d.familiesSeen.get(target);
    const families = seen?.generation === live.seriesGeneration ? seen.families : cols.names().join('\n');
    if (seen?.generation !== live.seriesGeneration)
      d.familiesSeen.set(target, { generation: live.seriesGeneration, families });
    if (seen?.families !== families) {
      const kvKey = scoped(`${role}.kv_ratio`, scope);
      for (const key of Object.keys(d.notExposed))
        if (key.startsWith(`${role}.`) && key !== kvKey && splitScopedKey(key).scope === scope)
          delete d.notExposed[key];
      const missing = notExposed(role, (name) => cols.has(name), 'not in this server’s /metrics');
      delete missing[`${role}.kv_ratio`];
      for (const [k, v] of Object.entries(missing)) d.notExposed[scoped(k, scope)] = v;
    }
    const out = this.write(d, target, ts, prefixed(role, values, scope));
    // The only router of a fleet is also the role's own series, as in a one-host deployment.
    if (role === 'router' && scope === 'router')
      Object.assign(out, this.write(d, role, ts, prefixed(role, values)));
    return out;
  }

  /**
   * The windowed signals of every scraped target (rates, shares, quantiles) over [since, its newest scrape]
   * instead of the standard window: after an outage, the figures of the time since the recovery only, which the
   * standard window still mixes with the outage's (a router's 5xx share while a worker was down). Keys as the
   * live push's: a fleet worker's under its scope, the role's under the bare key for a one-host pair and the
   * fleet's router. A window shorter than two scrapes reads null, as a window without two points does.
   */
  windowedSince(deploymentId: string, since: number): Record<string, number | null> {
    const d = this.deployments.get(deploymentId);
    const out: Record<string, number | null> = {};
    if (!d) return out;
    for (const [target, live] of d.live) {
      const at = target.indexOf('@');
      const role = (at < 0 ? target : target.slice(0, at)) as Role;
      const scope = at < 0 ? undefined : target.slice(at + 1);
      withScratchArrays(() => {
        const cols = live.columns(role);
        const last = cols.rows - 1;
        if (last < 0) return;
        // The live columns keep one standard window: a recovery longer ago than that is outside it anyway.
        const windowMs = Math.min(this.rateWindowMs, cols.t[last] - since);
        if (!(windowMs >= 0)) return;
        const sig = evaluateTarget(cols, role, { rateWindowMs: windowMs, from: last, kv: false });
        sig.values.forEach((col, key) => {
          const v = col[last];
          out[scoped(`${role}.${key}`, scope)] = v === v ? v : null;
          if (role === 'router' && scope === 'router') out[`${role}.${key}`] = v === v ? v : null;
        });
      });
    }
    return out;
  }

  /**
   * The monitor's view of one round: systemd, health, scrape outcome and KV (with /server_info's capacity) of
   * each worker under its own keys (`decode.kv_used@decode-1`), and per role the aggregate under the unscoped
   * keys — KV tokens summed over the role's workers with the ratio of those sums, `active`/`health_ok`/
   * `metrics_ok` 1 only while every worker is, restarts summed, the slowest scrape — so alerts, the verdict and
   * the role charts read a role as one. A role of one worker also carries its dp ranks' KV under the role's keys:
   * they are that worker's.
   */
  ingestObservation(obs: Observation): Record<string, number | null> {
    const d = this.need(obs.deploymentId);
    const merged: Record<string, number | null> = {};
    const roles = new Map<Role, ServiceObservation[]>();
    const scraped = new Map<Role, Record<string, number>[]>();
    const buckets = new Map<Role, WindowBuckets[]>();
    for (const s of obs.services) {
      const id = serviceId(s);
      const group = scopedGroup(s.role, id);
      // A worker's row is its host's poll, where its scrape was written (ingest at that poll's ts): the merged
      // observation's ts is the newest host's, and writing there would open a row holding no scrape value.
      const ts = s.polledAt ?? obs.ts;
      const values = serviceValues(s);
      if (s.kv) {
        Object.assign(values, this.kvValues(d, group, s.kv));
        d.kvMeta.set(group, { source: s.kv.source, sourceMetrics: s.kv.sourceMetrics, caveat: s.kv.caveat });
        delete d.notExposed[scoped(`${s.role}.kv_ratio`, id)];
      } else if (s.kvMissing) {
        d.notExposed[scoped(`${s.role}.kv_ratio`, id)] = {
          expected: s.kvMissing.expected,
          why: s.kvMissing.reason,
        };
      }
      if (s.role !== 'router' && (!s.metrics || !s.metrics.ok)) values.kv_ratio ??= null;
      Object.assign(merged, this.write(d, group, ts, prefixed(s.role, values, id)));
      if (s.role !== 'router') {
        const ttf = this.timeToFull(d, group, scoped(`${s.role}.kv_ratio`, id), ts);
        Object.assign(merged, this.write(d, group, ts, { [scoped(`${s.role}.kv_ttf_s`, id)]: ttf }));
      }
      const list = roles.get(s.role) ?? [];
      list.push(s);
      roles.set(s.role, list);
      // A worker whose probe missed this round's budget is not in the role's figures, though its late scrape
      // may have reached the store by now: the round says its metrics were not read, and review, which reads
      // the round's record (`up`), leaves it out too.
      if (s.role !== 'router' && s.metrics?.ok) {
        const rows = scraped.get(s.role) ?? [];
        rows.push(rowAt(d.rings.get(group), ts, `${s.role}.`.length));
        scraped.set(s.role, rows);
        const b = d.windowBuckets.get(group);
        if (b?.ts === ts) {
          const mine = buckets.get(s.role);
          if (mine) mine.push(b.cursor.buckets);
          else buckets.set(s.role, [b.cursor.buckets]);
        }
      }
    }
    for (const [role, list] of roles) {
      // The only router is written whole by its scrape and here: its aggregate is itself.
      const values = aggregateValues(list);
      if (role !== 'router') {
        Object.assign(values, combineWorkers(scraped.get(role) ?? [], buckets.get(role) ?? []));
        const withKv = list.filter((s) => s.kv);
        if (withKv.length > 0) {
          const used = sum(withKv.map((s) => s.kv!.usedTokens));
          const capacity = sum(withKv.map((s) => s.kv!.capacityTokens));
          values.kv_used = used;
          values.kv_capacity = capacity;
          values.kv_ratio = capacity > 0 ? used / capacity : null;
          values.kv_fullest_rank_ratio = Math.max(
            ...withKv.map((s) => s.kv!.fullestRank?.ratio ?? s.kv!.ratio),
          );
          values.kv_evictable = withKv.some((s) => s.kv!.evictableTokens !== undefined)
            ? sum(withKv.map((s) => s.kv!.evictableTokens ?? 0))
            : null;
          values.kv_free = sum(
            withKv.map(
              (s) =>
                s.kv!.availableTokens ??
                Math.max(0, s.kv!.capacityTokens - s.kv!.usedTokens - (s.kv!.evictableTokens ?? 0)),
            ),
          );
          d.kvMeta.set(role, d.kvMeta.get(scopedGroup(role, serviceId(withKv[0])))!);
          if (list.length === 1)
            for (const r of withKv[0].kv!.ranks ?? []) {
              values[`kv_rank.${r.rank}.ratio`] = r.ratio;
              this.seeRank(d, role, r.rank);
            }
          delete d.notExposed[`${role}.kv_ratio`];
        } else values.kv_ratio = null;
      }
      // The router's role series is also written by its own scrape (ingest, scope 'router'): the same row.
      const router = role === 'router' ? list.find((s) => serviceId(s) === 'router') : undefined;
      Object.assign(merged, this.write(d, role, router?.polledAt ?? obs.ts, prefixed(role, values)));
      if (role !== 'router') {
        const ttf = this.timeToFull(d, role, `${role}.kv_ratio`, obs.ts);
        Object.assign(merged, this.write(d, role, obs.ts, { [`${role}.kv_ttf_s`]: ttf }));
      }
    }
    return merged;
  }

  /** One nvidia-smi reading of a host's GPUs; in a fleet `scope` is the host (`gpu.3.util@gpu-b`). */
  ingestGpu(
    deploymentId: string,
    ts: number,
    gpus: readonly GpuReading[],
    scope?: string,
  ): Record<string, number | null> {
    const d = this.need(deploymentId);
    const values: Record<string, number | null> = {};
    for (const g of gpus) {
      d.gpuIndices.add(g.index);
      const p = `gpu.${g.index}`;
      values[scoped(`${p}.util`, scope)] = g.utilPct;
      values[scoped(`${p}.mem_used`, scope)] = g.memUsedMiB === null ? null : g.memUsedMiB * 1024 * 1024;
      values[scoped(`${p}.mem_total`, scope)] = g.memTotalMiB === null ? null : g.memTotalMiB * 1024 * 1024;
      values[scoped(`${p}.temp`, scope)] = g.tempC;
      values[scoped(`${p}.power`, scope)] = g.powerW;
    }
    return this.write(d, scopedGroup('gpu', scope), ts, values);
  }

  /** Writes prepared values into a group's ring (bulk history fill for benchmarks and replays). */
  writeRow(deploymentId: string, group: string, ts: number, values: Record<string, number | null>): boolean {
    const d = this.need(deploymentId);
    if (group === 'gpu')
      for (const k of Object.keys(values)) {
        const m = /^gpu\.(\d+)\./.exec(k);
        if (m) d.gpuIndices.add(Number(m[1]));
      }
    return this.ring(d, group).set(ts, values);
  }

  /** The workers the router's newest scrape listed (undefined before its first scrape with worker gauges). */
  routerWorkers(deploymentId: string): RouterWorkerState[] | undefined {
    return this.deployments.get(deploymentId)?.routerWorkers;
  }

  /** The KV source of a role's figures, or of one worker's (`decode@decode-1`). */
  kvMeta(deploymentId: string, group: string): KvMeta | undefined {
    return this.deployments.get(deploymentId)?.kvMeta.get(group);
  }

  notExposed(deploymentId: string): Record<string, SignalMissing> {
    return { ...(this.deployments.get(deploymentId)?.notExposed ?? {}) };
  }

  /** Values of the latest row of every group (null = gap or no value in that row). */
  latest(deploymentId: string): Record<string, number | null> {
    return this.deployments.get(deploymentId)?.history.valuesAt() ?? {};
  }

  /** Change of `key` over the last `ms` (latest − value at the start of the span); null when unknown. */
  growth(deploymentId: string, key: string, ms: number): number | null {
    return this.deployments.get(deploymentId)?.history.growth(key, ms) ?? null;
  }

  getSeries(q: Omit<SeriesQuery, 'deploymentId'> & { deploymentId: string }): SeriesResult {
    const d = this.deployments.get(q.deploymentId);
    if (!d) return NO_HISTORY.series(q, {}, () => undefined);
    return d.history.series(q, d.notExposed, (key) => {
      const base = splitScopedKey(key).key;
      const role = groupOf(base) as Role;
      return d.roles.includes(role) ? expectedMetrics(role, base.slice(base.indexOf('.') + 1)) : undefined;
    });
  }

  private kvValues(d: DeploymentSignals, group: string, kv: KvUsage): Record<string, number | null> {
    for (const r of kv.ranks ?? []) this.seeRank(d, group, r.rank);
    return kvValues(kv);
  }

  private seeRank(d: DeploymentSignals, group: string, rank: string): void {
    let seen = d.kvRanks.get(group);
    if (!seen) d.kvRanks.set(group, (seen = new Set()));
    seen.add(rank);
  }

  private timeToFull(d: DeploymentSignals, group: string, ratioKey: string, ts: number): number | null {
    const ring = d.rings.get(group);
    if (!ring) return null;
    const [lo, hi] = ring.range(ts - 5 * 60_000, ts);
    const last = hi - lo - 1;
    if (last < 0) return null;
    // Read straight from the ring's arrays into scratch ones: the forecast keeps only its newest value.
    const raw = ring.raw(ratioKey);
    return withScratchArrays(() => {
      const t = f64(last + 1);
      const ratio = f64(last + 1, NaN);
      for (let k = 0; k <= last; k++) {
        const i = (raw.start + lo + k) % raw.capacity;
        t[k] = raw.t[i];
        if (raw.col) ratio[k] = raw.col[i];
      }
      const ttf = timeToFull(t, ratio, 5 * 60_000, last)[last];
      return ttf === ttf ? ttf : null;
    });
  }

  private write(
    d: DeploymentSignals,
    group: string,
    ts: number,
    values: Record<string, number | null>,
  ): Record<string, number | null> {
    return this.ring(d, group).set(ts, values) ? values : {};
  }

  private ring(d: DeploymentSignals, group: string): ColumnRing {
    let r = d.rings.get(group);
    if (!r) d.rings.set(group, (r = new ColumnRing(this.capacity)));
    return r;
  }

  private need(deploymentId: string): DeploymentSignals {
    const d = this.deployments.get(deploymentId);
    if (!d) throw new Error(`signals store: deployment "${deploymentId}" was not opened`);
    return d;
  }
}

function kvValues(kv: KvUsage): Record<string, number | null> {
  const evictable = kv.evictableTokens ?? null;
  const free =
    kv.availableTokens ?? Math.max(0, kv.capacityTokens - kv.usedTokens - (kv.evictableTokens ?? 0));
  const out: Record<string, number | null> = {
    kv_ratio: kv.ratio,
    // With one rank the pool is its own fullest rank, so alerts can watch this key whatever the dp size.
    kv_fullest_rank_ratio: kv.fullestRank?.ratio ?? kv.ratio,
    kv_used: kv.usedTokens,
    kv_evictable: evictable,
    kv_free: free,
    kv_capacity: kv.capacityTokens,
  };
  for (const r of kv.ranks ?? []) out[`kv_rank.${r.rank}.ratio`] = r.ratio;
  return out;
}

/** "role.key" (or "role.key@scope") by role, scope and key: the same few dozen keys every scrape, built once. */
const prefixedKeys = new Map<string, Map<string, string>>();

function prefixed(
  role: string,
  values: Record<string, number | null>,
  scope?: string,
): Record<string, number | null> {
  const group = scope === undefined ? role : `${role}@${scope}`;
  let keys = prefixedKeys.get(group);
  if (!keys) prefixedKeys.set(group, (keys = new Map()));
  const out: Record<string, number | null> = {};
  for (const k in values) {
    let key = keys.get(k);
    if (key === undefined) {
      key = scope === undefined ? `${role}.${k}` : `${role}.${k}@${scope}`;
      // Bounded: keys are the specification's signals and per-rank or per-GPU figures, not label values.
      if (keys.size < 4096) keys.set(k, key);
    }
    out[key] = values[k];
  }
  return out;
}

const scoped = (key: string, scope: string | undefined): string =>
  scope === undefined ? key : `${key}@${scope}`;

/** A worker's (or host's) own ring: `decode@decode-1`, `gpu@gpu-b`; the role's (or 'gpu') without a scope. */
const scopedGroup = (group: string, scope: string | undefined): string =>
  scope === undefined ? group : `${group}@${scope}`;

/**
 * A worker group's values in its row at `ts` by signal name (`running`), those combineWorkers reads; empty when
 * it has no such row.
 */
function rowAt(ring: ColumnRing | undefined, ts: number, prefix: number): Record<string, number> {
  const out: Record<string, number> = {};
  if (!ring || ring.lastTime() !== ts) return out;
  ring.forEachAt(ring.length - 1, (key, v) => {
    const name = workerInput(key, prefix);
    if (name !== null) out[name] = v;
  });
  return out;
}

/**
 * The signal name of a worker's key (`decode.running@decode-1` → `running`), null when combineWorkers does not
 * read it. Kept per key: slicing every key of every worker's row each round was the store's largest
 * allocation in a fleet after the live columns', and most of those keys are never read.
 */
const workerInputs = new Map<string, string | null>();

function workerInput(key: string, prefix: number): string | null {
  let name = workerInputs.get(key);
  if (name !== undefined) return name;
  const at = key.lastIndexOf('@');
  const sliced = key.slice(prefix, at < 0 ? undefined : at);
  name = WORKER_INPUTS.has(sliced) ? sliced : null;
  // Bounded: keys are the specification's signals and per-rank figures of each worker, not label values.
  if (workerInputs.size < 65_536) workerInputs.set(key, name);
  return name;
}

/** What systemd, /health and the scrape outcome of one service say, as values. */
function serviceValues(s: ServiceObservation): Record<string, number | null> {
  const values: Record<string, number | null> = {};
  if (s.systemd) {
    values.active = s.systemd.activeState === 'active' ? 1 : 0;
    values.restarts = s.systemd.nRestarts;
  }
  if (s.health) values.health_ok = s.health.ok ? 1 : 0;
  if (s.metrics) {
    values.metrics_ok = s.metrics.ok ? 1 : 0;
    values.scrape_ms = s.metrics.ok ? s.metrics.durationMs : null;
  }
  return values;
}

/** A role's workers as one: up only while every worker is, restarts summed, the slowest scrape. */
function aggregateValues(list: readonly ServiceObservation[]): Record<string, number | null> {
  const each = list.map(serviceValues);
  const out: Record<string, number | null> = {};
  const known = (k: string): number[] =>
    each.map((v) => v[k]).filter((v): v is number => v !== undefined && v !== null);
  for (const k of ['active', 'health_ok', 'metrics_ok']) {
    const v = known(k);
    // A worker whose host cannot be read has no state: the role is not known to be up.
    if (v.length > 0) out[k] = v.length < list.length ? 0 : Math.min(...v);
  }
  const restarts = known('restarts');
  if (restarts.length > 0) out.restarts = sum(restarts);
  const scrape = known('scrape_ms');
  out.scrape_ms = scrape.length > 0 ? Math.max(...scrape) : null;
  return out;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
