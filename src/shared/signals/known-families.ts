// Every metric family name a supported SGLang server or router era emits on /metrics, with the eras that emit
// it, so a scrape's families can be told apart: known to this PD Console version, or "not understood by this
// PD Console version" (a newer release's family), or another exporter's. Written from the upstream inventory
// (../shared/reference/upstream/*.tsv, read from the SGLang and smg source); test/signals/known-families.test.ts
// reads those TSVs and fails when this list and the inventory disagree, so update both together.
//
// Decided, and kept out of the list:
// - /v1/loads?format=prometheus serves ad-hoc gauges `sglang_<field>{dp_rank}` (underscore): a different
//   endpoint, never /metrics. Seen on a scrape they are SGLang's namespace and no era's /metrics: unknown.
// - sgl_router_upstream_http_responses_total (renamed …_attempt_http_responses_total) was never released, and
//   sglang's in-tree experimental/sgl-router is not a supported router: their names are unknown too, apart from
//   those that 0.2.4 also has.
// - `sglang:encoder_*` (the EPD encoder server, --encoder-only) is one TSV row for a group of names: a prefix.
import type { DemoRouterEra, DemoServerEra } from '../api/monitoring';

export type FamilyKind = 'server' | 'router';
export type ServerEra = DemoServerEra;
export type RouterEra = DemoRouterEra;
export type KnownEra = ServerEra | RouterEra;

export interface KnownFamily {
  name: string;
  kind: FamilyKind;
  /** The supported eras whose code emits it (routers: in PD mode), oldest first. */
  eras: readonly KnownEra[];
  /** Set exactly when `eras` is empty: where upstream has it although no supported PD setup emits it. */
  outside?: string;
}

const ALL_SERVER: readonly ServerEra[] = ['E1', 'E2', 'E3', 'E4'];

/** Server families, grouped by the eras that emit them (the TSV's era notes, as test/demo/inventory.ts reads them). */
const SERVER: ReadonlyArray<readonly [readonly ServerEra[], readonly string[]]> = [
  [
    ALL_SERVER,
    [
      'sglang:backup_bandwidth',
      'sglang:backup_pgs',
      'sglang:backuped_tokens_total',
      'sglang:cache_hit_rate',
      'sglang:cached_tokens_total',
      'sglang:dp_cooperation_forward_execution_seconds_total',
      'sglang:dp_cooperation_realtime_tokens_total',
      'sglang:e2e_request_latency_seconds',
      'sglang:eplb_balancedness',
      'sglang:eplb_gpu_physical_count',
      'sglang:estimated_flops_per_gpu_total',
      'sglang:estimated_read_bytes_per_gpu_total',
      'sglang:estimated_write_bytes_per_gpu_total',
      'sglang:evicted_tokens_total',
      'sglang:eviction_duration_seconds',
      'sglang:gen_throughput',
      'sglang:generation_tokens_histogram',
      'sglang:generation_tokens_total',
      'sglang:grammar_compilation_time_seconds',
      'sglang:grammar_ebnf_size',
      'sglang:grammar_schema_count',
      'sglang:grammar_tree_traversal_time_avg',
      'sglang:grammar_tree_traversal_time_max',
      'sglang:hicache_backup_bytes_total',
      'sglang:hicache_backup_dropped_tokens_total',
      'sglang:hicache_backup_duration_seconds',
      'sglang:hicache_backup_tokens_total',
      'sglang:hicache_dropped_tokens_total',
      'sglang:hicache_host_total_tokens',
      'sglang:hicache_host_used_tokens',
      'sglang:hicache_prefetch_aux_alloc_failed_tokens_total',
      'sglang:hicache_prefetch_outcomes_total',
      'sglang:inter_token_latency_seconds',
      'sglang:is_cuda_graph',
      'sglang:kv_transfer_latency_ms',
      'sglang:kv_transfer_speed_gb_s',
      'sglang:load_back_bytes_total',
      'sglang:load_back_duration_seconds',
      'sglang:load_back_tokens_total',
      'sglang:lora_pool_slots_total',
      'sglang:lora_pool_slots_used',
      'sglang:lora_pool_utilization',
      'sglang:max_running_requests_under_SLO',
      'sglang:num_aborted_requests_total',
      'sglang:num_bootstrap_failed_reqs_total',
      'sglang:num_decode_prealloc_queue_reqs',
      'sglang:num_decode_transfer_queue_reqs',
      'sglang:num_grammar_aborted_total',
      'sglang:num_grammar_cache_hit_total',
      'sglang:num_grammar_queue_reqs',
      'sglang:num_grammar_total',
      'sglang:num_paused_reqs',
      'sglang:num_prefill_inflight_queue_reqs',
      'sglang:num_queue_reqs',
      'sglang:num_requests_total',
      'sglang:num_retracted_reqs',
      'sglang:num_running_reqs',
      'sglang:num_so_requests_total',
      'sglang:num_streaming_sessions',
      'sglang:num_transfer_failed_reqs_total',
      'sglang:num_used_tokens',
      'sglang:pending_prealloc_token_usage',
      'sglang:per_stage_req_latency_seconds',
      'sglang:prefetch_bandwidth',
      'sglang:prefetch_pgs',
      'sglang:prefetched_tokens_total',
      'sglang:prompt_tokens_total',
      'sglang:queue_time_seconds',
      'sglang:spec_accept_length',
      'sglang:spec_accept_rate',
      'sglang:streaming_session_held_tokens',
      'sglang:swa_token_usage',
      'sglang:time_to_first_token_seconds',
      'sglang:token_usage',
      'sglang:utilization',
    ],
  ],
  [
    ['E2', 'E3', 'E4'],
    [
      'sglang:cuda_graph_passes_total',
      'sglang:decode_sum_seq_lens',
      'sglang:kv_transfer_alloc_ms',
      'sglang:kv_transfer_bootstrap_ms',
      'sglang:kv_transfer_total_mb',
      'sglang:mamba_usage',
      'sglang:max_total_num_tokens',
      'sglang:new_token_ratio',
      'sglang:num_grammar_timeout_total',
      'sglang:num_prefill_retries_total',
      'sglang:num_retracted_input_tokens_total',
      'sglang:num_retracted_output_tokens_total',
      'sglang:num_retracted_requests_total',
      'sglang:num_unique_running_routing_keys',
      'sglang:realtime_tokens_total',
      'sglang:routing_key_all_req_count',
      'sglang:routing_key_running_req_count',
    ],
  ],
  [['E3', 'E4'], ['sglang:full_token_usage']],
  [
    ['E4'],
    [
      'sglang:context_len',
      'sglang:forward_execution_seconds_total',
      'sglang:fwd_occupancy',
      'sglang:get_loads_duration_seconds',
      'sglang:graph_memory_usage_gb',
      'sglang:kv_available_tokens',
      'sglang:kv_cache_memory_usage_gb',
      'sglang:kv_evictable_tokens',
      'sglang:kv_transfer_timeouts_total',
      'sglang:kv_used_tokens',
      'sglang:mamba_available_tokens',
      'sglang:mamba_evictable_tokens',
      'sglang:mamba_used_tokens',
      'sglang:max_total_num_tokens_swa',
      'sglang:num_pages',
      'sglang:num_prefill_bootstrap_queue_reqs',
      'sglang:page_size',
      'sglang:prefill_delayer_outcomes_total',
      'sglang:prefill_delayer_wait_forward_passes',
      'sglang:prefill_delayer_wait_seconds',
      'sglang:prefill_effective_tokens_total',
      'sglang:prompt_tokens_histogram',
      'sglang:spec_block_accept_length',
      'sglang:spec_cap_length',
      'sglang:spec_num_draft_tokens',
      'sglang:spec_num_steps',
      'sglang:spec_verify_calls_total',
      'sglang:startup_available_gpu_memory_gb',
      'sglang:startup_cuda_graph_time_seconds',
      'sglang:startup_time_seconds',
      'sglang:swa_available_tokens',
      'sglang:swa_evictable_tokens',
      'sglang:swa_used_tokens',
      'sglang:uncached_prompt_tokens_histogram',
      'sglang:weight_load_duration_seconds',
      'sglang:weight_memory_usage_gb',
    ],
  ],
  [
    ['E1', 'E2', 'E3'],
    [
      'sglang:engine_load_weights_time',
      'sglang:engine_startup_time',
      'sglang:num_prefill_prealloc_queue_reqs',
      'sglang:num_running_reqs_offline_batch',
    ],
  ],
  [['E2'], ['sglang:gpu_execution_seconds_total']],
];

const SMG: readonly RouterEra[] = ['smg-0.3', 'smg-1.5', 'smg-engine-metrics'];

/**
 * Router families by era. sglang-router 0.2.4 and smg 0.3.0 are release sections of the inventory; smg 1.5
 * has the 0.3.0 families still present at smg HEAD; --engine-metrics (v1.7) adds smg_engine_*.
 */
const ROUTER: ReadonlyArray<readonly [readonly RouterEra[], readonly string[]]> = [
  [
    SMG,
    [
      'smg_db_connections_active',
      'smg_db_items_stored',
      'smg_db_operation_duration_seconds',
      'smg_db_operations_total',
      'smg_discovery_deregistrations_total',
      'smg_discovery_registrations_total',
      'smg_discovery_sync_duration_seconds',
      'smg_discovery_workers_discovered',
      'smg_http_connections_active',
      'smg_http_rate_limit_total',
      'smg_http_request_duration_seconds',
      'smg_http_requests_total',
      'smg_http_responses_total',
      'smg_mcp_servers_active',
      'smg_mcp_tool_calls_total',
      'smg_mcp_tool_duration_seconds',
      'smg_mcp_tool_iterations_total',
      'smg_router_generation_duration_seconds',
      'smg_router_request_duration_seconds',
      'smg_router_request_errors_total',
      'smg_router_requests_total',
      'smg_router_stage_duration_seconds',
      'smg_router_tokens_total',
      'smg_router_tpot_seconds',
      'smg_router_ttft_seconds',
      'smg_router_upstream_responses_total',
      'smg_worker_cb_consecutive_failures',
      'smg_worker_cb_consecutive_successes',
      'smg_worker_cb_outcomes_total',
      'smg_worker_cb_state',
      'smg_worker_cb_transitions_total',
      'smg_worker_connections_active',
      'smg_worker_errors_total',
      'smg_worker_health',
      'smg_worker_health_checks_total',
      'smg_worker_pool_size',
      'smg_worker_requests_active',
      'smg_worker_retries_exhausted_total',
      'smg_worker_retries_total',
      'smg_worker_retry_backoff_seconds',
      'smg_worker_selection_total',
    ],
  ],
  [
    ['smg-engine-metrics'],
    [
      'smg_engine_cache_hit_rate',
      'smg_engine_gen_throughput',
      'smg_engine_pd_decode_queue_reqs',
      'smg_engine_pd_kv_transfer_latency_ms',
      'smg_engine_pd_kv_transfer_speed_gb_s',
      'smg_engine_pd_prefill_queue_reqs',
      'smg_engine_running_requests',
      'smg_engine_token_usage',
      'smg_engine_waiting_requests',
    ],
  ],
  [
    ['sglang-router-0.2.4'],
    [
      'sgl_router_cache_hits_total',
      'sgl_router_cache_misses_total',
      'sgl_router_cb_outcomes_total',
      'sgl_router_cb_state',
      'sgl_router_cb_state_transitions_total',
      'sgl_router_classify_duration_seconds',
      'sgl_router_classify_errors_total',
      'sgl_router_classify_queue_size',
      'sgl_router_classify_total',
      'sgl_router_discovery_updates_total',
      'sgl_router_discovery_workers_added',
      'sgl_router_discovery_workers_removed',
      'sgl_router_embeddings_duration_seconds',
      'sgl_router_embeddings_errors_total',
      'sgl_router_embeddings_queue_size',
      'sgl_router_embeddings_total',
      'sgl_router_generate_duration_seconds',
      'sgl_router_http_responses_total',
      'sgl_router_job_duration_seconds',
      'sgl_router_job_failure_total',
      'sgl_router_job_queue_depth',
      'sgl_router_job_queue_full_total',
      'sgl_router_job_shutdown_rejected_total',
      'sgl_router_job_success_total',
      'sgl_router_load_balancing_events_total',
      'sgl_router_max_load',
      'sgl_router_min_load',
      'sgl_router_pd_decode_errors_total',
      'sgl_router_pd_decode_requests_total',
      'sgl_router_pd_errors_total',
      'sgl_router_pd_prefill_errors_total',
      'sgl_router_pd_prefill_requests_total',
      'sgl_router_pd_request_duration_seconds',
      'sgl_router_pd_requests_total',
      'sgl_router_pd_stream_errors_total',
      'sgl_router_policy_decisions_total',
      'sgl_router_processed_requests_total',
      'sgl_router_retries_exhausted_total',
      'sgl_router_retries_total',
      'sgl_router_retry_backoff_duration_seconds',
      'sgl_router_tree_size',
      'sgl_router_worker_health',
      'sgl_router_worker_load',
      'sgl_tokenizer_chars_per_encode',
      'sgl_tokenizer_decode_duration_seconds',
      'sgl_tokenizer_decode_errors_total',
      'sgl_tokenizer_decode_requests_total',
      'sgl_tokenizer_encode_batch_duration_seconds',
      'sgl_tokenizer_encode_duration_seconds',
      'sgl_tokenizer_encode_errors_total',
      'sgl_tokenizer_encode_requests_total',
      'sgl_tokenizer_factory_errors_total',
      'sgl_tokenizer_factory_load_duration_seconds',
      'sgl_tokenizer_factory_loads_total',
      'sgl_tokenizer_partial_matches_total',
      'sgl_tokenizer_stop_detection_duration_seconds',
      'sgl_tokenizer_stop_sequences_detected_total',
      'sgl_tokenizer_stream_step_duration_seconds',
      'sgl_tokenizer_stream_tokens_total',
      'sgl_tokenizer_tokens_per_decode',
      'sgl_tokenizer_tokens_per_encode',
      'sgl_tokenizer_vocab_size',
    ],
  ],
];

/** Router families upstream has that no supported PD router emits, with where they come from. */
const ROUTER_OUTSIDE: ReadonlyArray<readonly [string, readonly string[]]> = [
  [
    'sglang-router ≤ 0.2.4, regular (non-PD) router only',
    [
      'sgl_router_active_workers',
      'sgl_router_request_errors_total',
      'sgl_router_requests_total',
      'sgl_router_running_requests',
    ],
  ],
  ['sglang-router ≤ 0.2.4: described, never recorded', ['sgl_router_request_duration_seconds']],
  [
    'smg HEAD (73da68ca, after v1.9.0) only: the release that added it is not in the inventory',
    [
      'smg_consistent_hashing_policy_branch_total',
      'smg_http_inflight_request_age_count',
      'smg_kv_event_subscription_failures_total',
      'smg_manual_policy_branch_total',
      'smg_manual_policy_cache_entries',
      'smg_mm_shm_write_failures_total',
      'smg_mm_tensor_bytes_total',
      'smg_mm_tensors_total',
      'smg_pd_bootstrap_failures_total',
      'smg_pd_kv_connector_mode_total',
      'smg_pd_kv_transfer_duration_seconds',
      'smg_pd_kv_transfer_failures_total',
      'smg_pd_prefill_duration_seconds',
      'smg_pd_ttft_seconds',
      'smg_prefix_hash_policy_branch_total',
      'smg_worker_routing_keys_active',
    ],
  ],
];

/** Name prefixes that stand for a group of families (a TSV row ending in `*`). */
export const KNOWN_FAMILY_PREFIXES: readonly KnownFamily[] = [
  { name: 'sglang:encoder_', kind: 'server', eras: ALL_SERVER },
];

function build(): ReadonlyMap<string, KnownFamily> {
  const m = new Map<string, KnownFamily>();
  for (const [eras, names] of SERVER) for (const name of names) m.set(name, { name, kind: 'server', eras });
  for (const [eras, names] of ROUTER) for (const name of names) m.set(name, { name, kind: 'router', eras });
  for (const [outside, names] of ROUTER_OUTSIDE)
    for (const name of names) m.set(name, { name, kind: 'router', eras: [], outside });
  return m;
}

/** Every family name a supported era's code has, by name. */
export const KNOWN_FAMILIES: ReadonlyMap<string, KnownFamily> = build();

/** The known entry for a family name (exact, else by group prefix), or null: no supported era lists it. */
export function knownFamily(name: string): KnownFamily | null {
  const exact = KNOWN_FAMILIES.get(name);
  if (exact) return exact;
  for (const p of KNOWN_FAMILY_PREFIXES) if (name.startsWith(p.name)) return p;
  return null;
}
