// Every signal of one SGLang server (prefill or decode) over the columns of its scrapes, driven by the signal
// specification: gauges by their rank aggregation (the histogram form of kv_transfer_* as the mean since
// start), rates and quantiles of the window by their kind, the first family of a signal's `metrics` list present
// in the scrape winning (a renamed family). Only the figures the specification cannot say generically — the
// cache hit rate from two counters, the KV transfer rate, KV usage — have code of their own.
import type { Role } from '@shared/domain';
import { SGLANG as S } from '@shared/signals/metric-names';
import { SERVER_SIGNALS, type SignalSpec } from '@shared/signals/spec';
import { aggregate, histogramMean, presence, type RankAgg } from '../rank-math';
import type { TargetColumns } from '../../review/target-columns';
import { anyInWindow, latestInWindow, windowQuantiles, windowSum } from '../window-math';
import { kvColumns } from './kv';
import { tailColumns, widen } from './tail';
import type { EvaluateOptions, TargetSignals } from './types';
import { f64, i8, u8 } from '../scratch-arrays';

const SPECS = Object.entries(SERVER_SIGNALS) as [string, SignalSpec][];

/** A gauge at every row: the first of its names present in each scrape wins (a renamed gauge). */
function gauge(cols: TargetColumns, spec: SignalSpec): Float64Array {
  const n = cols.rows;
  const out = f64(n, NaN);
  const decided = u8(n);
  const agg = spec.ranks as RankAgg;
  for (const name of spec.metrics ?? []) {
    // A histogram scrape has its _count (one series) whenever it has buckets (many): test the cheap one.
    const histForm = !spec.histogramForm
      ? null
      : cols.has(`${name}_count`)
        ? presence(cols, `${name}_count`)
        : cols.has(`${name}_bucket`)
          ? presence(cols, `${name}_bucket`)
          : null;
    const gaugeHere = cols.has(name) ? presence(cols, name) : null;
    if (!histForm && !gaugeHere) continue;
    const hv = histForm ? histogramMean(cols, name, agg) : null;
    const gv = gaugeHere ? aggregate(cols, name, agg) : null;
    for (let i = 0; i < n; i++) {
      if (decided[i]) continue;
      if (histForm && histForm[i]) {
        out[i] = hv![i];
        decided[i] = 1;
      } else if (gaugeHere && gaugeHere[i]) {
        out[i] = gv![i];
        decided[i] = 1;
      }
    }
  }
  return out;
}

/** sum(rate(counter[w])) × scale of the first of the signal's counters that gives a value at each row. */
function rate(cols: TargetColumns, spec: SignalSpec, w: number, from: number): Float64Array {
  const n = cols.rows;
  const out = f64(n, NaN);
  const scale = spec.scale ?? 1;
  for (const name of spec.metrics ?? []) {
    if (!cols.has(name)) continue;
    const r = windowSum(cols, name, w, { rate: true, from });
    const here = spec.zeroWhenPresent ? presence(cols, name) : null;
    for (let i = from; i < n; i++) {
      if (out[i] === out[i]) continue;
      if (r[i] === r[i]) out[i] = r[i] * scale;
      else if (here?.[i]) out[i] = 0;
    }
  }
  return out;
}

/**
 * Quantile signals grouped by their histogram list: at each row the first histogram with a bucket series in
 * the window is read (ITL, else the legacy TPOT name).
 */
function quantiles(
  cols: TargetColumns,
  specs: [string, SignalSpec][],
  w: number,
  from: number,
  into: Map<string, Float64Array>,
): void {
  const groups = new Map<string, [string, SignalSpec][]>();
  for (const entry of specs) {
    const k = (entry[1].metrics ?? []).join('|');
    const g = groups.get(k);
    if (g) g.push(entry);
    else groups.set(k, [entry]);
  }
  const n = cols.rows;
  for (const group of groups.values()) {
    const bases = group[0][1].metrics ?? [];
    const qs = group.map(([, s]) => s.q ?? NaN);
    const outs = group.map(() => f64(n, NaN));
    const decided = u8(n);
    for (const base of bases) {
      if (!cols.has(`${base}_bucket`)) continue;
      const here = bases.length > 1 ? anyInWindow(cols, `${base}_bucket`, w, undefined, from) : null;
      const vals = windowQuantiles(cols, base, qs, w, undefined, from);
      for (let i = from; i < n; i++) {
        if (decided[i] || (here && !here[i])) continue;
        decided[i] = 1;
        for (let k = 0; k < qs.length; k++) outs[k][i] = vals[k][i];
      }
    }
    group.forEach(([key], k) => into.set(key, outs[k]));
  }
}

/** Signals of an SGLang server (prefill or decode) at every row from `opts.from` on. */
export function serverSignalColumns(
  cols: TargetColumns,
  role: Role,
  opts: EvaluateOptions = {},
): TargetSignals {
  const w = opts.rateWindowMs ?? 60_000;
  const from = opts.from ?? 0;
  const n = cols.rows;
  const values = new Map<string, Float64Array>();
  const quantileSpecs: [string, SignalSpec][] = [];
  // Gauges and KV are point-in-time: read over the rows asked for, not the whole window kept for rates.
  const point = tailColumns(cols, from);
  for (const [key, spec] of SPECS) {
    if (!spec.metrics) continue;
    if (spec.notOn?.includes(role)) values.set(key, f64(n, NaN));
    else if (spec.kind === 'gauge' && spec.ranks) values.set(key, widen(gauge(point, spec), n, from));
    else if (spec.kind === 'rate') values.set(key, rate(cols, spec, w, from));
    else if (spec.kind === 'quantile') quantileSpecs.push([key, spec]);
  }
  quantiles(cols, quantileSpecs, w, from, values);
  values.set('cache_hit_rate_window', cacheHitRate(cols, w, from));
  values.set('kv_transfer_gb_s', kvTransferGbps(cols, w, from));
  const kvSource = i8(n, -1);
  if (opts.kv === false) return { role, values, kvSource, kvMetas: [] };
  const info = opts.capacityFromServerInfo;
  const kv = kvColumns(point, {
    capacityFromServerInfo:
      typeof info === 'number' || info === undefined || from <= 0
        ? info
        : Array.prototype.slice.call(info, from),
    rankTokens: opts.rankTokens,
  });
  for (const [k, col] of kv.values) values.set(k, widen(col, n, from));
  kvSource.set(kv.source, from);
  return { role, values, kvSource, kvMetas: kv.metas };
}

/** Δcached / Δprompt over the window; the cache_source="total" series when labelled (sources are disjoint). */
function cacheHitRate(cols: TargetColumns, w: number, from: number): Float64Array {
  const n = cols.rows;
  const out = f64(n, NaN);
  if (!cols.has(S.promptTokensTotal) || !cols.has(S.cachedTokensTotal)) return out;
  const prompt = windowSum(cols, S.promptTokensTotal, w, { from });
  const total = (l: Record<string, string>): boolean => l.cache_source === 'total';
  const hasTotal = anyInWindow(cols, S.cachedTokensTotal, w, total, from);
  // Each scan only where some row needs it (the live push: one row, so one of the two).
  let someTotal = false;
  let someUnlabelled = false;
  for (let i = from; i < n; i++) {
    if (hasTotal[i]) someTotal = true;
    else someUnlabelled = true;
  }
  const none = new Float64Array(0);
  const cachedTotal = someTotal ? windowSum(cols, S.cachedTokensTotal, w, { filter: total, from }) : none;
  const cachedAll = someUnlabelled ? windowSum(cols, S.cachedTokensTotal, w, { from }) : none;
  for (let i = from; i < n; i++) {
    const p = prompt[i];
    if (!(p > 0)) continue;
    const c = hasTotal[i] ? cachedTotal[i] : cachedAll[i];
    if (c === c) out[i] = Math.min(1, c / p);
  }
  return out;
}

/**
 * KV transfer speed in GB/s, by the best means this server version offers: the speed gauge (before PR
 * #19009: the slowest rank's last transfer), else Δsum/Δcount of the speed histogram (mean per transfer in the
 * window), else rate(kv_transfer_total_mb_sum)/1000 (bytes moved per second; not inflated by chunked prefill).
 */
function kvTransferGbps(cols: TargetColumns, w: number, from: number): Float64Array {
  const n = cols.rows;
  const out = f64(n, NaN);
  latestInWindow(
    cols,
    S.kvTransferSpeedGbS,
    w,
    (i, latest) => {
      const priorityTotals = latest.some((s) => s.labels.priority === '');
      const byRank = new Map<string, number>();
      for (const s of latest) {
        if (priorityTotals && s.labels.priority) continue;
        const r = s.labels.dp_rank ?? '';
        const prev = byRank.get(r);
        byRank.set(r, prev === undefined ? s.value : Math.max(prev, s.value));
      }
      if (byRank.size > 0) out[i] = Math.min(...byRank.values());
    },
    from,
  );
  const dSum = windowSum(cols, `${S.kvTransferSpeedGbS}_sum`, w, { from });
  const dCount = windowSum(cols, `${S.kvTransferSpeedGbS}_count`, w, { from });
  const mbPerS = windowSum(cols, `${S.kvTransferTotalMb}_sum`, w, { rate: true, from });
  for (let i = from; i < n; i++) {
    if (out[i] === out[i]) continue;
    if (dSum[i] === dSum[i] && dCount[i] > 0) out[i] = dSum[i] / dCount[i];
    else if (mbPerS[i] === mbPerS[i]) out[i] = mbPerS[i] / 1000;
  }
  return out;
}
