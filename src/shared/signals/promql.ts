// The PromQL of every signal of the specification (spec.ts), meaning what the live evaluator
// (src/main/core/signals/evaluate) computes from the app's own scrapes, so a chart drawn from the operator's
// Prometheus, the Grafana export and the live chart show one figure:
//   gauge     per dp rank the replicas (tp/pp ranks, the pid label) collapse with max, totals under priority=""
//             win over per-priority series, then ranks combine by the spec's `ranks`; the histogram era of
//             kv_transfer_* reads _sum/_count (mean since start) per rank, the worst rank winning
//   rate      sum(rate(x[w])) × scale; zeroWhenPresent: 0 where the counter exists but has no rate yet
//   quantile  histogram_quantile(q, sum by (le) (rate(x_bucket[w])))
//   ratio     the quotient of window increases or of summed gauges (KV usage: used / capacity over ranks)
// A renamed family is `(newest) or (older)`: every alternative ends in an aggregation without `by`, so its
// result has no labels and `or` takes the older name only where the newer one has no value, as the evaluator
// does per scrape. Every selector carries the caller's matchers (job/instance from discovery): one worker's
// matchers give the per-worker series (`decode.kv_ratio@decode-1`), a role's matchers (every worker of it)
// give the role aggregate, because the rank grouping keeps `instance` apart and the outer aggregation spans
// workers (KV tokens summed over workers, the ratio of those sums, like the live fleet aggregate).
import { SGLANG as S, SGL_ROUTER as R, SGL_ROUTER_PD_ERRORS, SMG } from './metric-names';
import {
  GPU_SIGNALS,
  ROUTER_SIGNALS,
  SERVER_SIGNALS,
  type GpuField,
  type RankAggregation,
  type SignalSpec,
} from './spec';

/** Where and how the series are read. */
export interface PromScope {
  /** Label matchers without braces, e.g. `job="sglang-decode",instance="127.0.0.1:30200"` ('' for none). */
  selector: string;
  /** The Prometheus scrape interval of these targets (s); widens windows when it scrapes slower than 15 s. */
  scrapeIntervalS?: number;
}

export type SignalPromql =
  | {
      ok: true;
      expr: string;
      /** The range of its rates and quantiles (s); absent for point-in-time figures. */ windowS?: number;
    }
  | { ok: false; why: string };

/** The live evaluator's window of rates and quantiles (EvaluateOptions.rateWindowMs default). */
export const LIVE_WINDOW_S = 60;

/**
 * The range of a windowed signal: the live evaluator's 60 s, so both sources mean the same; when Prometheus
 * scrapes slower than every 15 s, four scrape intervals, because rate() needs two samples in the range and a
 * range of barely two intervals loses one to jitter and reads nothing (the live store scrapes every second).
 */
export function windowSeconds(scrapeIntervalS?: number): number {
  return Math.max(LIVE_WINDOW_S, Math.ceil((scrapeIntervalS ?? 0) * 4));
}

/** Dashboard paths the console and load balancers poll (control-paths.ts): not user traffic. */
const CONTROL_PATHS =
  '/(health|health_generate|liveness|readiness|metrics|engine_metrics|flush_cache|server_info|model_info|get_loads|list_workers|add_worker|remove_worker|v1/loads)|/get_.*|/workers.*|/v1/models.*';
const TRAFFIC = `path!~"${CONTROL_PATHS}",route!~"${CONTROL_PATHS}"`;

/** Replicas inside one dp rank of one worker collapse into one series. */
const RANK = 'instance, dp_rank';

class Builder {
  constructor(
    private readonly sel: string,
    readonly w: number,
  ) {}

  /** `name{selector,extra}`. */
  v(name: string, extra = ''): string {
    const m = [this.sel, extra].filter((x) => x !== '').join(',');
    return `${name}{${m}}`;
  }

  /** Per dp rank: the totals under priority="" when served, else every series, replicas collapsed with max. */
  perRank(name: string, extra = ''): string {
    const total = this.v(name, [extra, 'priority=""'].filter((x) => x).join(','));
    return `(max by (${RANK}) (${total}) or max by (${RANK}) (${this.v(name, extra)}))`;
  }

  /** A gauge whose dp ranks combine with `agg`. */
  gauge(name: string, agg: RankAggregation): string {
    return `${AGG[agg]}(${this.perRank(name)})`;
  }

  /** The histogram era of a gauge: per rank _sum / _count since start, the worst rank (min or max). */
  histogramMean(name: string, agg: RankAggregation): string {
    const worst = agg === 'min' ? 'min' : 'max';
    return `${worst}(${this.perRank(`${name}_sum`)} / (${this.perRank(`${name}_count`)} > 0))`;
  }

  rate(name: string, extra = ''): string {
    return `sum(rate(${this.v(name, extra)}[${this.w}s]))`;
  }

  increase(name: string, extra = ''): string {
    return `sum(increase(${this.v(name, extra)}[${this.w}s]))`;
  }

  quantile(q: number, base: string): string {
    return `histogram_quantile(${q}, sum by (le) (rate(${this.v(`${base}_bucket`)}[${this.w}s])))`;
  }
}

const AGG: Record<RankAggregation, string> = { sum: 'sum', max: 'max', min: 'min', mean: 'avg' };

/** The first alternative with a value wins (each has no labels: see the header). */
const or = (alts: string[]): string => (alts.length === 1 ? alts[0] : alts.map((a) => `(${a})`).join(' or '));

/** part / whole of two increases, 0 errors when the part is absent, NaN-free: whole must be > 0; at most 1. */
const share = (part: string, whole: string): string =>
  `clamp_max((${part} or vector(0)) / (${whole} > 0), 1)`;

const NOT_METRICS = (spec: SignalSpec): string =>
  `“${spec.label}” is not a /metrics family (${spec.source}): Prometheus does not scrape it, so its history is the app's own recordings only`;

function kvAlternatives(b: Builder): {
  ratio: string[];
  used: string[];
  capacity: string;
  free: string[];
  fullest: string[];
} {
  const cap = `${b.perRank(S.maxTotalNumTokens)} > 0`;
  const used = b.perRank(S.kvUsedTokens);
  const sumOf = (x: string): string => `sum(${x})`;
  // Without a capacity gauge the evaluator weights ranks by equal shares of /server_info's capacity, which
  // Prometheus does not have: with equal shares the token-weighted ratio is the mean of the rank ratios.
  const weighted = (ratioMetric: string): string =>
    `sum(${b.perRank(ratioMetric)} * on (${RANK}) (${cap})) / sum(${cap})`;
  const mean = (ratioMetric: string): string => `avg(${b.perRank(ratioMetric)})`;
  const approxCap = `(${sumOf(used)} + ${sumOf(b.perRank(S.kvEvictableTokens))} + ${sumOf(b.perRank(S.kvAvailableTokens))})`;
  return {
    ratio: [
      `${sumOf(used)} / sum(${cap})`,
      `${sumOf(used)} / ${approxCap}`,
      weighted(S.fullTokenUsage),
      mean(S.fullTokenUsage),
      `sum(${b.perRank(S.numUsedTokens)}) / sum(${cap})`,
      weighted(S.tokenUsage),
      mean(S.tokenUsage),
    ],
    used: [
      sumOf(used),
      `sum(${b.perRank(S.fullTokenUsage)} * on (${RANK}) (${cap}))`,
      sumOf(b.perRank(S.numUsedTokens)),
      `sum(${b.perRank(S.tokenUsage)} * on (${RANK}) (${cap}))`,
    ],
    capacity: `sum(${cap})`,
    free: [sumOf(b.perRank(S.kvAvailableTokens)), `clamp_min(sum(${cap}) - ${sumOf(used)}, 0)`],
    fullest: [
      `max(${used} / on (${RANK}) (${cap}))`,
      `max(${b.perRank(S.fullTokenUsage)})`,
      `max(${b.perRank(S.numUsedTokens)} / on (${RANK}) (${cap}))`,
      `max(${b.perRank(S.tokenUsage)})`,
    ],
  };
}

function serverPromql(name: string, spec: SignalSpec, b: Builder): SignalPromql {
  const windowed = (expr: string): SignalPromql => ({ ok: true, expr, windowS: b.w });
  const point = (expr: string): SignalPromql => ({ ok: true, expr });
  switch (name) {
    case 'cache_hit_rate_window': {
      const prompt = b.increase(S.promptTokensTotal);
      return windowed(
        or([
          `clamp_max(${b.increase(S.cachedTokensTotal, 'cache_source="total"')} / (${prompt} > 0), 1)`,
          `clamp_max(${b.increase(S.cachedTokensTotal)} / (${prompt} > 0), 1)`,
        ]),
      );
    }
    case 'kv_transfer_gb_s':
      return windowed(
        or([
          `min(${b.perRank(S.kvTransferSpeedGbS)})`,
          `${b.increase(`${S.kvTransferSpeedGbS}_sum`)} / (${b.increase(`${S.kvTransferSpeedGbS}_count`)} > 0)`,
          `${b.rate(`${S.kvTransferTotalMb}_sum`)} / 1000`,
        ]),
      );
    case 'kv_ratio':
      return point(or(kvAlternatives(b).ratio));
    case 'kv_fullest_rank_ratio':
      return point(or(kvAlternatives(b).fullest));
    case 'kv_used':
      return point(or(kvAlternatives(b).used));
    case 'kv_capacity':
      return point(kvAlternatives(b).capacity);
    case 'kv_free':
      return point(or(kvAlternatives(b).free));
    case 'kv_evictable':
      return point(`sum(${b.perRank(S.kvEvictableTokens)})`);
  }
  const metrics = spec.metrics ?? [];
  if (spec.kind === 'gauge' && spec.ranks && metrics.length > 0) {
    const ranks = spec.ranks;
    return point(
      or(
        metrics.flatMap((m) =>
          spec.histogramForm ? [b.histogramMean(m, ranks), b.gauge(m, ranks)] : [b.gauge(m, ranks)],
        ),
      ),
    );
  }
  if (spec.kind === 'rate' && metrics.length > 0) {
    const scale = spec.scale ?? 1;
    const alts = metrics.map((m) => (scale === 1 ? b.rate(m) : `${b.rate(m)} * ${scale}`));
    // Present with fewer than two samples in the window: 0, not a gap (a failure counter's first increment).
    if (spec.zeroWhenPresent) alts.push(...metrics.map((m) => `sum(${b.v(m)}) * 0`));
    return windowed(or(alts));
  }
  if (spec.kind === 'quantile' && spec.q !== undefined && metrics.length > 0)
    return windowed(or(metrics.map((m) => b.quantile(spec.q!, m))));
  return { ok: false, why: noPromql(spec) };
}

function noPromql(spec: SignalSpec): string {
  if (spec.kind === 'state') return NOT_METRICS(spec);
  if (spec.kind === 'forecast')
    return `“${spec.label}” is a forecast the app computes from its own KV history (${spec.source}), not a stored series`;
  return `“${spec.label}” has no PromQL form in the signal specification`;
}

function routerPromql(name: string, spec: SignalSpec, b: Builder): SignalPromql {
  const windowed = (expr: string): SignalPromql => ({ ok: true, expr, windowS: b.w });
  const requests = or([
    b.rate(SMG.routerRequestsTotal),
    b.rate(SMG.httpRequestsTotal, TRAFFIC),
    b.rate(R.pdRequestsTotal),
    b.rate(R.requestsTotal, TRAFFIC),
  ]);
  // The era's error share, in the evaluator's order: smg ≥ 1.5 (path-labelled responses, traffic paths only),
  // smg < 1.5 (routed errors / routed requests), the upstream responses counter, PD router, regular router.
  const errorShare = or([
    share(
      b.increase(SMG.httpResponsesTotal, `path!="",status_code=~"5..",${TRAFFIC}`),
      b.increase(SMG.httpResponsesTotal, `path!="",${TRAFFIC}`),
    ),
    share(b.increase(SMG.routerRequestErrorsTotal), b.increase(SMG.routerRequestsTotal)),
    share(
      b.increase(R.upstreamHttpResponsesTotal, `status_code=~"5..",${TRAFFIC}`),
      b.increase(R.upstreamHttpResponsesTotal, TRAFFIC),
    ),
    share(
      `(${SGL_ROUTER_PD_ERRORS.map((m) => `(${b.increase(m)} or vector(0))`).join(' + ')})`,
      b.increase(R.pdRequestsTotal),
    ),
    share(b.increase(R.requestErrorsTotal, TRAFFIC), b.increase(R.requestsTotal, TRAFFIC)),
  ]);
  const health = or([`${b.v(SMG.workerHealth)} >= 0`, `${b.v(R.workerHealth)} >= 0`]);
  switch (name) {
    case 'router_requests_per_s':
      return windowed(requests);
    case 'router_error_share':
      return windowed(errorShare);
    case 'router_errors_per_s':
      return windowed(`(${requests}) * (${errorShare})`);
    case 'workers_total':
      // A worker removed from the router reads −1 until its gauge goes; it is not counted.
      return { ok: true, expr: `count(${health})` };
    case 'workers_healthy':
      return { ok: true, expr: `count((${health}) == 1) or (count(${health}) * 0)` };
  }
  if (spec.kind === 'quantile' && spec.q !== undefined)
    return windowed(or((spec.metrics ?? []).map((m) => b.quantile(spec.q!, m))));
  return { ok: false, why: noPromql(spec) };
}

/**
 * A GPU field from NVIDIA's DCGM exporter (the live value comes from nvidia-smi over SSH): the selector must
 * be that of the DCGM exporter's job on the GPU's host.
 */
const DCGM: Record<GpuField, (gpu: string, b: Builder) => string> = {
  util: (g, b) => `max(${b.v('DCGM_FI_DEV_GPU_UTIL', `gpu="${g}"`)})`,
  // DCGM reports frame-buffer memory in MiB; the console shows bytes.
  mem_used: (g, b) => `max(${b.v('DCGM_FI_DEV_FB_USED', `gpu="${g}"`)}) * 1048576`,
  mem_total: (g, b) =>
    `(max(${b.v('DCGM_FI_DEV_FB_USED', `gpu="${g}"`)}) + max(${b.v('DCGM_FI_DEV_FB_FREE', `gpu="${g}"`)})) * 1048576`,
  temp: (g, b) => `max(${b.v('DCGM_FI_DEV_GPU_TEMP', `gpu="${g}"`)})`,
  power: (g, b) => `max(${b.v('DCGM_FI_DEV_POWER_USAGE', `gpu="${g}"`)})`,
};

/**
 * The PromQL of a signal key of the specification without its scope (`decode.kv_ratio`, `router.router_requests_per_s`,
 * `decode.kv_rank.1.ratio`, `gpu.0.util`), over the series the scope's matchers select.
 */
export function signalPromql(key: string, scope: PromScope): SignalPromql {
  const b = new Builder(scope.selector, windowSeconds(scope.scrapeIntervalS));
  const parts = key.split('.');
  const [role] = parts;
  if (role === 'gpu' && parts.length === 3) {
    const field = parts[2] as GpuField;
    if (!/^\d+$/.test(parts[1]) || !(field in GPU_SIGNALS))
      return { ok: false, why: `“${key}” is not a GPU signal key (gpu.<index>.<field>)` };
    return { ok: true, expr: DCGM[field](parts[1], b) };
  }
  if ((role === 'prefill' || role === 'decode') && parts[1] === 'kv_rank' && parts.length >= 4) {
    const rank = parts.slice(2, -1).join('.');
    const r = `dp_rank="${rank.replace(/["\\]/g, '\\$&')}"`;
    const cap = `${b.perRank(S.maxTotalNumTokens, r)} > 0`;
    return {
      ok: true,
      expr: or([
        `max(${b.perRank(S.kvUsedTokens, r)} / on (${RANK}) (${cap}))`,
        `max(${b.perRank(S.fullTokenUsage, r)})`,
        `max(${b.perRank(S.numUsedTokens, r)} / on (${RANK}) (${cap}))`,
        `max(${b.perRank(S.tokenUsage, r)})`,
      ]),
    };
  }
  const name = parts.slice(1).join('.');
  if (role === 'router') {
    const spec = (ROUTER_SIGNALS as Record<string, SignalSpec>)[name];
    if (spec) return routerPromql(name, spec, b);
  } else if (role === 'prefill' || role === 'decode') {
    const spec = (SERVER_SIGNALS as Record<string, SignalSpec>)[name];
    if (spec?.notOn?.includes(role))
      return {
        ok: false,
        why: `“${spec.label}” is not read on ${role} servers: ${spec.caveat ?? ''}`.trim(),
      };
    if (spec) return serverPromql(name, spec, b);
  }
  return { ok: false, why: `“${key}” is not a signal of the specification` };
}

/** Every key with PromQL (for the parse test, the Grafana export and the docs), server signals per role. */
export function promqlKeys(): string[] {
  const keys: string[] = [];
  for (const role of ['prefill', 'decode'] as const)
    for (const name of Object.keys(SERVER_SIGNALS)) keys.push(`${role}.${name}`);
  for (const name of Object.keys(ROUTER_SIGNALS)) keys.push(`router.${name}`);
  for (const field of Object.keys(GPU_SIGNALS)) keys.push(`gpu.0.${field}`);
  keys.push('decode.kv_rank.1.ratio');
  return keys;
}
