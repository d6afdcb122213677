// SGLang server /metrics in the three KV-metric eras of shared/reference/sglang-metrics.md:
// - 'kv-tokens' (newest): kv_used/evictable/available + max_total_num_tokens, bootstrap queue name,
//   kv_transfer_* histograms, engine_type = the server's role everywhere;
// - 'full-token-usage': full_token_usage + max_total_num_tokens, prealloc queue name, kv_transfer_* gauges,
//   tokenizer metrics still labelled engine_type="unified";
// - 'token-usage-only' (autumn 2025): token_usage (2 decimals) + num_used_tokens only, no capacity gauge,
//   scheduler engine_type="unified" without moe_ep_rank, tokenizer metrics with model_name only.
// Series appear lazily like the real collector: tokenizer counters and histograms only after the first
// request, histograms only once observed.
import { PyExposition, type Labels } from './exposition-writer';
import type { ServerProcess } from './processes';
import type { DemoEra } from './simulation';
import { MODEL_NAME, TP_SIZE, type ServerRole } from './units';

export function renderServerMetrics(p: ServerProcess, era: DemoEra, dpRanks: number): string {
  const role: ServerRole = p.role;
  const x = new PyExposition();
  const newest = era === 'kv-tokens';
  const oldest = era === 'token-usage-only';
  const dp = role === 'decode' ? dpRanks : 1;

  const schedLabels = (rank: number): Labels => {
    const l: Labels = {
      engine_type: oldest ? 'unified' : role,
      model_name: MODEL_NAME,
      pp_rank: '0',
      tp_rank: String(dp > 1 ? Math.floor((rank * TP_SIZE) / dp) : 0),
    };
    if (!oldest) l.moe_ep_rank = '0';
    if (dp > 1) l.dp_rank = String(rank);
    return l;
  };
  const tokLabels: Labels = oldest
    ? { model_name: MODEL_NAME }
    : { engine_type: newest ? role : 'unified', model_name: MODEL_NAME };
  const perRank = (f: (rank: number) => number): Array<[Labels, number]> =>
    p.ranks.map((_, i) => [schedLabels(i), f(i)]);
  const rank0 = (v: number): Array<[Labels, number]> => [[schedLabels(0), v]];
  const schedPid = (rank: number): string => String(p.pid + 3 + rank);

  // Before PR #31495 the prefill server never set num_running_reqs.
  const running = (i: number): number => (role === 'prefill' && !newest ? 0 : p.ranks[i].running);
  x.gauge('sglang:num_running_reqs', 'The number of running requests.', perRank(running));
  x.gauge(
    'sglang:num_used_tokens',
    'The number of used tokens.',
    perRank((i) => p.ranks[i].usedTokens),
  );
  x.gauge(
    'sglang:token_usage',
    'The token usage.',
    perRank((i) => Math.round((p.ranks[i].usedTokens / p.ranks[i].capacity) * 100) / 100),
  );
  if (!oldest) {
    x.gauge(
      'sglang:full_token_usage',
      'The token usage for full attention layers.',
      perRank((i) => p.ranks[i].usedTokens / p.ranks[i].capacity),
    );
  }
  x.gauge(
    'sglang:swa_token_usage',
    'The token usage for SWA layers.',
    perRank(() => 0),
  );
  if (!oldest)
    x.gauge(
      'sglang:mamba_usage',
      'The usage of mamba states.',
      perRank(() => 0),
    );
  if (newest) {
    x.gauge(
      'sglang:kv_used_tokens',
      'Number of actively used token slots in the KV cache pool.',
      perRank((i) => p.ranks[i].usedTokens),
    );
    x.gauge(
      'sglang:kv_evictable_tokens',
      'Number of evictable (radix-cached) token slots in the KV cache pool.',
      perRank((i) => p.ranks[i].evictableTokens),
    );
    x.gauge(
      'sglang:kv_available_tokens',
      'Number of free token slots in the KV cache pool.',
      perRank((i) => p.ranks[i].capacity - p.ranks[i].usedTokens - p.ranks[i].evictableTokens),
    );
  }
  if (!oldest) {
    x.gauge(
      'sglang:max_total_num_tokens',
      'Maximum total number of tokens in the KV cache pool.',
      perRank((i) => p.ranks[i].capacity),
    );
  }
  x.gauge(
    'sglang:gen_throughput',
    'The generation throughput (token/s).',
    perRank(() => (role === 'decode' ? p.genThroughput / dp : 0)),
  );
  x.gauge(
    'sglang:num_queue_reqs',
    'The number of requests in the waiting queue.',
    perRank((i) => p.ranks[i].queue),
  );
  x.gauge(
    'sglang:num_grammar_queue_reqs',
    'The number of requests in the grammar waiting queue.',
    perRank(() => 0),
  );
  if (!newest) {
    x.gauge(
      'sglang:num_running_reqs_offline_batch',
      "The number of running low-priority offline batch requests(label is 'batch').",
      perRank(() => 0),
    );
  }
  x.gauge(
    'sglang:cache_hit_rate',
    'The prefix cache hit rate.',
    perRank(() => (role === 'prefill' ? p.cacheHitRate : 0)),
  );
  if (!oldest) {
    x.gauge(
      'sglang:decode_sum_seq_lens',
      'The sum of all sequence lengths in decode.',
      perRank((i) => p.ranks[i].sumSeqLens),
    );
  }
  x.gauge(
    'sglang:spec_accept_length',
    'The average acceptance length of speculative decoding.',
    perRank(() => 0),
  );
  x.gauge(
    'sglang:spec_accept_rate',
    'The average acceptance rate of speculative decoding.',
    perRank(() => 0),
  );
  x.gauge(
    newest ? 'sglang:num_prefill_bootstrap_queue_reqs' : 'sglang:num_prefill_prealloc_queue_reqs',
    newest
      ? 'The number of requests in the prefill bootstrap queue.'
      : 'The number of requests in the prefill prealloc queue.',
    rank0(role === 'prefill' ? p.bootstrapQueue : 0),
  );
  x.gauge(
    'sglang:num_prefill_inflight_queue_reqs',
    'The number of requests in the prefill inflight queue.',
    rank0(role === 'prefill' ? p.inflightQueue : 0),
  );
  x.gauge(
    'sglang:num_decode_prealloc_queue_reqs',
    'The number of requests in the decode prealloc queue.',
    rank0(role === 'decode' ? p.preallocQueue : 0),
  );
  x.gauge(
    'sglang:num_decode_transfer_queue_reqs',
    'The number of requests in the decode transfer queue.',
    rank0(role === 'decode' ? p.transferQueue : 0),
  );
  x.gauge(
    'sglang:pending_prealloc_token_usage',
    'The token usage for pending preallocated tokens (not preallocated yet).',
    rank0(role === 'decode' ? Math.round((p.pendingPreallocTokens / p.capacity) * 100) / 100 : 0),
  );
  // No multiprocess_mode on these two: prometheus_client's default "all" adds a pid label.
  x.gauge(
    'sglang:num_retracted_reqs',
    'The number of retracted requests.',
    p.ranks.map((_, i): [Labels, number] => [
      { ...schedLabels(i), pid: schedPid(i) },
      role === 'decode' ? p.retractedQueue : 0,
    ]),
  );
  if (newest) {
    x.gauge(
      'sglang:num_paused_reqs',
      'The number of paused requests by async weight sync.',
      p.ranks.map((_, i): [Labels, number] => [{ ...schedLabels(i), pid: schedPid(i) }, 0]),
    );
  }
  x.gauge(
    'sglang:utilization',
    'The utilization.',
    perRank((i) => Math.min(1, p.ranks[i].usedTokens / p.ranks[i].capacity)),
  );
  x.gauge(
    'sglang:engine_startup_time',
    'The time taken for the engine to start up.',
    perRank(() => startupSeconds(p)),
  );
  x.gauge(
    'sglang:engine_load_weights_time',
    'The time taken for the engine to load weights.',
    perRank(() => Math.round(startupSeconds(p) * 0.45 * 100) / 100),
  );
  if (newest) {
    x.gauge(
      'sglang:page_size',
      'The page size of the KV cache.',
      perRank(() => 1),
    );
    x.gauge(
      'sglang:context_len',
      'The context length of the model.',
      perRank(() => 524_288),
    );
  }

  // KV transfer: gauges until PR #19009, histograms since.
  if (role === 'prefill' && p.kvSpeed.count > 0) {
    if (newest) {
      const s = schedLabels(0);
      x.histogram('sglang:kv_transfer_speed_gb_s', 'Histogram of KV transfer speed in GB/s.', [
        [s, p.kvSpeed],
      ]);
      x.histogram('sglang:kv_transfer_latency_ms', 'Histogram of KV cache transfer latency in ms.', [
        [s, p.kvLatency],
      ]);
      x.histogram('sglang:kv_transfer_bootstrap_ms', 'Histogram of KV transfer bootstrap time in ms.', [
        [s, p.kvBootstrap],
      ]);
      x.histogram('sglang:kv_transfer_alloc_ms', 'Histogram of KV transfer allocation wait time in ms.', [
        [s, p.kvAlloc],
      ]);
      x.histogram('sglang:kv_transfer_total_mb', 'Histogram of KV transfer size per request in MB.', [
        [s, p.kvTotalMb],
      ]);
    } else {
      const k = p.lastKvTransfer;
      x.gauge(
        'sglang:kv_transfer_speed_gb_s',
        'The transfer speed of the KV cache in GB/s.',
        rank0(round2(k.speedGbS)),
      );
      x.gauge(
        'sglang:kv_transfer_latency_ms',
        'The transfer latency of the KV cache in ms.',
        rank0(round2(k.latencyMs)),
      );
      if (!oldest) {
        x.gauge(
          'sglang:kv_transfer_bootstrap_ms',
          'The bootstrap time of the KV transfer in ms.',
          rank0(round2(k.bootstrapMs)),
        );
        x.gauge(
          'sglang:kv_transfer_alloc_ms',
          'The allocation waiting time of the KV transfer in ms.',
          rank0(round2(k.allocMs)),
        );
        x.gauge(
          'sglang:kv_transfer_total_mb',
          'The total transfer size of the KV cache in MB.',
          rank0(round2(k.totalMb)),
        );
      }
    }
  }

  // Scheduler-side counters.
  x.counter(
    'sglang:num_bootstrap_failed_reqs_total',
    'The number of bootstrap failed requests.',
    rank0(role === 'prefill' ? p.bootstrapFailed : 0),
  );
  x.counter(
    'sglang:num_transfer_failed_reqs_total',
    'The number of transfer failed requests.',
    rank0(p.transferFailed),
  );
  if (!oldest) {
    x.counter('sglang:num_prefill_retries_total', 'The number of prefill retries.', rank0(p.prefillRetries));
    x.counter(
      'sglang:num_retracted_requests_total',
      'Total number of retracted requests due to insufficient KV cache.',
      rank0(p.retractedRequests),
    );
    x.counter(
      'sglang:realtime_tokens_total',
      'Total number of tokens processed, updated in real time.',
      role === 'prefill'
        ? [
            [{ ...schedLabels(0), mode: 'prefill_compute' }, p.realtimePrefillCompute],
            [{ ...schedLabels(0), mode: 'prefill_cache' }, p.realtimePrefillCache],
          ]
        : [[{ ...schedLabels(0), mode: 'decode' }, Math.floor(p.realtimeDecode)]],
    );
  }
  if (newest) {
    x.counter(
      'sglang:cuda_graph_passes_total',
      'Total number of forward passes by cuda graph usage.',
      role === 'prefill'
        ? [[{ ...schedLabels(0), mode: 'prefill_none' }, p.noneGraphPasses]]
        : [[{ ...schedLabels(0), mode: 'decode_cuda_graph' }, p.cudaGraphPasses]],
    );
  }
  if (p.queueTime.count > 0) {
    x.histogram('sglang:queue_time_seconds', 'Histogram of queueing time in seconds.', [
      [schedLabels(0), newest ? p.queueTime : p.queueTimeLegacy],
    ]);
  }

  // Tokenizer-side metrics: created at the first request.
  if (p.numRequests > 0) {
    x.counter('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', [
      [tokLabels, p.promptTokens],
    ]);
    x.counter('sglang:generation_tokens_total', 'Number of generation tokens processed.', [
      [tokLabels, p.generationTokens],
    ]);
    x.counter('sglang:num_requests_total', 'Number of requests processed.', [[tokLabels, p.numRequests]]);
    x.counter('sglang:num_aborted_requests_total', 'Number of requests aborted.', [
      [tokLabels, p.abortedRequests],
    ]);
    x.counter(
      'sglang:cached_tokens_total',
      'Number of cached prompt tokens.',
      oldest ? [[tokLabels, p.cachedTokens]] : [[{ ...tokLabels, cache_source: 'device' }, p.cachedTokens]],
    );
  }
  if (p.ttft.count > 0) {
    x.histogram('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', [
      [tokLabels, p.ttft],
    ]);
  }
  if (p.itl.count > 0) {
    x.histogram('sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', [
      [tokLabels, p.itl],
    ]);
  }
  if (p.e2e.count > 0) {
    x.histogram('sglang:e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', [
      [tokLabels, p.e2e],
    ]);
  }
  return x.text();
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

function startupSeconds(p: ServerProcess): number {
  return p.readyAt ? Math.round((p.readyAt - p.startedAt) / 10) / 100 : 0;
}
