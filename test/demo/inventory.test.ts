// The demo host emits, per era, exactly what that version's upstream code emits for a PD deployment: no
// family, type or label the inventory (../shared/reference/upstream/*.tsv) does not list for the era, and
// every listed family except the deliberately omitted ones below. Scraped over the demo's HTTP layer after
// traffic, a KV squeeze and a decode outage, so that lazily created families (labelled counters appear at
// their first increment, histograms once observed) have appeared. Parsed with the app's own parser.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoHttpServers, DemoSimulation } from '../../src/main/demo';
import { startDemoFleet } from '../../src/main/demo/fleet';
import { DEMO_ERAS, ROUTER_ERAS, type DemoEra, type RouterEra } from '../../src/main/demo/eras';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { Exposition } from '../../src/main/core/probes/exposition/types';
import { manualClock, T0 } from './helpers';
import { inventoryAvailable, inventoryOf, inventoryViolations, SKIP_MESSAGE, type Era } from './inventory';

if (!inventoryAvailable) console.warn(SKIP_MESSAGE);

/**
 * Server families the demo deliberately does not emit, with why. Everything else the inventory lists for an
 * era must appear on the prefill or the decode server of that era.
 */
const OMITTED_SERVER: Record<string, string> = {};
const omitServer = (why: string, names: string[]): void => {
  for (const n of names) OMITTED_SERVER[n] = why;
};
omitServer('LoRA adapters: the demo serves no LoRA', [
  'sglang:lora_pool_slots_used',
  'sglang:lora_pool_slots_total',
  'sglang:lora_pool_utilization',
]);
omitServer('hierarchical cache / HiCache storage / radix eviction reporting: not enabled in the demo', [
  'sglang:hicache_host_used_tokens',
  'sglang:hicache_host_total_tokens',
  'sglang:hicache_prefetch_outcomes_total',
  'sglang:prefetched_tokens_total',
  'sglang:backuped_tokens_total',
  'sglang:hicache_backup_dropped_tokens_total',
  'sglang:hicache_prefetch_aux_alloc_failed_tokens_total',
  'sglang:prefetch_pgs',
  'sglang:backup_pgs',
  'sglang:prefetch_bandwidth',
  'sglang:backup_bandwidth',
  'sglang:eviction_duration_seconds',
  'sglang:evicted_tokens_total',
  'sglang:load_back_duration_seconds',
  'sglang:load_back_tokens_total',
  'sglang:hicache_backup_duration_seconds',
  'sglang:hicache_backup_bytes_total',
  'sglang:load_back_bytes_total',
  'sglang:hicache_backup_tokens_total',
  'sglang:hicache_dropped_tokens_total',
]);
omitServer('speculative decoding detail: the demo runs no draft model (accept length/rate stay, at 0)', [
  'sglang:spec_cap_length',
  'sglang:spec_block_accept_length',
  'sglang:spec_num_steps',
  'sglang:spec_num_draft_tokens',
  'sglang:spec_verify_calls_total',
]);
omitServer('grammar-constrained decoding: no structured-output requests in the demo', [
  'sglang:grammar_compilation_time_seconds',
  'sglang:num_grammar_cache_hit_total',
  'sglang:num_grammar_aborted_total',
  'sglang:num_grammar_timeout_total',
  'sglang:num_grammar_total',
  'sglang:grammar_schema_count',
  'sglang:grammar_ebnf_size',
  'sglang:grammar_tree_traversal_time_avg',
  'sglang:grammar_tree_traversal_time_max',
  'sglang:num_so_requests_total',
]);
omitServer('EPD encoder server only (--encoder-only)', ['sglang:encoder_*']);
omitServer('expert parallelism load balancing: the demo model is dense', [
  'sglang:eplb_balancedness',
  'sglang:eplb_gpu_physical_count',
]);
omitServer('SWA / mamba pools: the demo model has neither (their usage ratios stay, at 0)', [
  'sglang:swa_available_tokens',
  'sglang:swa_evictable_tokens',
  'sglang:swa_used_tokens',
  'sglang:mamba_available_tokens',
  'sglang:mamba_evictable_tokens',
  'sglang:mamba_used_tokens',
  'sglang:max_total_num_tokens_swa',
]);
omitServer('streaming sessions and routing keys: features the demo clients do not use', [
  'sglang:num_streaming_sessions',
  'sglang:streaming_session_held_tokens',
  'sglang:num_unique_running_routing_keys',
  'sglang:routing_key_running_req_count',
  'sglang:routing_key_all_req_count',
]);
omitServer(
  'opt-in or conditional (--enable-mfu-metrics, SLO-based utilization, DP cooperation, prefill delayer)',
  [
    'sglang:estimated_flops_per_gpu_total',
    'sglang:estimated_read_bytes_per_gpu_total',
    'sglang:estimated_write_bytes_per_gpu_total',
    'sglang:max_running_requests_under_SLO',
    'sglang:dp_cooperation_realtime_tokens_total',
    'sglang:dp_cooperation_forward_execution_seconds_total',
    'sglang:prefill_delayer_wait_forward_passes',
    'sglang:prefill_delayer_wait_seconds',
    'sglang:prefill_delayer_outcomes_total',
  ],
);
omitServer('scheduler internals and startup constants the console does not read', [
  'sglang:weight_load_duration_seconds',
  'sglang:fwd_occupancy',
  'sglang:new_token_ratio',
  'sglang:per_stage_req_latency_seconds',
  'sglang:forward_execution_seconds_total',
  'sglang:gpu_execution_seconds_total',
  'sglang:prefill_effective_tokens_total',
  'sglang:weight_memory_usage_gb',
  'sglang:kv_cache_memory_usage_gb',
  'sglang:graph_memory_usage_gb',
  'sglang:num_pages',
  'sglang:startup_available_gpu_memory_gb',
  'sglang:startup_cuda_graph_time_seconds',
]);
omitServer('tokenizer internals: token-count histograms and the /v1/loads timing', [
  'sglang:prompt_tokens_histogram',
  'sglang:uncached_prompt_tokens_histogram',
  'sglang:generation_tokens_histogram',
  'sglang:get_loads_duration_seconds',
]);

/** Router families the demo deliberately does not emit, per router generation. */
const OMITTED_ROUTER: Record<string, string> = {};
const omitRouter = (why: string, names: string[]): void => {
  for (const n of names) OMITTED_ROUTER[n] = why;
};
// sgl_router_requests_total, request_errors_total, running_requests, active_workers and
// request_duration_seconds are not in the PD router's inventory at all (the TSV marks them regular-only or
// never recorded), so the demo emitting one of them fails the first check.
omitRouter('regular (non-PD) router paths: generate, embeddings, classify', [
  'sgl_router_generate_duration_seconds',
  'sgl_router_embeddings_total',
  'sgl_router_embeddings_duration_seconds',
  'sgl_router_embeddings_errors_total',
  'sgl_router_embeddings_queue_size',
  'sgl_router_classify_total',
  'sgl_router_classify_duration_seconds',
  'sgl_router_classify_errors_total',
  'sgl_router_classify_queue_size',
]);
omitRouter('policy internals (cache-aware tree, load balancing) the console does not read', [
  'sgl_router_cache_hits_total',
  'sgl_router_cache_misses_total',
  'sgl_router_tree_size',
  'sgl_router_load_balancing_events_total',
  'sgl_router_max_load',
  'sgl_router_min_load',
  'sgl_router_policy_decisions_total',
  'sgl_router_worker_load',
]);
omitRouter('retries, worker-management jobs, service discovery, DB and MCP: not exercised by the demo', [
  'sgl_router_retries_total',
  'sgl_router_retries_exhausted_total',
  'sgl_router_retry_backoff_duration_seconds',
  'sgl_router_job_duration_seconds',
  'sgl_router_job_failure_total',
  'sgl_router_job_queue_depth',
  'sgl_router_job_queue_full_total',
  'sgl_router_job_shutdown_rejected_total',
  'sgl_router_job_success_total',
  'sgl_router_discovery_updates_total',
  'sgl_router_discovery_workers_added',
  'sgl_router_discovery_workers_removed',
  'smg_worker_retries_total',
  'smg_worker_retries_exhausted_total',
  'smg_worker_retry_backoff_seconds',
  'smg_discovery_deregistrations_total',
  'smg_discovery_registrations_total',
  'smg_discovery_sync_duration_seconds',
  'smg_discovery_workers_discovered',
  'smg_db_connections_active',
  'smg_db_items_stored',
  'smg_db_operation_duration_seconds',
  'smg_db_operations_total',
  'smg_mcp_servers_active',
  'smg_mcp_tool_calls_total',
  'smg_mcp_tool_duration_seconds',
  'smg_mcp_tool_iterations_total',
  'smg_http_rate_limit_total',
]);
omitRouter('the router-side tokenizer (gRPC / OpenAI paths), not the HTTP PD path', [
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
  'smg_router_generation_duration_seconds',
  'smg_router_tokens_total',
  'smg_router_tpot_seconds',
  'smg_router_ttft_seconds',
  'smg_router_stage_duration_seconds',
  'smg_worker_connections_active',
]);
omitRouter('circuit-breaker and failure detail the demo does not model (state and failure count stay)', [
  'sgl_router_cb_outcomes_total',
  'sgl_router_cb_state_transitions_total',
  'sgl_router_pd_stream_errors_total',
  'smg_worker_cb_consecutive_successes',
  'smg_worker_cb_outcomes_total',
  'smg_worker_cb_transitions_total',
  'smg_worker_errors_total',
  'smg_router_upstream_responses_total',
]);

const servers: DemoHttpServers[] = [];
afterAll(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

interface Scraped {
  prefill: Exposition;
  decode: Exposition;
  router: Exposition;
}

/**
 * Runs one demo host through healthy traffic, a KV squeeze on decode and a decode outage (router errors),
 * then scrapes every /metrics.
 */
async function exercise(era: DemoEra, routerEra: RouterEra): Promise<Scraped> {
  const clock = manualClock(T0);
  const sim = new DemoSimulation({ clock, era, routerEra, historyMs: 20 * 60_000 });
  const srv = new DemoHttpServers(sim);
  servers.push(srv);
  const ports = await srv.listen();
  const api = ports[30001];
  for (const path of ['/health', '/liveness', '/readiness', '/workers']) await get(api, path);
  sim.setFault('kv-full', true, 'decode');
  clock.advance(8 * 60_000);
  sim.setFault('kv-full', false);
  sim.stopUnit('decode');
  clock.advance(60_000);
  sim.startUnit('decode');
  clock.advance(10 * 60_000);
  // Failures the traffic produces too rarely to wait for (a prefill retry, a failed transfer, a
  // retraction, a prefill-side upstream error): counted here so their lazily created series exist.
  const { prefill, decode } = sim.units;
  for (const p of [prefill.server, decode.server]) {
    if (!p) throw new Error(`${era}: a server is down after the exercise`);
    p.transferFailed++;
    p.bootstrapFailed++;
    p.prefillRetries++;
    p.retractedRequests++;
    p.retractedInputTokens += 1000;
    p.retractedOutputTokens += 10;
    p.abortedRequests++;
  }
  const router = sim.units.router.router;
  if (!router) throw new Error(`${routerEra}: the router is down after the exercise`);
  router.worker('prefill').errors++;
  const scrape = async (port: number): Promise<Exposition> => {
    const r = await get(ports[port], '/metrics');
    expect(r.status).toBe(200);
    return parseExposition(r.body, 'prometheus');
  };
  return { prefill: await scrape(30100), decode: await scrape(30200), router: await scrape(29001) };
}

function missing(era: Era, emitted: Exposition[], omitted: Record<string, string>): string[] {
  const have = new Set(emitted.flatMap((e) => e.families.map((f) => f.name)));
  return [...inventoryOf(era).keys()].filter((n) => !have.has(n) && !(n in omitted));
}

describe.skipIf(!inventoryAvailable)('the demo host against the upstream inventory', () => {
  // One host per server era, each paired with one router era so every router era runs too.
  const pairs = DEMO_ERAS.map((era, i) => [era, ROUTER_ERAS[i]] as const);
  const scraped = new Map<DemoEra, Scraped>();
  beforeAll(async () => {
    for (const [era, routerEra] of pairs) scraped.set(era, await exercise(era, routerEra));
  }, 120_000);

  it.each(pairs)('server era %s emits no family, type or label its code lacks', (era) => {
    const s = scraped.get(era);
    if (!s) throw new Error(`no scrape for ${era}`);
    expect([
      ...inventoryViolations(s.prefill, era, `${era} prefill`),
      ...inventoryViolations(s.decode, era, `${era} decode`),
    ]).toEqual([]);
  });

  it.each(pairs)('server era %s emits every inventory family not deliberately omitted', (era) => {
    const s = scraped.get(era);
    if (!s) throw new Error(`no scrape for ${era}`);
    expect(missing(era, [s.prefill, s.decode], OMITTED_SERVER)).toEqual([]);
  });

  it.each(pairs.map(([era, r]) => [r, era] as const))(
    'router era %s emits no family, type or label its code lacks, and every family not omitted',
    (routerEra, era) => {
      const s = scraped.get(era);
      if (!s) throw new Error(`no scrape for ${routerEra}`);
      expect(inventoryViolations(s.router, routerEra, routerEra)).toEqual([]);
      expect(missing(routerEra, [s.router], OMITTED_ROUTER)).toEqual([]);
    },
  );

  it('the omitted lists name only families the inventory has (no stale excuses)', () => {
    const all = new Set<string>();
    for (const era of [...DEMO_ERAS, ...ROUTER_ERAS]) for (const n of inventoryOf(era).keys()) all.add(n);
    expect(Object.keys({ ...OMITTED_SERVER, ...OMITTED_ROUTER }).filter((n) => !all.has(n))).toEqual([]);
  });

  it('the check can fail: an invented family, a wrong type and a foreign label are each reported', () => {
    const exp = parseExposition(
      [
        '# TYPE sgl_router_requests_total counter',
        'sgl_router_requests_total{route="/v1/chat/completions"} 1',
        '# TYPE sgl_router_worker_health counter',
        'sgl_router_worker_health_total{worker="a"} 1',
        '# TYPE sgl_router_cb_state gauge',
        'sgl_router_cb_state{worker="a",path="/x"} 0',
        '# TYPE sglang:full_token_usage gauge',
        'sglang:full_token_usage{model_name="m"} 0.5',
        '',
      ].join('\n'),
      'prometheus',
    );
    const v = inventoryViolations(exp, 'sglang-router-0.2.4', 'probe');
    expect(v.some((m) => m.includes('sgl_router_cb_state carries label(s) path'))).toBe(true);
    expect(
      v.some((m) => m.includes('sglang:full_token_usage') && m.includes('not in the sglang-router-0.2.4')),
    ).toBe(true);
    // Listed in 0.2.4's TSV section, but "ONLY regular router": not a PD router's metric.
    expect(v.some((m) => m.includes('sgl_router_requests_total (counter) is not in'))).toBe(true);
    expect(
      v.some((m) => m.includes('sgl_router_worker_health is a counter, sglang-router-0.2.4 has a gauge')),
    ).toBe(true);
    expect(inventoryViolations(exp, 'E2', 'probe').some((m) => m.includes('sglang:full_token_usage'))).toBe(
      true,
    );
    expect(inventoryViolations(exp, 'E3', 'probe').filter((m) => m.includes('full_token_usage'))).toEqual([]);
  });
});

describe.skipIf(!inventoryAvailable)('the demo fleet against the upstream inventory', () => {
  // The fleet renders its workers and its router from the same models with per-worker state (a worker list on
  // the router, a multi-node worker): each of its /metrics must still hold only what that era's code emits.
  const pairs = DEMO_ERAS.map((era, i) => [era, ROUTER_ERAS[i]] as const);
  it.each(pairs)('server era %s with router era %s: every worker and the router', async (era, routerEra) => {
    const clock = manualClock(T0);
    const fleet = await startDemoFleet({ clock, era, routerEra, listenHttp: true, historyMs: 20 * 60_000 });
    try {
      clock.advance(5 * 60_000);
      const violations: string[] = [];
      let scraped = 0;
      for (const h of fleet.hosts)
        for (const [port, real] of Object.entries(h.httpPorts)) {
          // The router's API port has no /metrics: its metrics listen on their own port.
          if (Number(port) === 30001) continue;
          const res = await fetch(`http://${h.address}:${real}/metrics`);
          expect(res.status, `${h.name}:${port}/metrics`).toBe(200);
          const exp = parseExposition(await res.text(), 'prometheus');
          const isRouter = Number(port) === 29001;
          violations.push(...inventoryViolations(exp, isRouter ? routerEra : era, `${h.name}:${port}`));
          scraped++;
        }
      expect(violations).toEqual([]);
      // The router and the five workers' HTTP endpoints (decode-2's node rank 1 serves none).
      expect(scraped).toBe(6);
    } finally {
      await fleet.stop();
    }
  });
});
