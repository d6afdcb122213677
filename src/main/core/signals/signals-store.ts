// Per-deployment signal history: every scrape and observation becomes one row of named values in bounded
// ring series (24 h at 1 s by default), from which charts are served decimated. It is filled the same way
// live (core hooks 'scrape' + 'observed') and when a recording is replayed (ingest/ingestObservation with
// the recorded time), so a recording opened for review charts exactly like the live deployment did.
import type { GpuReading, SeriesQuery, SeriesResult, SignalMissing } from '@shared/contract';
import type { KvUsage, Observation, Role } from '@shared/domain';
import type { Exposition } from '../probes/exposition/types';
import {
  deriveRouterSignals,
  deriveServerSignals,
  isDerivedInput,
  SeriesWindow,
  sumRate,
  timeToFullSeconds,
} from '../probes/sglang/derived';
import { serverSignals } from '../probes/sglang/server-signals';
import { routerHealthFromMetrics } from '../probes/sglang/router';
import { extractKv, isKvMissing } from '../probes/sglang/kv';
import { viewOf } from '../probes/sglang/series';
import { ColumnRing } from './column-ring';
import { decimateColumn, typicalGapMs } from './decimate';
import { defsFor } from './catalog';

export const DAY_AT_1S = 86_400;

const TRANSFER_FAILED = 'sglang:num_transfer_failed_reqs_total';
const BOOTSTRAP_FAILED = 'sglang:num_bootstrap_failed_reqs_total';
const RETRACTED = 'sglang:num_retracted_requests_total';
const trackedInputs = (name: string): boolean =>
  isDerivedInput(name) || name === TRANSFER_FAILED || name === BOOTSTRAP_FAILED || name === RETRACTED;

export interface KvMeta {
  source: string;
  sourceMetrics: string[];
  caveat?: string;
}

interface DeploymentSignals {
  roles: Role[];
  rings: Map<string, ColumnRing>;
  windows: Map<Role, SeriesWindow>;
  notExposed: Record<string, SignalMissing>;
  kvMeta: Map<Role, KvMeta>;
  capacity: Map<Role, number>;
  gpuIndices: Set<number>;
  /** dp ranks seen per role, for the catalogue's per-rank KV keys. */
  kvRanks: Map<Role, Set<string>>;
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
  private readonly rateWindowMs: number;

  constructor(opts: SignalsStoreOptions = {}) {
    this.capacity = opts.capacity ?? DAY_AT_1S;
    this.rateWindowMs = opts.rateWindowMs ?? 60_000;
  }

  /** Starts (or keeps) the history of a deployment with these roles. */
  open(deploymentId: string, roles: readonly Role[]): void {
    if (this.deployments.has(deploymentId)) return;
    this.deployments.set(deploymentId, {
      roles: [...roles],
      rings: new Map(),
      windows: new Map(),
      notExposed: {},
      kvMeta: new Map(),
      capacity: new Map(),
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

  /** dp ranks with their own KV series, per role (empty for single-rank servers). */
  kvRanks(deploymentId: string): Partial<Record<Role, string[]>> {
    const out: Partial<Record<Role, string[]>> = {};
    for (const [role, ranks] of this.deployments.get(deploymentId)?.kvRanks ?? [])
      out[role] = [...ranks].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
    return out;
  }

  gpuIndices(deploymentId: string): number[] {
    return [...(this.deployments.get(deploymentId)?.gpuIndices ?? [])].sort((a, b) => a - b);
  }

  /** One parsed /metrics scrape of `role` taken at `ts`: point-in-time and windowed signals, KV figures. */
  ingest(deploymentId: string, ts: number, role: Role, exp: Exposition): Record<string, number | null> {
    const d = this.need(deploymentId);
    let win = d.windows.get(role);
    if (!win) {
      win = new SeriesWindow({ windowMs: Math.max(5 * 60_000, this.rateWindowMs * 2), track: trackedInputs });
      d.windows.set(role, win);
    }
    win.ingest(ts, exp);
    const values: Record<string, number | null> = {};
    const view = viewOf(exp);
    if (role === 'router') {
      Object.assign(values, deriveRouterSignals(win, { windowMs: this.rateWindowMs }));
      const rps = values.router_requests_per_s;
      const share = values.router_error_share;
      values.router_errors_per_s = rps !== null && share !== null ? rps * share : null;
      const health = routerHealthFromMetrics(exp);
      if (health.era) {
        const live = health.workers.filter((w) => !w.removed);
        values.workers_total = live.length;
        values.workers_healthy = live.filter((w) => w.healthy === true).length;
      }
    } else {
      const sig = serverSignals(exp, { role });
      Object.assign(values, sig.values);
      Object.assign(values, deriveServerSignals(win, { windowMs: this.rateWindowMs }));
      const perMin = (name: string): number | null => {
        const r = sumRate(win, name, this.rateWindowMs);
        return r === null ? (view.has(name) ? 0 : null) : r * 60;
      };
      values.transfer_failed_per_min = perMin(TRANSFER_FAILED);
      values.bootstrap_failed_per_min = perMin(BOOTSTRAP_FAILED);
      values.retracted_per_min = perMin(RETRACTED);
      for (const ne of sig.notExposed)
        d.notExposed[`${role}.${ne.key}`] = { expected: ne.expected, why: ne.why };
      for (const key of Object.keys(sig.values))
        if (sig.values[key as keyof typeof sig.values] !== null) delete d.notExposed[`${role}.${key}`];
      const kv = extractKv(exp, { capacityFromServerInfo: d.capacity.get(role) });
      if (!isKvMissing(kv)) Object.assign(values, this.kvValues(d, role, kv));
    }
    // Windowed signals whose input families this server does not serve at all: say which name is expected.
    for (const [name, def] of Object.entries(defsFor(role))) {
      if (!def.metrics || !(name in values)) continue;
      const key = `${role}.${name}`;
      if (def.metrics.some((m) => view.has(m))) delete d.notExposed[key];
      else if (values[name] === null)
        d.notExposed[key] ??= {
          expected: def.metrics,
          why: 'not in this server’s /metrics: an older SGLang version, or it appears after the first request of its kind',
        };
    }
    return this.write(d, role, ts, prefixed(role, values));
  }

  /** The monitor's view of the same poll: systemd, health, scrape outcome, KV with server-info capacity. */
  ingestObservation(obs: Observation): Record<string, number | null> {
    const d = this.need(obs.deploymentId);
    const merged: Record<string, number | null> = {};
    for (const s of obs.services) {
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
      if (s.kv) {
        Object.assign(values, this.kvValues(d, s.role, s.kv));
        d.capacity.set(s.role, s.kv.capacityTokens);
        d.kvMeta.set(s.role, { source: s.kv.source, sourceMetrics: s.kv.sourceMetrics, caveat: s.kv.caveat });
        delete d.notExposed[`${s.role}.kv_ratio`];
      } else if (s.kvMissing) {
        d.notExposed[`${s.role}.kv_ratio`] = { expected: s.kvMissing.expected, why: s.kvMissing.reason };
      }
      if (s.role !== 'router' && (!s.metrics || !s.metrics.ok)) {
        // No scrape this poll: KV and queues are unknown, drawn as a gap rather than the last value.
        values.kv_ratio ??= null;
      }
      Object.assign(merged, this.write(d, s.role, obs.ts, prefixed(s.role, values)));
      if (s.role !== 'router') {
        const ttf = this.timeToFull(d, s.role, obs.ts);
        Object.assign(merged, this.write(d, s.role, obs.ts, { [`${s.role}.kv_ttf_s`]: ttf }));
      }
    }
    return merged;
  }

  /** One nvidia-smi reading of the host's GPUs. */
  ingestGpu(deploymentId: string, ts: number, gpus: readonly GpuReading[]): Record<string, number | null> {
    const d = this.need(deploymentId);
    const values: Record<string, number | null> = {};
    for (const g of gpus) {
      d.gpuIndices.add(g.index);
      const p = `gpu.${g.index}`;
      values[`${p}.util`] = g.utilPct;
      values[`${p}.mem_used`] = g.memUsedMiB === null ? null : g.memUsedMiB * 1024 * 1024;
      values[`${p}.mem_total`] = g.memTotalMiB === null ? null : g.memTotalMiB * 1024 * 1024;
      values[`${p}.temp`] = g.tempC;
      values[`${p}.power`] = g.powerW;
    }
    return this.write(d, 'gpu', ts, values);
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

  kvMeta(deploymentId: string, role: Role): KvMeta | undefined {
    return this.deployments.get(deploymentId)?.kvMeta.get(role);
  }

  notExposed(deploymentId: string): Record<string, SignalMissing> {
    return { ...(this.deployments.get(deploymentId)?.notExposed ?? {}) };
  }

  /** Values of the latest row of every group (null = gap or no value in that row). */
  latest(deploymentId: string): Record<string, number | null> {
    const d = this.deployments.get(deploymentId);
    const out: Record<string, number | null> = {};
    if (!d) return out;
    for (const ring of d.rings.values()) {
      const last = ring.length - 1;
      if (last < 0) continue;
      for (const key of ring.keys()) {
        const v = ring.valueAt(key, last);
        out[key] = Number.isNaN(v) ? null : v;
      }
    }
    return out;
  }

  /** Change of `key` over the last `ms` (latest − value at the start of the span); null when unknown. */
  growth(deploymentId: string, key: string, ms: number): number | null {
    const d = this.deployments.get(deploymentId);
    const ring = d?.rings.get(groupOf(key));
    const end = ring?.lastTime();
    if (!ring || end === undefined) return null;
    const [lo, hi] = ring.range(end - ms, end);
    if (hi - lo < 2 || end - ring.timeAt(lo) < ms * 0.8) return null;
    const a = ring.valueAt(key, lo);
    const b = ring.valueAt(key, hi - 1);
    return Number.isNaN(a) || Number.isNaN(b) ? null : b - a;
  }

  getSeries(q: Omit<SeriesQuery, 'deploymentId'> & { deploymentId: string }): SeriesResult {
    const d = this.deployments.get(q.deploymentId);
    const result: SeriesResult = {
      series: [],
      firstMs: null,
      lastMs: null,
      rawPoints: 0,
      decimated: false,
      missing: {},
    };
    if (!d) return result;
    for (const key of q.keys) {
      if (d.notExposed[key]) result.missing[key] = d.notExposed[key];
      const ring = d.rings.get(groupOf(key));
      if (!ring || !ring.has(key)) {
        result.series.push({ key, t: [], v: [] });
        const role = groupOf(key) as Role;
        const signal = key.slice(key.indexOf('.') + 1);
        if (result.missing[key]) continue;
        if (d.roles.includes(role) && defsFor(role)[signal]?.metrics)
          result.missing[key] = {
            expected: defsFor(role)[signal].metrics ?? [],
            why: 'no data yet: not scraped so far, or not exposed by this server version',
          };
        continue;
      }
      const first = ring.firstTime();
      const last = ring.lastTime();
      if (first !== undefined)
        result.firstMs = result.firstMs === null ? first : Math.min(result.firstMs, first);
      if (last !== undefined) result.lastMs = result.lastMs === null ? last : Math.max(result.lastMs, last);
      const [lo, hi] = ring.range(q.fromMs, q.toMs);
      result.rawPoints += hi - lo;
      if (hi - lo > q.maxPoints) result.decimated = true;
      const col = decimateColumn(ring, key, lo, hi, q.maxPoints, typicalGapMs(ring));
      result.series.push({ key, t: col.t, v: col.v });
    }
    return result;
  }

  private kvValues(d: DeploymentSignals, role: Role, kv: KvUsage): Record<string, number | null> {
    if (kv.ranks) {
      let seen = d.kvRanks.get(role);
      if (!seen) d.kvRanks.set(role, (seen = new Set()));
      for (const r of kv.ranks) seen.add(r.rank);
    }
    return kvValues(kv);
  }

  private timeToFull(d: DeploymentSignals, role: Role, ts: number): number | null {
    const ring = d.rings.get(role);
    if (!ring) return null;
    const [lo, hi] = ring.range(ts - 5 * 60_000, ts);
    const t: number[] = [];
    const ratio: (number | null)[] = [];
    for (let k = lo; k < hi; k++) {
      t.push(ring.timeAt(k));
      const v = ring.valueAt(`${role}.kv_ratio`, k);
      ratio.push(Number.isNaN(v) ? null : v);
    }
    return timeToFullSeconds({ t, ratio });
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

function prefixed(role: string, values: Record<string, number | null>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const k in values) out[`${role}.${k}`] = values[k];
  return out;
}

/** The ring a key lives in: its role, or 'gpu'. */
export function groupOf(key: string): string {
  const i = key.indexOf('.');
  return i < 0 ? key : key.slice(0, i);
}
