// Every upstream metric family PD Console reads, named once. The signal specification (spec.ts) and the
// evaluators refer to these constants, so a family renamed upstream is one edit here plus, where the old name
// stays in the field, one entry in the signal's `metrics` list (newest first).
// Sources: shared/reference/upstream/sglang-real-metrics.tsv and router-real-metrics.tsv (file@commit per row).

/** SGLang server families (prefix `sglang:`). */
export const SGLANG = {
  runningReqs: 'sglang:num_running_reqs',
  queueReqs: 'sglang:num_queue_reqs',
  prefillBootstrapQueue: 'sglang:num_prefill_bootstrap_queue_reqs',
  /** The bootstrap queue's name before SGLang PR #24341. */
  prefillPreallocQueueLegacy: 'sglang:num_prefill_prealloc_queue_reqs',
  prefillInflightQueue: 'sglang:num_prefill_inflight_queue_reqs',
  decodePreallocQueue: 'sglang:num_decode_prealloc_queue_reqs',
  decodeTransferQueue: 'sglang:num_decode_transfer_queue_reqs',
  genThroughput: 'sglang:gen_throughput',
  cacheHitRate: 'sglang:cache_hit_rate',
  pendingPreallocTokenUsage: 'sglang:pending_prealloc_token_usage',
  retractedReqs: 'sglang:num_retracted_reqs',
  retractedRequestsTotal: 'sglang:num_retracted_requests_total',
  kvTransferLatencyMs: 'sglang:kv_transfer_latency_ms',
  kvTransferSpeedGbS: 'sglang:kv_transfer_speed_gb_s',
  kvTransferBootstrapMs: 'sglang:kv_transfer_bootstrap_ms',
  kvTransferAllocMs: 'sglang:kv_transfer_alloc_ms',
  kvTransferTotalMb: 'sglang:kv_transfer_total_mb',
  bootstrapFailedTotal: 'sglang:num_bootstrap_failed_reqs_total',
  transferFailedTotal: 'sglang:num_transfer_failed_reqs_total',
  ttft: 'sglang:time_to_first_token_seconds',
  itl: 'sglang:inter_token_latency_seconds',
  /** ITL's name before v0.4.6.post5 (issue #6806); read only when ITL is absent. */
  tpotLegacy: 'sglang:time_per_output_token_seconds',
  e2e: 'sglang:e2e_request_latency_seconds',
  promptTokensTotal: 'sglang:prompt_tokens_total',
  generationTokensTotal: 'sglang:generation_tokens_total',
  cachedTokensTotal: 'sglang:cached_tokens_total',
  requestsTotal: 'sglang:num_requests_total',
  kvUsedTokens: 'sglang:kv_used_tokens',
  kvEvictableTokens: 'sglang:kv_evictable_tokens',
  kvAvailableTokens: 'sglang:kv_available_tokens',
  maxTotalNumTokens: 'sglang:max_total_num_tokens',
  fullTokenUsage: 'sglang:full_token_usage',
  numUsedTokens: 'sglang:num_used_tokens',
  tokenUsage: 'sglang:token_usage',
} as const;

/** SGLang Model Gateway (smg ≥ 0.3, formerly sgl-model-gateway) families. */
export const SMG = {
  routerRequestsTotal: 'smg_router_requests_total',
  routerRequestErrorsTotal: 'smg_router_request_errors_total',
  routerRequestDuration: 'smg_router_request_duration_seconds',
  httpRequestsTotal: 'smg_http_requests_total',
  /** Carries a `path` label only from smg v1.5.0. */
  httpResponsesTotal: 'smg_http_responses_total',
  workerHealth: 'smg_worker_health',
  workerCbState: 'smg_worker_cb_state',
  workerRequestsActive: 'smg_worker_requests_active',
  /** Prefix of the worker gauges smg ≥ 1.7 re-exports with --engine-metrics. */
  enginePrefix: 'smg_engine_',
} as const;

/** sglang-router ≤ 0.2.4 families. In PD mode only the `sgl_router_pd_*` ones are recorded. */
export const SGL_ROUTER = {
  pdRequestsTotal: 'sgl_router_pd_requests_total',
  pdRequestDuration: 'sgl_router_pd_request_duration_seconds',
  pdErrorsTotal: 'sgl_router_pd_errors_total',
  pdPrefillErrorsTotal: 'sgl_router_pd_prefill_errors_total',
  pdDecodeErrorsTotal: 'sgl_router_pd_decode_errors_total',
  pdPrefillRequestsTotal: 'sgl_router_pd_prefill_requests_total',
  pdDecodeRequestsTotal: 'sgl_router_pd_decode_requests_total',
  pdPrefix: 'sgl_router_pd_',
  /** The regular (non-PD) router's request counters and histogram. */
  requestsTotal: 'sgl_router_requests_total',
  requestErrorsTotal: 'sgl_router_request_errors_total',
  requestDuration: 'sgl_router_request_duration_seconds',
  upstreamHttpResponsesTotal: 'sgl_router_upstream_http_responses_total',
  workerHealth: 'sgl_router_worker_health',
  cbState: 'sgl_router_cb_state',
  runningRequests: 'sgl_router_running_requests',
  prefix: 'sgl_router_',
} as const;

/** The PD sglang-router's three error counters, summed for its error share. */
export const SGL_ROUTER_PD_ERRORS = [
  SGL_ROUTER.pdErrorsTotal,
  SGL_ROUTER.pdPrefillErrorsTotal,
  SGL_ROUTER.pdDecodeErrorsTotal,
] as const;
