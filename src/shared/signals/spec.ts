// The signal specification: every figure PD Console shows, declared once. The live evaluator and review
// (src/main/core/signals/evaluate), the signal catalogue, the CLI headline, the "not exposed by this server
// version" messages and the renderer's keys all derive from these tables, so a renamed upstream metric is one
// edit (metric-names.ts) and a misspelt key fails to compile (SignalKey).
//
// Per signal: label and unit; kind (how it is computed); the upstream families it reads, newest name first (an
// older name is read only when the newer one is absent from the scrape); how dp ranks combine (replicas inside
// one dp rank — tp/pp/moe_ep ranks, the pid label — repeat one value and collapse with max; totals under
// priority="" win over per-priority series); which roles should expose it; and why it may be missing, naming
// the version or flag that adds it.
import type { Role } from '../domain';
import { SGLANG as S, SGL_ROUTER as R, SGL_ROUTER_PD_ERRORS, SMG } from './metric-names';

/** How a signal's numbers read; the renderer formats by this (tokens with k/M, %, GB/s, ms…). */
export type SignalUnit =
  | 'ratio'
  | 'tokens'
  | 'requests'
  | 'tokens_per_s'
  | 'requests_per_s'
  | 'per_min'
  | 'seconds'
  | 'ms'
  | 'gb_per_s'
  | 'mb'
  | 'bytes'
  | 'percent'
  | 'celsius'
  | 'watts'
  | 'count'
  | 'bool';

/**
 * state: a systemd/health/scrape fact, not from /metrics. gauge: a point-in-time value of one scrape.
 * rate: sum(rate(counter[w])) × scale. quantile: histogram_quantile(q, sum by (le) (increase(bucket[w]))).
 * ratio: a quotient of window increases or of gauges. forecast: a regression over the signal history.
 */
export type SignalKind = 'state' | 'gauge' | 'rate' | 'quantile' | 'ratio' | 'forecast';

/** How the per-dp-rank values of a family combine into one figure. */
export type RankAggregation = 'sum' | 'max' | 'min' | 'mean';

/** Roles whose scrape should carry the signal's family; a miss there is reported as "not exposed". */
export type ExpectedOn = 'any' | 'not-prefill' | 'not-decode' | 'prefill' | 'decode' | 'pd' | 'never';

export interface SignalSpec {
  label: string;
  unit: SignalUnit;
  kind: SignalKind;
  /** What the figure is, as the operator would look it up (PromQL, a command, an endpoint). */
  source: string;
  /** Upstream families read, newest name first. */
  metrics?: readonly string[];
  /** gauge: how dp ranks combine. */
  ranks?: RankAggregation;
  /** gauge: later SGLang versions export it as a histogram; the mean since start (_sum/_count) is read then. */
  histogramForm?: boolean;
  /** quantile: which quantile. */
  q?: number;
  /** rate: the per-second rate is multiplied by this (60 → per minute). */
  scale?: number;
  /** rate: a counter that is present but has no two points in the window reads 0, not "no data". */
  zeroWhenPresent?: boolean;
  /** A known way the figure misleads. */
  caveat?: string;
  expectedOn?: ExpectedOn;
  /** Roles on which the family is meaningless and is not read at all. */
  notOn?: readonly Role[];
  /** Why the figure may be missing, naming the SGLang / router version or flag that adds it. */
  missing?: string;
}

const ENABLE_METRICS =
  'scheduler gauge exported by every SGLang version with --enable-metrics; missing means the scheduler has not logged stats yet or this is not an SGLang server';
const FIRST_INCREMENT =
  'appears after the first request of its kind (labelled counters start at their first increment), or not in this SGLang version';
const PD_LAZY = `PD only; ${FIRST_INCREMENT}`;
const PD_PREFILL = 'PD prefill gauge; absent when the server does not run with --disaggregation-mode prefill';
const PD_DECODE = 'PD decode gauge; absent when the server does not run with --disaggregation-mode decode';
const KV_TRANSFER_ERA =
  'PD only: kv_transfer latency and speed since SGLang autumn 2025 (E1), bootstrap/alloc/total_mb since early 2026 (E2); histograms from PR #19009; absent until the first transfer';

const state = (label: string, unit: SignalUnit, source: string): SignalSpec => ({
  label,
  unit,
  kind: 'state',
  source,
});

function quantile(base: readonly string[], what: string, q: number, unit: 'seconds' | 'ms'): SignalSpec {
  const p = `p${Math.round(q * 100)}`;
  return {
    label: `${what} ${p}`,
    unit,
    kind: 'quantile',
    q,
    metrics: base,
    source: `histogram_quantile(${q}, sum by (le) (increase(${base[0]}_bucket[60s])))`,
    missing: FIRST_INCREMENT,
  };
}

function kvTransferGauge(
  metric: string,
  label: string,
  unit: SignalUnit,
  ranks: RankAggregation,
): SignalSpec {
  return {
    label,
    unit,
    kind: 'gauge',
    metrics: [metric],
    ranks,
    histogramForm: true,
    source: `${metric} (gauge: the last request's value; histogram: _sum / _count since start)`,
    missing: KV_TRANSFER_ERA,
  };
}

const failuresPerMin = (metric: string, label: string): SignalSpec => ({
  label,
  unit: 'per_min',
  kind: 'rate',
  metrics: [metric],
  scale: 60,
  zeroWhenPresent: true,
  source: `rate(${metric}[60s]) × 60`,
  caveat: 'the counter appears only after the first failure',
  missing: PD_LAZY,
});

/** Signals of an SGLang server (prefill or decode). */
export const SERVER_SIGNALS = {
  active: state('systemd active', 'bool', 'systemctl show ActiveState'),
  health_ok: state('health check passing', 'bool', 'GET /health'),
  restarts: state('restarts (NRestarts)', 'count', 'systemctl show NRestarts'),
  metrics_ok: state('/metrics answered', 'bool', 'GET /metrics'),
  scrape_ms: state('scrape duration', 'ms', 'time of GET /metrics through the tunnel'),
  running: {
    label: 'running requests',
    unit: 'requests',
    kind: 'gauge',
    metrics: [S.runningReqs],
    ranks: 'sum',
    expectedOn: 'any',
    source: S.runningReqs,
    caveat: 'reads 0 on PD prefill servers before SGLang PR #31495 (2026-07, the E4 era)',
    missing: ENABLE_METRICS,
  },
  queued: {
    label: 'queued requests',
    unit: 'requests',
    kind: 'gauge',
    metrics: [S.queueReqs],
    ranks: 'sum',
    expectedOn: 'any',
    source: S.queueReqs,
    missing: ENABLE_METRICS,
  },
  prefill_bootstrap_queue: {
    label: 'bootstrap queue',
    unit: 'requests',
    kind: 'gauge',
    metrics: [S.prefillBootstrapQueue, S.prefillPreallocQueueLegacy],
    ranks: 'sum',
    expectedOn: 'prefill',
    source: `${S.prefillBootstrapQueue} (before PR #24341: ${S.prefillPreallocQueueLegacy})`,
    missing: PD_PREFILL,
  },
  prefill_inflight_queue: {
    label: 'inflight (KV being sent)',
    unit: 'requests',
    kind: 'gauge',
    metrics: [S.prefillInflightQueue],
    ranks: 'sum',
    expectedOn: 'prefill',
    source: S.prefillInflightQueue,
    missing: PD_PREFILL,
  },
  decode_prealloc_queue: {
    label: 'prealloc queue (waiting for KV slots)',
    unit: 'requests',
    kind: 'gauge',
    metrics: [S.decodePreallocQueue],
    ranks: 'sum',
    expectedOn: 'decode',
    source: S.decodePreallocQueue,
    missing: PD_DECODE,
  },
  decode_transfer_queue: {
    label: 'transfer queue (waiting for KV)',
    unit: 'requests',
    kind: 'gauge',
    metrics: [S.decodeTransferQueue],
    ranks: 'sum',
    expectedOn: 'decode',
    source: S.decodeTransferQueue,
    missing: PD_DECODE,
  },
  // Prefill servers generate no decode tokens; their gen_throughput may never be written.
  gen_throughput: {
    label: 'generation throughput (gauge)',
    unit: 'tokens_per_s',
    kind: 'gauge',
    metrics: [S.genThroughput],
    ranks: 'sum',
    expectedOn: 'not-prefill',
    source: S.genThroughput,
    caveat: 'refreshed every --decode-log-interval steps; 0 when idle',
    missing: ENABLE_METRICS,
  },
  // Zeroed by every decode log: on a decode server it would read ~0 however well its prefix cache works.
  cache_hit_rate: {
    label: 'prefix cache hit rate (last prefill batch)',
    unit: 'ratio',
    kind: 'gauge',
    metrics: [S.cacheHitRate],
    ranks: 'mean',
    expectedOn: 'not-decode',
    notOn: ['decode'],
    source: S.cacheHitRate,
    caveat:
      'the last prefill batch’s ratio, zeroed at every decode log; not read on decode servers (it reads ~0 there). The 60 s figure from the counters is the one to trust',
    missing: ENABLE_METRICS,
  },
  cache_hit_rate_window: {
    label: 'cache hit rate (60 s)',
    unit: 'ratio',
    kind: 'ratio',
    metrics: [S.cachedTokensTotal, S.promptTokensTotal],
    source: `increase(${S.cachedTokensTotal}[60s]) / increase(${S.promptTokensTotal}[60s]) (cache_source="total" when labelled)`,
    missing: FIRST_INCREMENT,
  },
  pending_prealloc_token_usage: {
    label: 'pending prealloc token usage',
    unit: 'ratio',
    kind: 'gauge',
    metrics: [S.pendingPreallocTokenUsage],
    ranks: 'max',
    expectedOn: 'decode',
    source: S.pendingPreallocTokenUsage,
    missing: 'decode gauge added in SGLang autumn 2025 (E1); older versions do not export it',
  },
  retracted: {
    label: 'retracted in the last log interval',
    unit: 'requests',
    kind: 'gauge',
    metrics: [S.retractedReqs],
    ranks: 'sum',
    expectedOn: 'never',
    source: `${S.retractedReqs} (summed over pid and dp ranks)`,
    caveat: 'a count per scheduler log interval, reset after each log; not a queue length',
    missing: 'not exported by every SGLang version',
  },
  retracted_per_min: {
    label: 'retractions',
    unit: 'per_min',
    kind: 'rate',
    metrics: [S.retractedRequestsTotal],
    scale: 60,
    zeroWhenPresent: true,
    source: `rate(${S.retractedRequestsTotal}[60s]) × 60`,
    caveat: 'newer SGLang versions only; the counter appears after the first retraction',
    missing: `newer SGLang versions only; ${FIRST_INCREMENT}`,
  },
  kv_transfer_latency_ms: kvTransferGauge(S.kvTransferLatencyMs, 'KV transfer latency (mean)', 'ms', 'max'),
  kv_transfer_speed_gb_s: {
    ...kvTransferGauge(S.kvTransferSpeedGbS, 'KV transfer speed (per request)', 'gb_per_s', 'min'),
    caveat: 'inflated by chunked prefill (SGLang PRs #24012, #31877)',
  },
  kv_transfer_bootstrap_ms: kvTransferGauge(S.kvTransferBootstrapMs, 'KV bootstrap time', 'ms', 'max'),
  kv_transfer_alloc_ms: kvTransferGauge(S.kvTransferAllocMs, 'KV alloc wait', 'ms', 'max'),
  kv_transfer_total_mb: kvTransferGauge(S.kvTransferTotalMb, 'KV per request', 'mb', 'max'),
  bootstrap_failed_total: {
    label: 'bootstrap failures (since start)',
    unit: 'count',
    kind: 'gauge',
    metrics: [S.bootstrapFailedTotal],
    ranks: 'sum',
    source: S.bootstrapFailedTotal,
    missing: PD_LAZY,
  },
  transfer_failed_total: {
    label: 'KV transfer failures (since start)',
    unit: 'count',
    kind: 'gauge',
    metrics: [S.transferFailedTotal],
    ranks: 'sum',
    source: S.transferFailedTotal,
    missing: PD_LAZY,
  },
  transfer_failed_per_min: failuresPerMin(S.transferFailedTotal, 'KV transfer failures'),
  bootstrap_failed_per_min: failuresPerMin(S.bootstrapFailedTotal, 'bootstrap failures'),
  ttft_p50_s: quantile([S.ttft], 'TTFT', 0.5, 'seconds'),
  ttft_p90_s: quantile([S.ttft], 'TTFT', 0.9, 'seconds'),
  ttft_p99_s: quantile([S.ttft], 'TTFT', 0.99, 'seconds'),
  itl_p50_s: quantile([S.itl, S.tpotLegacy], 'ITL', 0.5, 'seconds'),
  itl_p90_s: quantile([S.itl, S.tpotLegacy], 'ITL', 0.9, 'seconds'),
  itl_p99_s: quantile([S.itl, S.tpotLegacy], 'ITL', 0.99, 'seconds'),
  e2e_p50_s: quantile([S.e2e], 'E2E', 0.5, 'seconds'),
  e2e_p90_s: quantile([S.e2e], 'E2E', 0.9, 'seconds'),
  e2e_p99_s: quantile([S.e2e], 'E2E', 0.99, 'seconds'),
  kv_transfer_latency_p50_ms: {
    ...quantile([S.kvTransferLatencyMs], 'KV transfer latency', 0.5, 'ms'),
    missing: KV_TRANSFER_ERA,
  },
  kv_transfer_latency_p90_ms: {
    ...quantile([S.kvTransferLatencyMs], 'KV transfer latency', 0.9, 'ms'),
    missing: KV_TRANSFER_ERA,
  },
  kv_transfer_latency_p99_ms: {
    ...quantile([S.kvTransferLatencyMs], 'KV transfer latency', 0.99, 'ms'),
    missing: KV_TRANSFER_ERA,
  },
  prompt_tokens_per_s: {
    label: 'prompt tokens/s',
    unit: 'tokens_per_s',
    kind: 'rate',
    metrics: [S.promptTokensTotal],
    source: `rate(${S.promptTokensTotal}[60s])`,
    missing: FIRST_INCREMENT,
  },
  generation_tokens_per_s: {
    label: 'generation tokens/s',
    unit: 'tokens_per_s',
    kind: 'rate',
    metrics: [S.generationTokensTotal],
    source: `rate(${S.generationTokensTotal}[60s])`,
    missing: FIRST_INCREMENT,
  },
  requests_per_s: {
    label: 'requests/s',
    unit: 'requests_per_s',
    kind: 'rate',
    metrics: [S.requestsTotal, `${S.e2e}_count`],
    source: `rate(${S.requestsTotal}[60s]) (else rate(${S.e2e}_count[60s]))`,
    missing: FIRST_INCREMENT,
  },
  kv_transfer_gb_s: {
    label: 'KV transfer rate',
    unit: 'gb_per_s',
    kind: 'ratio',
    metrics: [S.kvTransferSpeedGbS, S.kvTransferTotalMb],
    source: `${S.kvTransferSpeedGbS} gauge, else Δsum/Δcount of its histogram, else rate(${S.kvTransferTotalMb}_sum)/1000`,
    caveat: 'per-request speeds are inflated by chunked prefill; the total_mb rate is not',
    missing: KV_TRANSFER_ERA,
  },
  kv_ratio: {
    label: 'KV usage',
    unit: 'ratio',
    kind: 'ratio',
    metrics: [S.kvUsedTokens, S.fullTokenUsage, S.numUsedTokens, S.tokenUsage],
    source:
      'used / capacity summed over dp ranks (kv_used_tokens, full_token_usage, num_used_tokens or token_usage; see the KV panel)',
    missing:
      'every SGLang version exports token_usage; a token count needs the capacity too (max_total_num_tokens gauge from early 2026 (E2), else /server_info)',
  },
  kv_fullest_rank_ratio: {
    label: 'KV usage of the fullest dp rank',
    unit: 'ratio',
    kind: 'ratio',
    source: 'max over dp ranks of the rank’s used / capacity; equals KV usage with one rank',
    caveat: 'a request is refused by the rank it lands on: the KV alert watches this figure',
  },
  kv_used: {
    label: 'KV used tokens',
    unit: 'tokens',
    kind: 'gauge',
    source: `${S.kvUsedTokens} or equivalent (see KV usage)`,
  },
  kv_evictable: {
    label: 'KV evictable tokens',
    unit: 'tokens',
    kind: 'gauge',
    metrics: [S.kvEvictableTokens],
    source: `${S.kvEvictableTokens} (v0.5.11+)`,
    missing: 'added with the KV token gauges of the newest SGLang era (E4, PR #22726)',
  },
  kv_free: {
    label: 'KV free tokens',
    unit: 'tokens',
    kind: 'gauge',
    source: `${S.kvAvailableTokens}, else capacity − used`,
  },
  kv_capacity: {
    label: 'KV capacity',
    unit: 'tokens',
    kind: 'gauge',
    source: `${S.maxTotalNumTokens}, else /server_info`,
  },
  kv_ttf_s: {
    label: 'KV time to full',
    unit: 'seconds',
    kind: 'forecast',
    source: 'least-squares slope of KV usage over the last 5 min',
  },
} as const satisfies Record<string, SignalSpec>;

const ROUTER_REQUESTS = [SMG.routerRequestsTotal, SMG.httpRequestsTotal, R.pdRequestsTotal, R.requestsTotal];
const ROUTER_DURATION = [SMG.routerRequestDuration, R.pdRequestDuration, R.requestDuration];

/** Signals of the router / model gateway. */
export const ROUTER_SIGNALS = {
  active: SERVER_SIGNALS.active,
  health_ok: state('readiness passing', 'bool', 'GET /readiness'),
  restarts: SERVER_SIGNALS.restarts,
  metrics_ok: state('Prometheus port answered', 'bool', 'GET :prometheus-port/metrics'),
  scrape_ms: SERVER_SIGNALS.scrape_ms,
  router_requests_per_s: {
    label: 'router requests/s',
    unit: 'requests_per_s',
    kind: 'rate',
    metrics: ROUTER_REQUESTS,
    source: `rate(${SMG.routerRequestsTotal}) | rate(${R.pdRequestsTotal}) (PD sglang-router ≤ 0.2.4) | rate(${R.requestsTotal})`,
    missing: `${FIRST_INCREMENT}; smg and sglang-router ≤ 0.2.4 record it on their --prometheus-port`,
  },
  router_error_share: {
    label: 'router error share',
    unit: 'ratio',
    kind: 'ratio',
    metrics: [
      SMG.httpResponsesTotal,
      SMG.routerRequestErrorsTotal,
      R.upstreamHttpResponsesTotal,
      ...SGL_ROUTER_PD_ERRORS,
      R.pdRequestsTotal,
    ],
    source: `smg ≥ 1.5: ${SMG.httpResponsesTotal}{status_code=~"5.."} / all, on traffic paths | smg < 1.5: ${SMG.routerRequestErrorsTotal} / ${SMG.routerRequestsTotal} | sglang-router ≤ 0.2.4: sgl_router_pd_{,prefill_,decode_}errors_total / ${R.pdRequestsTotal}`,
    caveat:
      'smg before 1.5 has no path label on smg_http_responses_total, so the share there is errors of any kind among routed requests (the console’s own /health, /readiness and /workers polls are not counted either way)',
    missing: FIRST_INCREMENT,
  },
  router_errors_per_s: {
    label: 'router errors/s',
    unit: 'requests_per_s',
    kind: 'rate',
    source: 'router requests/s × 5xx share',
  },
  router_latency_p50_s: {
    ...quantile(ROUTER_DURATION, 'router latency', 0.5, 'seconds'),
    source: `histogram_quantile(0.5, ${SMG.routerRequestDuration} | ${R.pdRequestDuration})`,
  },
  router_latency_p99_s: {
    ...quantile(ROUTER_DURATION, 'router latency', 0.99, 'seconds'),
    source: `histogram_quantile(0.99, ${SMG.routerRequestDuration} | ${R.pdRequestDuration})`,
  },
  workers_healthy: {
    label: 'healthy workers',
    unit: 'count',
    kind: 'gauge',
    source: `${SMG.workerHealth} | ${R.workerHealth}`,
  },
  workers_total: {
    label: 'workers',
    unit: 'count',
    kind: 'gauge',
    source: `${SMG.workerHealth} | ${R.workerHealth}`,
  },
} as const satisfies Record<string, SignalSpec>;

/** Fields of one GPU (nvidia-smi). */
export const GPU_SIGNALS = {
  util: state('utilization', 'percent', 'nvidia-smi utilization.gpu'),
  mem_used: state('memory used', 'bytes', 'nvidia-smi memory.used'),
  mem_total: state('memory total', 'bytes', 'nvidia-smi memory.total'),
  temp: state('temperature', 'celsius', 'nvidia-smi temperature.gpu'),
  power: state('power draw', 'watts', 'nvidia-smi power.draw'),
} as const satisfies Record<string, SignalSpec>;

export type ServerSignal = keyof typeof SERVER_SIGNALS;
export type RouterSignal = keyof typeof ROUTER_SIGNALS;
export type GpuField = keyof typeof GPU_SIGNALS;
export type ServerRole = Exclude<Role, 'router'>;

/** A dp rank's own KV ratio (`decode.kv_rank.1.ratio`), present when a server runs ≥ 2 dp ranks. */
export type KvRankKey = `${ServerRole}.kv_rank.${string}.ratio`;

/** Every key a chart, alert or API call can name. */
export type SignalKey =
  `${ServerRole}.${ServerSignal}` | `router.${RouterSignal}` | `gpu.${number}.${GpuField}` | KvRankKey;

/** The signal names of a role, newest definitions. */
export function specsFor(role: Role): Readonly<Record<string, SignalSpec>> {
  return role === 'router' ? ROUTER_SIGNALS : SERVER_SIGNALS;
}

/** The key of a role's signal, checked against the role's table. */
export function signalKey<R extends Role>(
  role: R,
  signal: R extends 'router' ? RouterSignal : ServerSignal,
): SignalKey {
  return `${role}.${signal}` as SignalKey;
}

export function kvRankKey(role: ServerRole, rank: string): KvRankKey {
  return `${role}.kv_rank.${rank}.ratio`;
}

/** The queues of each server role, the scheduler's own first (alerts and restarts add them up). */
export const QUEUE_SIGNALS = {
  prefill: ['queued', 'prefill_bootstrap_queue', 'prefill_inflight_queue'],
  decode: ['queued', 'decode_prealloc_queue', 'decode_transfer_queue'],
} as const satisfies Record<ServerRole, readonly ServerSignal[]>;

/** Every queue key of a deployment (`prefill.queued`, …). */
export const QUEUE_KEYS: readonly SignalKey[] = (['prefill', 'decode'] as const).flatMap((role) =>
  QUEUE_SIGNALS[role].map((q) => signalKey(role, q)),
);
