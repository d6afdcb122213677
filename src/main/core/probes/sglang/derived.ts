// Windowed signals with Prometheus semantics over the last few scrapes of one service: counter rates,
// histogram quantiles of the window's bucket increases, throughput, error share, KV-transfer speed and a
// KV time-to-full forecast.
//
// Differences from PromQL, on purpose:
// - rate() here is increase / (last sample time − first sample time) inside the window. PromQL additionally
//   extrapolates to the window edges; with a console scraping every few seconds the edges are a fraction of
//   a scrape interval and extrapolation only adds noise to short windows.
// - Like PromQL, any decrease of a counter is a reset: the increase across it is the new value (the counter
//   restarted from 0). A series that appears mid-window contributes from its first sample only.

import type { Exposition, Sample } from '../exposition/types';
import { labelKey, minOverRanks, parseLe } from './series';

export interface Point {
  /** Epoch ms. */
  t: number;
  v: number;
}

// ---------------------------------------------------------------------------------------------------------
// Prometheus primitives

/** Counter increase over consecutive points with reset handling; null with fewer than 2 points. */
export function counterIncrease(points: readonly Point[]): number | null {
  if (points.length < 2) return null;
  let inc = 0;
  for (let i = 1; i < points.length; i++) {
    const prev = points[i - 1].v;
    const cur = points[i].v;
    inc += cur >= prev ? cur - prev : cur;
  }
  return inc;
}

/** Per-second rate: increase / elapsed seconds between first and last point (no extrapolation). */
export function counterRate(points: readonly Point[]): number | null {
  const inc = counterIncrease(points);
  if (inc === null) return null;
  const seconds = (points[points.length - 1].t - points[0].t) / 1000;
  return seconds > 0 ? inc / seconds : null;
}

export interface Bucket {
  /** Upper bound; Infinity for the +Inf bucket. */
  le: number;
  /** Cumulative count. */
  count: number;
}

/**
 * histogram_quantile(q, …) as Prometheus computes it (promql/quantile.go bucketQuantile):
 * buckets sorted by bound and merged when equal; the highest must be +Inf, else NaN; cumulative counts forced
 * monotonic; fewer than 2 buckets or no observations → NaN; q < 0 → −Inf, q > 1 → +Inf; a rank falling in the
 * +Inf bucket returns the highest finite bound; the first bucket's lower bound is 0 unless its upper bound is
 * ≤ 0 (then that bound is returned); otherwise linear interpolation inside the bucket.
 */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const sorted = [...buckets].filter((b) => !Number.isNaN(b.le)).sort((a, b) => a.le - b.le);
  const merged: Bucket[] = [];
  for (const b of sorted) {
    const last = merged[merged.length - 1];
    if (last && last.le === b.le) last.count += b.count;
    else merged.push({ le: b.le, count: b.count });
  }
  if (merged.length === 0 || merged[merged.length - 1].le !== Infinity) return NaN;
  for (let i = 1; i < merged.length; i++) {
    if (merged[i].count < merged[i - 1].count) merged[i].count = merged[i - 1].count;
  }
  if (merged.length < 2) return NaN;
  const observations = merged[merged.length - 1].count;
  if (!(observations > 0)) return NaN;
  let rank = q * observations;
  let b = merged.findIndex((x, i) => i < merged.length - 1 && x.count >= rank);
  if (b === -1) b = merged.length - 1;
  if (b === merged.length - 1) return merged[merged.length - 2].le;
  if (b === 0 && merged[0].le <= 0) return merged[0].le;
  let bucketStart = 0;
  const bucketEnd = merged[b].le;
  let count = merged[b].count;
  if (b > 0) {
    bucketStart = merged[b - 1].le;
    count -= merged[b - 1].count;
    rank -= merged[b - 1].count;
  }
  return bucketStart + (bucketEnd - bucketStart) * (rank / count);
}

// ---------------------------------------------------------------------------------------------------------
// Series buffer

export interface Series {
  name: string;
  labels: Record<string, string>;
  points: Point[];
}

export interface SeriesWindowOptions {
  /** How far back points are kept (ms). Default 10 minutes. */
  windowMs?: number;
  /** Hard bound on distinct series; new series beyond it are dropped and counted. Default 5000. */
  maxSeries?: number;
  /** Hard bound on points per series (oldest dropped first). Default 2000. */
  maxPointsPerSeries?: number;
  /** Which sample names to keep. Default: the names the derive* functions read. */
  track?: (sampleName: string) => boolean;
}

/** The last few minutes of selected series of one service, keyed by sample name + labels. */
export class SeriesWindow {
  readonly windowMs: number;
  private readonly maxSeries: number;
  private readonly maxPoints: number;
  private readonly track: (name: string) => boolean;
  private readonly byName = new Map<string, Map<string, Series>>();
  private seriesCount = 0;
  private lastT = -Infinity;
  /** Series refused because maxSeries was reached (a label explosion upstream). */
  droppedSeries = 0;

  constructor(opts: SeriesWindowOptions = {}) {
    this.windowMs = opts.windowMs ?? 10 * 60_000;
    this.maxSeries = opts.maxSeries ?? 5000;
    this.maxPoints = opts.maxPointsPerSeries ?? 2000;
    this.track = opts.track ?? isDerivedInput;
  }

  /** Time of the latest ingested scrape, or -Infinity. */
  get latest(): number {
    return this.lastT;
  }

  /** Adds one scrape taken at `t` (epoch ms). Scrapes older than the latest one are ignored. */
  ingest(t: number, exp: Exposition): void {
    if (!(t > this.lastT)) return;
    this.lastT = t;
    for (const fam of exp.families) {
      for (const s of fam.samples) {
        if (!this.track(s.name)) continue;
        this.append(t, s);
      }
    }
    this.prune(t - this.windowMs);
  }

  /** Forgets everything (e.g. when the service's configuration changed). */
  clear(): void {
    this.byName.clear();
    this.seriesCount = 0;
    this.lastT = -Infinity;
  }

  /** Series of a sample name with only the points of the last `windowMs` (default: the whole buffer). */
  series(name: string, windowMs = this.windowMs): Series[] {
    const m = this.byName.get(name);
    if (!m) return [];
    const from = this.lastT - windowMs;
    const out: Series[] = [];
    for (const s of m.values()) {
      const points = s.points.filter((p) => p.t >= from);
      if (points.length > 0) out.push({ name: s.name, labels: s.labels, points });
    }
    return out;
  }

  private append(t: number, s: Sample): void {
    let m = this.byName.get(s.name);
    if (!m) this.byName.set(s.name, (m = new Map()));
    const key = labelKey(s.labels);
    let series = m.get(key);
    if (!series) {
      if (this.seriesCount >= this.maxSeries) {
        this.droppedSeries++;
        return;
      }
      m.set(key, (series = { name: s.name, labels: s.labels, points: [] }));
      this.seriesCount++;
    }
    series.points.push({ t, v: s.value });
    if (series.points.length > this.maxPoints) series.points.shift();
  }

  private prune(from: number): void {
    for (const [name, m] of this.byName) {
      for (const [key, s] of m) {
        let i = 0;
        while (i < s.points.length && s.points[i].t < from) i++;
        if (i > 0) s.points.splice(0, i);
        if (s.points.length === 0) {
          m.delete(key);
          this.seriesCount--;
        }
      }
      if (m.size === 0) this.byName.delete(name);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Window queries

type LabelFilter = (labels: Record<string, string>) => boolean;

/** sum(rate(name[w])) over the series that have at least two points; null when none has. */
export function sumRate(
  win: SeriesWindow,
  name: string,
  windowMs?: number,
  filter?: LabelFilter,
): number | null {
  return sumOverSeries(win, name, windowMs, filter, counterRate);
}

/** sum(increase(name[w])) over the series that have at least two points; null when none has. */
export function sumIncrease(
  win: SeriesWindow,
  name: string,
  windowMs?: number,
  filter?: LabelFilter,
): number | null {
  return sumOverSeries(win, name, windowMs, filter, counterIncrease);
}

/** Sums `per` over the (filtered) series of `name`; series for which `per` says null do not count. */
function sumOverSeries(
  win: SeriesWindow,
  name: string,
  windowMs: number | undefined,
  filter: LabelFilter | undefined,
  per: (points: readonly Point[]) => number | null,
): number | null {
  let total: number | null = null;
  for (const s of win.series(name, windowMs)) {
    if (filter && !filter(s.labels)) continue;
    const v = per(finite(s.points));
    if (v !== null) total = (total ?? 0) + v;
  }
  return total;
}

/**
 * histogram_quantile(q, sum by (le) (increase(base_bucket[w]))). Null when the window holds no observation
 * (Prometheus would say NaN) or no bucket series has two points yet.
 */
export function windowQuantile(
  win: SeriesWindow,
  base: string,
  q: number,
  windowMs?: number,
  filter?: LabelFilter,
): number | null {
  const buckets = windowBuckets(win, base, windowMs, filter);
  if (!buckets) return null;
  const v = histogramQuantile(q, buckets);
  return Number.isNaN(v) ? null : v;
}

/** The window's per-bucket increases summed by le, or null when no bucket series has two points. */
export function windowBuckets(
  win: SeriesWindow,
  base: string,
  windowMs?: number,
  filter?: LabelFilter,
): Bucket[] | null {
  const byLe = new Map<number, number>();
  for (const s of win.series(`${base}_bucket`, windowMs)) {
    if (filter && !filter(s.labels)) continue;
    const le = parseLe(s.labels.le);
    if (Number.isNaN(le)) continue;
    const inc = counterIncrease(finite(s.points));
    if (inc === null) continue;
    byLe.set(le, (byLe.get(le) ?? 0) + inc);
  }
  if (byLe.size === 0) return null;
  return [...byLe].map(([le, count]) => ({ le, count }));
}

function finite(points: Point[]): Point[] {
  return points.every((p) => Number.isFinite(p.v)) ? points : points.filter((p) => Number.isFinite(p.v));
}

// ---------------------------------------------------------------------------------------------------------
// SGLang server signals

const TTFT = 'sglang:time_to_first_token_seconds';
const ITL = 'sglang:inter_token_latency_seconds';
/** Removed in v0.4.6.post5 (issue #6806); read only when ITL is absent. */
const TPOT_LEGACY = 'sglang:time_per_output_token_seconds';
const E2E = 'sglang:e2e_request_latency_seconds';
const KV_LAT = 'sglang:kv_transfer_latency_ms';
const KV_SPEED = 'sglang:kv_transfer_speed_gb_s';
const KV_TOTAL_MB = 'sglang:kv_transfer_total_mb';
const PROMPT = 'sglang:prompt_tokens_total';
const GENERATION = 'sglang:generation_tokens_total';
const CACHED = 'sglang:cached_tokens_total';
const REQUESTS = 'sglang:num_requests_total';

const QUANTILES = [
  ['p50', 0.5],
  ['p90', 0.9],
  ['p99', 0.99],
] as const;

/**
 * Keys of deriveServerSignals():
 *   ttft_{p50,p90,p99}_s, itl_{p50,p90,p99}_s, e2e_{p50,p90,p99}_s   latency quantiles of the window
 *   kv_transfer_latency_{p50,p90,p99}_ms                            histogram era of kv_transfer_* only
 *   prompt_tokens_per_s, generation_tokens_per_s, requests_per_s
 *   cache_hit_rate_window          Δcached_tokens / Δprompt_tokens (cache_source="total" when labelled)
 *   kv_transfer_gb_s               see kvTransferGbps()
 */
export const DERIVED_SERVER_KEYS = [
  ...QUANTILES.map(([p]) => `ttft_${p}_s`),
  ...QUANTILES.map(([p]) => `itl_${p}_s`),
  ...QUANTILES.map(([p]) => `e2e_${p}_s`),
  ...QUANTILES.map(([p]) => `kv_transfer_latency_${p}_ms`),
  'prompt_tokens_per_s',
  'generation_tokens_per_s',
  'requests_per_s',
  'cache_hit_rate_window',
  'kv_transfer_gb_s',
] as const;

export interface DeriveOptions {
  /** Window for rates and quantiles (ms). Default 60 s, capped by the buffer's window. */
  windowMs?: number;
}

export function deriveServerSignals(
  win: SeriesWindow,
  opts: DeriveOptions = {},
): Record<string, number | null> {
  const w = Math.min(opts.windowMs ?? 60_000, win.windowMs);
  const out: Record<string, number | null> = {};
  const itlBase = win.series(`${ITL}_bucket`, w).length > 0 ? ITL : TPOT_LEGACY;
  for (const [p, q] of QUANTILES) {
    out[`ttft_${p}_s`] = windowQuantile(win, TTFT, q, w);
    out[`itl_${p}_s`] = windowQuantile(win, itlBase, q, w);
    out[`e2e_${p}_s`] = windowQuantile(win, E2E, q, w);
    out[`kv_transfer_latency_${p}_ms`] = windowQuantile(win, KV_LAT, q, w);
  }
  out.prompt_tokens_per_s = sumRate(win, PROMPT, w);
  out.generation_tokens_per_s = sumRate(win, GENERATION, w);
  out.requests_per_s = sumRate(win, REQUESTS, w) ?? sumRate(win, `${E2E}_count`, w);
  out.cache_hit_rate_window = cacheHitRate(win, w);
  out.kv_transfer_gb_s = kvTransferGbps(win, w)?.value ?? null;
  return out;
}

/** Δcached / Δprompt over the window; null without prompt traffic. */
export function cacheHitRate(win: SeriesWindow, windowMs?: number): number | null {
  const prompt = sumIncrease(win, PROMPT, windowMs);
  if (prompt === null || prompt <= 0) return null;
  const cachedSeries = win.series(CACHED, windowMs);
  const hasTotal = cachedSeries.some((s) => s.labels.cache_source === 'total');
  // cache_source sources (device/host/storage_*) are disjoint; "total" already adds them up.
  const cached = sumIncrease(win, CACHED, windowMs, hasTotal ? (l) => l.cache_source === 'total' : undefined);
  return cached === null ? null : Math.min(1, cached / prompt);
}

export type KvTransferMethod = 'speed_gauge' | 'speed_histogram' | 'total_mb_rate';

/**
 * KV transfer speed in GB/s, by the best means this server version offers:
 * - speed_gauge: sglang:kv_transfer_speed_gb_s gauge (before PR #19009): the last transfer's speed, slowest rank;
 * - speed_histogram: Δ_sum / Δ_count of the speed histogram: mean per-transfer speed over the window;
 * - total_mb_rate: rate(kv_transfer_total_mb_sum) / 1000: aggregate bytes moved per second (histogram era).
 * Per-transfer speeds are inflated by chunked prefill (reference §1.6); the aggregate is not.
 */
export function kvTransferGbps(
  win: SeriesWindow,
  windowMs?: number,
): { value: number; method: KvTransferMethod } | null {
  const gauges = win.series(KV_SPEED, windowMs);
  if (gauges.length > 0) {
    const latest: Sample[] = gauges.map((s) => ({
      name: s.name,
      labels: s.labels,
      value: s.points[s.points.length - 1].v,
    }));
    const v = minOverRanks(latest);
    if (v !== undefined) return { value: v, method: 'speed_gauge' };
  }
  const dSum = sumIncrease(win, `${KV_SPEED}_sum`, windowMs);
  const dCount = sumIncrease(win, `${KV_SPEED}_count`, windowMs);
  if (dSum !== null && dCount !== null && dCount > 0)
    return { value: dSum / dCount, method: 'speed_histogram' };
  const mbPerS = sumRate(win, `${KV_TOTAL_MB}_sum`, windowMs);
  if (mbPerS !== null) return { value: mbPerS / 1000, method: 'total_mb_rate' };
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// Router signals

/**
 * Paths the console itself (and load balancers) poll: they are not user traffic, and counting them would
 * dilute the error share.
 */
export function isControlPath(path: string | undefined): boolean {
  if (!path) return false;
  const p = path.split('?')[0];
  return (
    /^\/(health|health_generate|liveness|readiness|metrics|engine_metrics|flush_cache|server_info|model_info|get_loads|list_workers|add_worker|remove_worker)$/.test(
      p,
    ) ||
    p.startsWith('/get_') ||
    p.startsWith('/workers') ||
    p.startsWith('/v1/models') ||
    p === '/v1/loads'
  );
}

const PD_REQUESTS = 'sgl_router_pd_requests_total';
const PD_DURATION = 'sgl_router_pd_request_duration_seconds';
const PD_ERRORS = [
  'sgl_router_pd_errors_total',
  'sgl_router_pd_prefill_errors_total',
  'sgl_router_pd_decode_errors_total',
];

const trafficOnly: LabelFilter = (l) => !isControlPath(l.path ?? l.route);
const is5xx = (l: Record<string, string>) => /^5\d\d$/.test(l.status_code ?? '');

/**
 * Keys of deriveRouterSignals():
 *   router_requests_per_s   smg: rate(smg_router_requests_total), else rate(smg_http_requests_total) on
 *                           traffic paths; sgl_router: rate(sgl_router_pd_requests_total) (PD mode), else
 *                           rate(sgl_router_requests_total) on traffic routes (regular mode)
 *   router_error_share      5xx share of responses on traffic paths (0..1); smg: smg_http_responses_total
 *                           (before smg 1.5 it has no path label, so control polls are counted too);
 *                           sgl_router: sgl_router_upstream_http_responses_total, else PD errors
 *                           (sgl_router_pd_{,prefill_,decode_}errors_total) / sgl_router_pd_requests_total,
 *                           else regular errors/requests
 *   router_latency_{p50,p99}_s   histogram_quantile over smg_router_request_duration_seconds /
 *                           sgl_router_pd_request_duration_seconds / sgl_router_request_duration_seconds
 */
export const DERIVED_ROUTER_KEYS = [
  'router_requests_per_s',
  'router_error_share',
  'router_latency_p50_s',
  'router_latency_p99_s',
] as const;

export function deriveRouterSignals(
  win: SeriesWindow,
  opts: DeriveOptions = {},
): Record<string, number | null> {
  const w = Math.min(opts.windowMs ?? 60_000, win.windowMs);
  const smg =
    win.series('smg_router_requests_total', w).length > 0 ||
    win.series('smg_http_responses_total', w).length > 0;
  let requests: number | null;
  let errorShare: number | null;
  let durationBase: string;
  if (smg) {
    requests =
      sumRate(win, 'smg_router_requests_total', w) ?? sumRate(win, 'smg_http_requests_total', w, trafficOnly);
    errorShare = share(
      sumIncrease(win, 'smg_http_responses_total', w, (l) => trafficOnly(l) && is5xx(l)),
      sumIncrease(win, 'smg_http_responses_total', w, trafficOnly),
    );
    durationBase = 'smg_router_request_duration_seconds';
  } else {
    // A PD-mode sglang-router (≤ 0.2.4) records only sgl_router_pd_*; the unprefixed request counters and
    // the duration histogram are the regular router's (shared/reference/upstream/README.md, router eras).
    const pd = win.series(PD_REQUESTS, w).length > 0;
    requests = pd ? sumRate(win, PD_REQUESTS, w) : sumRate(win, 'sgl_router_requests_total', w, trafficOnly);
    const upstreamAll = sumIncrease(win, 'sgl_router_upstream_http_responses_total', w, trafficOnly);
    errorShare =
      upstreamAll !== null
        ? share(
            sumIncrease(
              win,
              'sgl_router_upstream_http_responses_total',
              w,
              (l) => trafficOnly(l) && is5xx(l),
            ),
            upstreamAll,
          )
        : pd
          ? share(addKnown(PD_ERRORS.map((n) => sumIncrease(win, n, w))), sumIncrease(win, PD_REQUESTS, w))
          : share(
              sumIncrease(win, 'sgl_router_request_errors_total', w, trafficOnly),
              sumIncrease(win, 'sgl_router_requests_total', w, trafficOnly),
            );
    durationBase = pd ? PD_DURATION : 'sgl_router_request_duration_seconds';
  }
  return {
    router_requests_per_s: requests,
    router_error_share: errorShare,
    router_latency_p50_s: windowQuantile(win, durationBase, 0.5, w),
    router_latency_p99_s: windowQuantile(win, durationBase, 0.99, w),
  };
}

/** Sum of the known parts; null when none is known. */
function addKnown(parts: (number | null)[]): number | null {
  const known = parts.filter((p): p is number => p !== null);
  return known.length ? known.reduce((a, b) => a + b, 0) : null;
}

/** part / whole; 0 errors among responses is 0, no responses at all is null. A missing part counts as 0. */
function share(part: number | null, whole: number | null): number | null {
  if (whole === null || whole <= 0) return null;
  return Math.min(1, (part ?? 0) / whole);
}

// ---------------------------------------------------------------------------------------------------------
// KV time-to-full

export interface TimeToFullOptions {
  /** Regression window (ms) ending at the last point. Default 5 minutes. */
  windowMs?: number;
  /** Fewer points than this → null. Default 5. */
  minPoints?: number;
  /** A shorter span than this → null. Default 30 s. */
  minSpanMs?: number;
  /** Forecasts beyond this many seconds count as flat → null. Default 24 h. */
  maxHorizonS?: number;
}

/**
 * Seconds until the KV ratio reaches 1 at the recent least-squares slope, or null when the usage is flat or
 * falling or there is too little data. Takes columns of times and ratios (nulls are gaps). Only the run after
 * the last gap is used: a gap usually means a restart, and the pool empties with it.
 */
export function timeToFullSeconds(
  history: { t: readonly number[]; ratio: readonly (number | null)[] },
  opts: TimeToFullOptions = {},
): number | null {
  const windowMs = opts.windowMs ?? 5 * 60_000;
  const minPoints = opts.minPoints ?? 5;
  const minSpanMs = opts.minSpanMs ?? 30_000;
  const maxHorizonS = opts.maxHorizonS ?? 24 * 3600;
  const n = Math.min(history.t.length, history.ratio.length);
  if (n === 0) return null;
  const end = history.t[n - 1];
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = n - 1; i >= 0; i--) {
    const r = history.ratio[i];
    if (r === null || !Number.isFinite(r)) break;
    if (history.t[i] < end - windowMs) break;
    xs.push((history.t[i] - end) / 1000);
    ys.push(r);
  }
  if (xs.length < minPoints || -xs[xs.length - 1] * 1000 < minSpanMs) return null;
  const slope = leastSquaresSlope(xs, ys);
  const current = ys[0];
  if (current >= 1) return 0;
  if (!(slope > 0)) return null;
  const seconds = (1 - current) / slope;
  return seconds > maxHorizonS ? null : seconds;
}

function leastSquaresSlope(xs: number[], ys: number[]): number {
  const n = xs.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += xs[i];
    my += ys[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

// ---------------------------------------------------------------------------------------------------------

const HISTOGRAM_BASES = [
  TTFT,
  ITL,
  TPOT_LEGACY,
  E2E,
  KV_LAT,
  KV_SPEED,
  KV_TOTAL_MB,
  'smg_router_request_duration_seconds',
  'sgl_router_request_duration_seconds',
  PD_DURATION,
];
const DERIVED_INPUTS = new Set<string>([
  ...HISTOGRAM_BASES.flatMap((b) => [`${b}_bucket`, `${b}_sum`, `${b}_count`]),
  KV_SPEED,
  PROMPT,
  GENERATION,
  CACHED,
  REQUESTS,
  'smg_router_requests_total',
  'smg_http_requests_total',
  'smg_http_responses_total',
  'sgl_router_requests_total',
  'sgl_router_request_errors_total',
  'sgl_router_upstream_http_responses_total',
  PD_REQUESTS,
  ...PD_ERRORS,
]);

/** Whether a sample name is read by deriveServerSignals/deriveRouterSignals (SeriesWindow's default filter). */
export function isDerivedInput(sampleName: string): boolean {
  return DERIVED_INPUTS.has(sampleName);
}
