// What each signal key means: label, unit, where the figure comes from, and how it can mislead.
// Keys are `<role>.<signal>` for services and `gpu.<index>.<field>` for GPUs; the renderer formats and
// labels charts from this list and names the expected metric when a key has no data.
import type { SignalInfo, SignalUnit } from '@shared/contract';
import type { Role } from '@shared/domain';

interface Def {
  label: string;
  unit: SignalUnit;
  source: string;
  caveat?: string;
  /** Sample names whose presence means the server exposes the signal (for "not exposed" hints). */
  metrics?: string[];
}

const q = (base: string, what: string, p: string): Def => ({
  label: `${what} ${p}`,
  unit: 'seconds',
  source: `histogram_quantile(0.${p.slice(1)}, increase(${base}_bucket[60s]))`,
  metrics: [`${base}_bucket`],
});

const TTFT = 'sglang:time_to_first_token_seconds';
const ITL = 'sglang:inter_token_latency_seconds';
const E2E = 'sglang:e2e_request_latency_seconds';

/** Signals of an SGLang server (prefill or decode). */
export const SERVER_DEFS: Record<string, Def> = {
  active: { label: 'systemd active', unit: 'bool', source: 'systemctl show ActiveState' },
  health_ok: { label: 'health check passing', unit: 'bool', source: 'GET /health' },
  restarts: { label: 'restarts (NRestarts)', unit: 'count', source: 'systemctl show NRestarts' },
  metrics_ok: { label: '/metrics answered', unit: 'bool', source: 'GET /metrics' },
  scrape_ms: { label: 'scrape duration', unit: 'ms', source: 'time of GET /metrics through the tunnel' },
  running: {
    label: 'running requests',
    unit: 'requests',
    source: 'sglang:num_running_reqs',
    caveat: 'reads 0 on PD prefill servers before SGLang PR #31495 (2026-07)',
    metrics: ['sglang:num_running_reqs'],
  },
  queued: {
    label: 'queued requests',
    unit: 'requests',
    source: 'sglang:num_queue_reqs',
    metrics: ['sglang:num_queue_reqs'],
  },
  prefill_bootstrap_queue: {
    label: 'bootstrap queue',
    unit: 'requests',
    source: 'sglang:num_prefill_bootstrap_queue_reqs (before PR #24341: …_prealloc_queue_reqs)',
    metrics: ['sglang:num_prefill_bootstrap_queue_reqs', 'sglang:num_prefill_prealloc_queue_reqs'],
  },
  prefill_inflight_queue: {
    label: 'inflight (KV being sent)',
    unit: 'requests',
    source: 'sglang:num_prefill_inflight_queue_reqs',
    metrics: ['sglang:num_prefill_inflight_queue_reqs'],
  },
  decode_prealloc_queue: {
    label: 'prealloc queue (waiting for KV slots)',
    unit: 'requests',
    source: 'sglang:num_decode_prealloc_queue_reqs',
    metrics: ['sglang:num_decode_prealloc_queue_reqs'],
  },
  decode_transfer_queue: {
    label: 'transfer queue (waiting for KV)',
    unit: 'requests',
    source: 'sglang:num_decode_transfer_queue_reqs',
    metrics: ['sglang:num_decode_transfer_queue_reqs'],
  },
  gen_throughput: {
    label: 'generation throughput (gauge)',
    unit: 'tokens_per_s',
    source: 'sglang:gen_throughput',
    caveat: 'refreshed every --decode-log-interval steps; 0 when idle',
    metrics: ['sglang:gen_throughput'],
  },
  cache_hit_rate: {
    label: 'prefix cache hit rate (last prefill batch)',
    unit: 'ratio',
    source: 'sglang:cache_hit_rate',
    caveat:
      'the last prefill batch’s ratio, zeroed at every decode log; not read on decode servers (it reads ~0 there). The 60 s figure from the counters is the one to trust',
    metrics: ['sglang:cache_hit_rate'],
  },
  cache_hit_rate_window: {
    label: 'cache hit rate (60 s)',
    unit: 'ratio',
    source: 'increase(sglang:cached_tokens_total) / increase(sglang:prompt_tokens_total)',
    metrics: ['sglang:cached_tokens_total'],
  },
  pending_prealloc_token_usage: {
    label: 'pending prealloc token usage',
    unit: 'ratio',
    source: 'sglang:pending_prealloc_token_usage',
    metrics: ['sglang:pending_prealloc_token_usage'],
  },
  retracted: {
    label: 'retracted in the last log interval',
    unit: 'requests',
    source: 'sglang:num_retracted_reqs (summed over pid and dp ranks)',
    caveat: 'a count per scheduler log interval, reset after each log; not a queue length',
  },
  retracted_per_min: {
    label: 'retractions',
    unit: 'per_min',
    source: 'rate(sglang:num_retracted_requests_total[60s]) × 60',
    caveat: 'newer SGLang versions only; the counter appears after the first retraction',
    metrics: ['sglang:num_retracted_requests_total'],
  },
  kv_transfer_latency_ms: {
    label: 'KV transfer latency (mean)',
    unit: 'ms',
    source: 'sglang:kv_transfer_latency_ms (gauge: last request; histogram: _sum/_count since start)',
    metrics: ['sglang:kv_transfer_latency_ms', 'sglang:kv_transfer_latency_ms_count'],
  },
  kv_transfer_speed_gb_s: {
    label: 'KV transfer speed (per request)',
    unit: 'gb_per_s',
    source: 'sglang:kv_transfer_speed_gb_s',
    caveat: 'inflated by chunked prefill (SGLang PRs #24012, #31877)',
    metrics: ['sglang:kv_transfer_speed_gb_s', 'sglang:kv_transfer_speed_gb_s_count'],
  },
  kv_transfer_bootstrap_ms: {
    label: 'KV bootstrap time',
    unit: 'ms',
    source: 'sglang:kv_transfer_bootstrap_ms',
  },
  kv_transfer_alloc_ms: { label: 'KV alloc wait', unit: 'ms', source: 'sglang:kv_transfer_alloc_ms' },
  kv_transfer_total_mb: { label: 'KV per request', unit: 'mb', source: 'sglang:kv_transfer_total_mb' },
  bootstrap_failed_total: {
    label: 'bootstrap failures (since start)',
    unit: 'count',
    source: 'sglang:num_bootstrap_failed_reqs_total',
  },
  transfer_failed_total: {
    label: 'KV transfer failures (since start)',
    unit: 'count',
    source: 'sglang:num_transfer_failed_reqs_total',
  },
  transfer_failed_per_min: {
    label: 'KV transfer failures',
    unit: 'per_min',
    source: 'rate(sglang:num_transfer_failed_reqs_total[60s]) × 60',
    caveat: 'the counter appears only after the first failure',
  },
  bootstrap_failed_per_min: {
    label: 'bootstrap failures',
    unit: 'per_min',
    source: 'rate(sglang:num_bootstrap_failed_reqs_total[60s]) × 60',
  },
  ttft_p50_s: q(TTFT, 'TTFT', 'p50'),
  ttft_p90_s: q(TTFT, 'TTFT', 'p90'),
  ttft_p99_s: q(TTFT, 'TTFT', 'p99'),
  itl_p50_s: q(ITL, 'ITL', 'p50'),
  itl_p90_s: q(ITL, 'ITL', 'p90'),
  itl_p99_s: q(ITL, 'ITL', 'p99'),
  e2e_p50_s: q(E2E, 'E2E', 'p50'),
  e2e_p90_s: q(E2E, 'E2E', 'p90'),
  e2e_p99_s: q(E2E, 'E2E', 'p99'),
  kv_transfer_latency_p50_ms: {
    label: 'KV transfer latency p50',
    unit: 'ms',
    source: 'histogram_quantile(0.5, increase(sglang:kv_transfer_latency_ms_bucket[60s]))',
    metrics: ['sglang:kv_transfer_latency_ms_bucket'],
  },
  kv_transfer_latency_p90_ms: {
    label: 'KV transfer latency p90',
    unit: 'ms',
    source: 'histogram_quantile(0.9, increase(sglang:kv_transfer_latency_ms_bucket[60s]))',
    metrics: ['sglang:kv_transfer_latency_ms_bucket'],
  },
  kv_transfer_latency_p99_ms: {
    label: 'KV transfer latency p99',
    unit: 'ms',
    source: 'histogram_quantile(0.99, increase(sglang:kv_transfer_latency_ms_bucket[60s]))',
    metrics: ['sglang:kv_transfer_latency_ms_bucket'],
  },
  prompt_tokens_per_s: {
    label: 'prompt tokens/s',
    unit: 'tokens_per_s',
    source: 'rate(sglang:prompt_tokens_total[60s])',
    metrics: ['sglang:prompt_tokens_total'],
  },
  generation_tokens_per_s: {
    label: 'generation tokens/s',
    unit: 'tokens_per_s',
    source: 'rate(sglang:generation_tokens_total[60s])',
    metrics: ['sglang:generation_tokens_total'],
  },
  requests_per_s: {
    label: 'requests/s',
    unit: 'requests_per_s',
    source: 'rate(sglang:num_requests_total[60s]) (else e2e histogram _count)',
  },
  kv_transfer_gb_s: {
    label: 'KV transfer rate',
    unit: 'gb_per_s',
    source:
      'sglang:kv_transfer_speed_gb_s gauge, else Δsum/Δcount of its histogram, else rate(kv_transfer_total_mb_sum)/1000',
    caveat: 'per-request speeds are inflated by chunked prefill; the total_mb rate is not',
  },
  kv_ratio: {
    label: 'KV usage',
    unit: 'ratio',
    source:
      'used / capacity summed over dp ranks (kv_used_tokens, full_token_usage, num_used_tokens or token_usage; see the KV panel)',
  },
  kv_fullest_rank_ratio: {
    label: 'KV usage of the fullest dp rank',
    unit: 'ratio',
    source: 'max over dp ranks of the rank’s used / capacity; equals KV usage with one rank',
    caveat: 'a request is refused by the rank it lands on: the KV alert watches this figure',
  },
  kv_used: { label: 'KV used tokens', unit: 'tokens', source: 'sglang:kv_used_tokens or equivalent' },
  kv_evictable: {
    label: 'KV evictable tokens',
    unit: 'tokens',
    source: 'sglang:kv_evictable_tokens (v0.5.11+)',
    metrics: ['sglang:kv_evictable_tokens'],
  },
  kv_free: {
    label: 'KV free tokens',
    unit: 'tokens',
    source: 'sglang:kv_available_tokens, else capacity − used',
  },
  kv_capacity: {
    label: 'KV capacity',
    unit: 'tokens',
    source: 'sglang:max_total_num_tokens, else /server_info',
  },
  kv_ttf_s: {
    label: 'KV time to full',
    unit: 'seconds',
    source: 'least-squares slope of KV usage over the last 5 min',
  },
};

/** Signals of the router / model gateway. */
export const ROUTER_DEFS: Record<string, Def> = {
  active: SERVER_DEFS.active,
  health_ok: { label: 'readiness passing', unit: 'bool', source: 'GET /readiness' },
  restarts: SERVER_DEFS.restarts,
  metrics_ok: { label: 'Prometheus port answered', unit: 'bool', source: 'GET :prometheus-port/metrics' },
  scrape_ms: SERVER_DEFS.scrape_ms,
  router_requests_per_s: {
    label: 'router requests/s',
    unit: 'requests_per_s',
    source:
      'rate(smg_router_requests_total) | rate(sgl_router_pd_requests_total) (PD sglang-router ≤ 0.2.4) | rate(sgl_router_requests_total)',
    metrics: [
      'smg_router_requests_total',
      'smg_http_requests_total',
      'sgl_router_pd_requests_total',
      'sgl_router_requests_total',
    ],
  },
  router_error_share: {
    label: 'router 5xx share',
    unit: 'ratio',
    source:
      'smg_http_responses_total{status_code=~"5.."} / all | sgl_router_pd_{,prefill_,decode_}errors_total / sgl_router_pd_requests_total',
    caveat:
      'smg before 1.5 has no path label on smg_http_responses_total: the console’s own /health, /readiness and /workers polls are counted in the share (excluded where the label exists)',
  },
  router_errors_per_s: {
    label: 'router errors/s',
    unit: 'requests_per_s',
    source: 'router requests/s × 5xx share',
  },
  router_latency_p50_s: {
    label: 'router latency p50',
    unit: 'seconds',
    source:
      'histogram_quantile(0.5, smg_router_request_duration_seconds | sgl_router_pd_request_duration_seconds)',
  },
  router_latency_p99_s: {
    label: 'router latency p99',
    unit: 'seconds',
    source:
      'histogram_quantile(0.99, smg_router_request_duration_seconds | sgl_router_pd_request_duration_seconds)',
  },
  workers_healthy: {
    label: 'healthy workers',
    unit: 'count',
    source: 'smg_worker_health | sgl_router_worker_health',
  },
  workers_total: { label: 'workers', unit: 'count', source: 'smg_worker_health | sgl_router_worker_health' },
};

export const GPU_DEFS: Record<string, Def> = {
  util: { label: 'utilization', unit: 'percent', source: 'nvidia-smi utilization.gpu' },
  mem_used: { label: 'memory used', unit: 'bytes', source: 'nvidia-smi memory.used' },
  mem_total: { label: 'memory total', unit: 'bytes', source: 'nvidia-smi memory.total' },
  temp: { label: 'temperature', unit: 'celsius', source: 'nvidia-smi temperature.gpu' },
  power: { label: 'power draw', unit: 'watts', source: 'nvidia-smi power.draw' },
};

export function defsFor(role: Role): Record<string, Def> {
  return role === 'router' ? ROUTER_DEFS : SERVER_DEFS;
}

export function expectedMetrics(role: Role, signal: string): string[] | undefined {
  return defsFor(role)[signal]?.metrics;
}

/** Keys of one dp rank's KV ratio (`decode.kv_rank.1.ratio`), written only when a server has ≥ 2 dp ranks. */
export function kvRankKey(role: Role, rank: string): string {
  return `${role}.kv_rank.${rank}.ratio`;
}

/** The catalogue of a deployment: every role's signals, its dp ranks' KV ratios and the GPUs it has seen. */
export function catalogFor(
  roles: readonly Role[],
  gpuIndices: readonly number[],
  kvRanks: Partial<Record<Role, readonly string[]>> = {},
): SignalInfo[] {
  const out: SignalInfo[] = [];
  for (const role of roles) {
    for (const [name, d] of Object.entries(defsFor(role))) {
      out.push({
        key: `${role}.${name}`,
        label: `${role} ${d.label}`,
        unit: d.unit,
        source: d.source,
        caveat: d.caveat,
      });
    }
  }
  for (const role of roles) {
    for (const rank of kvRanks[role] ?? []) {
      out.push({
        key: kvRankKey(role, rank),
        label: `${role} KV usage, dp rank ${rank}`,
        unit: 'ratio',
        source: `the dp_rank="${rank}" series of the KV source, over that rank’s own capacity`,
      });
    }
  }
  for (const i of gpuIndices) {
    for (const [name, d] of Object.entries(GPU_DEFS)) {
      out.push({ key: `gpu.${i}.${name}`, label: `GPU ${i} ${d.label}`, unit: d.unit, source: d.source });
    }
  }
  return out;
}
