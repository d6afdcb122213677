// SGLang server /metrics in the four eras of the upstream code (shared/reference/upstream/README.md and
// sglang-real-metrics.tsv; test/demo/inventory.test.ts holds the demo to that inventory):
// - E1 (autumn 2025, metrics/collector.py @93d04878): scheduler labels with engine_type="unified" and no
//   moe_ep_rank, token_usage + num_used_tokens and no capacity gauge, kv_transfer as 2 gauges, the prefill
//   queue named num_prefill_prealloc_queue_reqs, engine_startup_time; tokenizer metrics by model_name only;
// - E2 (early 2026, @44cedc2b): + moe_ep_rank, engine_type = the role, max_total_num_tokens, 5 kv_transfer
//   gauges, mamba_usage, decode_sum_seq_lens, realtime_tokens_total and the retraction/retry counters;
// - E3 (@00eef542): E2 + full_token_usage, kv_transfer as histograms;
// - E4 (newest, @016d8605): kv_used/evictable/available, the bootstrap queue name, max_total_num_tokens set
//   once, kv_transfer_timeouts_total, startup_time_seconds instead of engine_startup_time, tokenizer metrics
//   labelled engine_type and (TTFT, E2E, prompt/generation/request counters) is_streaming.
// Series appear lazily like the real collector: tokenizer counters and histograms after the first request,
// histograms once observed, labelled failure counters after their first increment.
import { PyExposition, type Labels } from './exposition-writer';
import type { ServerProcess } from './processes';
import type { DemoEra } from './simulation';
import { MODEL_NAME, TP_SIZE, type ServerRole } from './units';

export function renderServerMetrics(p: ServerProcess, era: DemoEra, dpRanks: number): string {
  const role: ServerRole = p.role;
  const x = new PyExposition();
  const e1 = era === 'E1';
  const e4 = era === 'E4';
  const since2 = !e1; // E2, E3, E4
  const kvHistograms = era === 'E3' || e4;
  const dp = role === 'decode' ? dpRanks : 1;

  const schedLabels = (rank: number): Labels => {
    const l: Labels = {
      engine_type: e1 ? 'unified' : role,
      model_name: MODEL_NAME,
      pp_rank: '0',
      tp_rank: String(dp > 1 ? Math.floor((rank * TP_SIZE) / dp) : 0),
    };
    if (since2) l.moe_ep_rank = '0';
    if (dp > 1) l.dp_rank = String(rank);
    return l;
  };
  const tokLabels: Labels = e4 ? { engine_type: role, model_name: MODEL_NAME } : { model_name: MODEL_NAME };
  // The demo's clients stream (the router counts streaming="true"): E4 splits these by is_streaming.
  const streamed: Labels = e4 ? { ...tokLabels, is_streaming: 'true' } : tokLabels;
  const perRank = (f: (rank: number) => number): Array<[Labels, number]> =>
    p.ranks.map((_, i) => [schedLabels(i), f(i)]);
  const rank0 = (v: number): Array<[Labels, number]> => [[schedLabels(0), v]];
  const onceSet = (v: number): Array<[Labels, number]> => (v > 0 ? rank0(v) : []);
  const schedPid = (rank: number): string => String(p.pid + 3 + rank);
  const withPid = (v: number): Array<[Labels, number]> =>
    p.ranks.map((_, i): [Labels, number] => [{ ...schedLabels(i), pid: schedPid(i) }, v]);
  const usage = (i: number): number => p.ranks[i].usedTokens / p.ranks[i].capacity;

  // Before PR #31495 the prefill server never set num_running_reqs.
  const running = (i: number): number => (role === 'prefill' && !e4 ? 0 : p.ranks[i].running);
  x.gauge('sglang:num_running_reqs', 'The number of running requests.', perRank(running));
  x.gauge(
    'sglang:num_used_tokens',
    'The number of used tokens.',
    perRank((i) => p.ranks[i].usedTokens),
  );
  x.gauge('sglang:token_usage', 'The token usage.', perRank(usage));
  if (era === 'E3' || e4) {
    x.gauge('sglang:full_token_usage', 'The token usage for full attention layers.', perRank(usage));
  }
  x.gauge(
    'sglang:swa_token_usage',
    'The token usage for SWA layers.',
    perRank(() => 0),
  );
  if (since2)
    x.gauge(
      'sglang:mamba_usage',
      'The usage of mamba states.',
      perRank(() => 0),
    );
  if (e4) {
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
  // E1 has no capacity gauge (only /get_server_info); E2/E3 set it at every log, E4 once at start.
  if (since2) {
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
  if (!e4) {
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
  if (since2) {
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
    e4 ? 'sglang:num_prefill_bootstrap_queue_reqs' : 'sglang:num_prefill_prealloc_queue_reqs',
    e4
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
    rank0(role === 'decode' ? p.pendingPreallocTokens / p.capacity : 0),
  );
  // No multiprocess_mode on these two: prometheus_client's default "all" adds a pid label.
  x.gauge(
    'sglang:num_retracted_reqs',
    'The number of retracted requests.',
    withPid(role === 'decode' ? p.retractedQueue : 0),
  );
  x.gauge('sglang:num_paused_reqs', 'The number of paused requests by async weight sync.', withPid(0));
  x.gauge(
    'sglang:utilization',
    'The utilization.',
    perRank((i) => (role === 'prefill' ? -1 : Math.min(1, usage(i)))),
  );
  x.gauge(
    'sglang:is_cuda_graph',
    'Whether the batch is using CUDA graph.',
    perRank(() => (role === 'decode' ? 1 : 0)),
  );
  if (!e4) {
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
  } else {
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
    // A tokenizer-side gauge: tokenizer labels plus the startup phase.
    const s = startupSeconds(p);
    x.gauge('sglang:startup_time_seconds', 'Time spent in each startup phase in seconds.', [
      [{ ...tokLabels, phase: 'kv_cache_allocation' }, round2(s * 0.1)],
      [{ ...tokLabels, phase: 'load_weight' }, round2(s * 0.45)],
      [{ ...tokLabels, phase: 'scheduler_e2e' }, round2(s * 0.9)],
      [{ ...tokLabels, phase: 'tokenizer_e2e' }, s],
    ]);
  }

  // KV transfer: gauges in E1/E2 (2 in E1, 5 in E2), histograms from E3 on; observed on the prefill side.
  if (role === 'prefill' && p.kvSpeed.count > 0) {
    if (kvHistograms) {
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
      if (since2) {
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
  if (e4) {
    // kv_transfer_metrics.py: its own registry, only the stage label, pre-seeded at 0 for both stages.
    x.counter('sglang:kv_transfer_timeouts_total', 'Total number of KV transfer timeouts.', [
      [{ stage: 'bootstrap' }, 0],
      [{ stage: 'transfer' }, role === 'prefill' ? p.transferFailed : 0],
    ]);
  }

  // Scheduler-side counters; the labelled child exists from its first increment.
  x.counter(
    'sglang:num_bootstrap_failed_reqs_total',
    'The number of bootstrap failed requests.',
    onceSet(role === 'prefill' ? p.bootstrapFailed : 0),
  );
  x.counter(
    'sglang:num_transfer_failed_reqs_total',
    'The number of transfer failed requests.',
    onceSet(p.transferFailed),
  );
  if (since2) {
    x.counter(
      'sglang:num_prefill_retries_total',
      'The number of prefill retries.',
      onceSet(p.prefillRetries),
    );
    x.counter(
      'sglang:num_retracted_requests_total',
      'Total number of retracted requests due to insufficient KV cache.',
      onceSet(p.retractedRequests),
    );
    x.counter(
      'sglang:num_retracted_input_tokens_total',
      'Total number of input tokens of retracted requests.',
      onceSet(p.retractedInputTokens),
    );
    x.counter(
      'sglang:num_retracted_output_tokens_total',
      'Total number of output tokens of retracted requests.',
      onceSet(p.retractedOutputTokens),
    );
    const modes: Array<[string, number]> =
      role === 'prefill'
        ? [
            ['prefill_compute', p.realtimePrefillCompute],
            ['prefill_cache', p.realtimePrefillCache],
          ]
        : [['decode', Math.floor(p.realtimeDecode)]];
    x.counter(
      'sglang:realtime_tokens_total',
      'Total number of tokens processed, updated in real time.',
      modes.filter(([, v]) => v > 0).map(([mode, v]): [Labels, number] => [{ ...schedLabels(0), mode }, v]),
    );
    const passes: Array<[string, number]> =
      role === 'prefill' ? [['prefill_none', p.noneGraphPasses]] : [['decode_cuda_graph', p.cudaGraphPasses]];
    x.counter(
      'sglang:cuda_graph_passes_total',
      'Total number of forward passes by cuda graph usage.',
      passes.filter(([, v]) => v > 0).map(([mode, v]): [Labels, number] => [{ ...schedLabels(0), mode }, v]),
    );
  }
  if (p.queueTime.count > 0) {
    x.histogram('sglang:queue_time_seconds', 'Histogram of queueing time in seconds.', [
      [schedLabels(0), e4 ? p.queueTime : p.queueTimeLegacy],
    ]);
  }

  // Tokenizer-side metrics: created at the first request.
  if (p.numRequests > 0) {
    x.counter('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', [
      [streamed, p.promptTokens],
    ]);
    x.counter('sglang:generation_tokens_total', 'Number of generation tokens processed.', [
      [streamed, p.generationTokens],
    ]);
    x.counter('sglang:num_requests_total', 'Number of requests processed.', [[streamed, p.numRequests]]);
    x.counter(
      'sglang:cached_tokens_total',
      'Number of cached prompt tokens.',
      e4 ? [[{ ...tokLabels, cache_source: 'device' }, p.cachedTokens]] : [[tokLabels, p.cachedTokens]],
    );
  }
  if (p.abortedRequests > 0) {
    x.counter('sglang:num_aborted_requests_total', 'Number of requests aborted.', [
      [tokLabels, p.abortedRequests],
    ]);
  }
  if (p.ttft.count > 0) {
    x.histogram('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', [
      [streamed, p.ttft],
    ]);
  }
  if (p.itl.count > 0) {
    x.histogram('sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', [
      [tokLabels, p.itl],
    ]);
  }
  if (p.e2e.count > 0) {
    x.histogram('sglang:e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', [
      [streamed, p.e2e],
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
