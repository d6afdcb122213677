// The text of the log lines the demo host's services write: SGLang's Python logger
// ("[2026-11-29 16:46:30 TP0] …"), uvicorn's access log, the router's Rust tracing output, and the
// messages systemd (PID 1) writes about the units.
import { MODEL_NAME, MODEL_PATH, PORTS, TP_SIZE, type ServerRole } from './units';
import { isSmgEra, type RouterEra } from './eras';
import { cpuTimespan, pythonAsctime, rustTracingTimestamp } from './time-format';

export const SHARDS = 17;

/** SGLang's logger prefix: "[2026-11-29 16:46:30 TP0] " or "[… DP1 TP1] " with DP attention. */
export function sgl(ms: number, msg: string, rank?: { tp: number; dp?: number }): string {
  const who = rank ? (rank.dp !== undefined ? ` DP${rank.dp} TP${rank.tp}` : ` TP${rank.tp}`) : '';
  return `[${pythonAsctime(ms)}${who}] ${msg}`;
}

/** The rest of SGLang's ServerArgs fields with their defaults, in its dataclass order: the line is several kB. */
const SERVER_ARG_DEFAULTS = [
  "tokenizer_mode='auto'",
  'tokenizer_worker_num=1',
  'skip_tokenizer_init=False',
  "load_format='auto'",
  "model_loader_extra_config='{}'",
  'trust_remote_code=True',
  'context_length=None',
  'is_embedding=False',
  'enable_multimodal=None',
  'revision=None',
  "model_impl='auto'",
  'skip_server_warmup=False',
  'warmups=None',
  'nccl_port=None',
  'checkpoint_engine_wait_weights_before_ready=False',
  "dtype='auto'",
  'quantization=None',
  'quantization_param_path=None',
  "kv_cache_dtype='auto'",
  'enable_fp32_lm_head=False',
  'modelopt_quant=None',
  'modelopt_checkpoint_restore_path=None',
  'modelopt_checkpoint_save_path=None',
  'modelopt_export_path=None',
  'quantize_and_serve=False',
  'mem_fraction_static=0.835',
  'max_running_requests=None',
  'max_queued_requests=None',
  'max_total_tokens=None',
  'chunked_prefill_size=8192',
  'enable_dynamic_chunking=False',
  'max_prefill_tokens=16384',
  'prefill_max_requests=None',
  "schedule_policy='fcfs'",
  'enable_priority_scheduling=False',
  'abort_on_priority_when_disabled=False',
  'schedule_low_priority_values_first=False',
  'priority_scheduling_preemption_threshold=10',
  'schedule_conservativeness=1.0',
  'page_size=1',
  'hybrid_kvcache_ratio=None',
  'swa_full_tokens_ratio=0.8',
  'disable_hybrid_swa_memory=False',
  "radix_eviction_policy='lru'",
  "device='cuda'",
  'pp_size=1',
  'pp_max_micro_batch_size=None',
  'stream_interval=1',
  'stream_output=False',
  'random_seed=928476211',
  'constrained_json_whitespace_pattern=None',
  'constrained_json_disable_any_whitespace=False',
  'watchdog_timeout=300',
  'dist_timeout=None',
  'download_dir=None',
  'model_checksum=None',
  'sleep_on_idle=False',
  'mm_process_config={}',
  "log_level='info'",
  'log_level_http=None',
  'log_requests=False',
  'log_requests_level=2',
  'crash_dump_folder=None',
  'show_time_cost=False',
  'enable_metrics_for_all_schedulers=False',
  "tokenizer_metrics_custom_labels_header='x-custom-labels'",
  'tokenizer_metrics_allowed_custom_labels=None',
  'bucket_time_to_first_token=None',
  'bucket_inter_token_latency=None',
  'bucket_e2e_request_latency=None',
  'collect_tokens_histogram=False',
  'prompt_tokens_buckets=None',
  'generation_tokens_buckets=None',
  'gc_warning_threshold_secs=0.0',
  'decode_log_interval=40',
  'enable_request_time_stats_logging=False',
  'kv_events_config=None',
  'enable_trace=False',
  "otlp_traces_endpoint='localhost:4317'",
  'export_metrics_to_file=False',
  'export_metrics_to_file_dir=None',
  'admin_api_key=None',
  "file_storage_path='sglang_storage'",
  'enable_cache_report=False',
  'reasoning_parser=None',
  'tool_call_parser=None',
  'tool_server=None',
  "sampling_defaults='model'",
  'dp_size=1',
  "load_balance_method='round_robin'",
  'load_watch_interval=0.1',
  'prefill_round_robin_balance=False',
  'dist_init_addr=None',
  'nnodes=1',
  'node_rank=0',
  'preferred_sampling_params=None',
  'enable_lora=None',
  'max_lora_rank=None',
  'lora_target_modules=None',
  'lora_paths=None',
  'max_loaded_loras=None',
  'max_loras_per_batch=8',
  "lora_backend='triton'",
  'max_lora_chunk_size=16',
  "attention_backend='fa3'",
  'decode_attention_backend=None',
  'prefill_attention_backend=None',
  "sampling_backend='flashinfer'",
  "grammar_backend='xgrammar'",
  'mm_attention_backend=None',
  'speculative_algorithm=None',
  'speculative_draft_model_path=None',
  'speculative_draft_model_revision=None',
  'speculative_num_steps=None',
  'speculative_eagle_topk=None',
  'speculative_num_draft_tokens=None',
  'speculative_accept_threshold_single=1.0',
  'speculative_accept_threshold_acc=1.0',
  'speculative_token_map=None',
  'ep_size=1',
  "moe_a2a_backend='none'",
  "moe_runner_backend='auto'",
  "flashinfer_mxfp4_moe_precision='default'",
  'enable_flashinfer_allreduce_fusion=False',
  "deepep_mode='auto'",
  'ep_num_redundant_experts=0',
  "ep_dispatch_algorithm='static'",
  "init_expert_location='trivial'",
  'enable_eplb=False',
  "eplb_algorithm='auto'",
  'enable_hierarchical_cache=False',
  'hicache_ratio=2.0',
  'hicache_size=0',
  "hicache_write_policy='write_through'",
  "hicache_io_backend='kernel'",
  "hicache_mem_layout='layer_first'",
  'hicache_storage_backend=None',
  "hicache_storage_prefetch_policy='best_effort'",
  'hicache_storage_backend_extra_config=None',
  'enable_double_sparsity=False',
  'cuda_graph_max_bs=256',
  'cuda_graph_bs=None',
  'disable_cuda_graph=False',
  'disable_cuda_graph_padding=False',
  'enable_profile_cuda_graph=False',
  'enable_cudagraph_gc=False',
  'enable_nccl_nvls=False',
  'enable_symm_mem=False',
  'disable_flashinfer_cutlass_moe_fp4_allgather=False',
  'enable_tokenizer_batch_encode=False',
  'disable_outlines_disk_cache=False',
  'disable_custom_all_reduce=False',
  'enable_mscclpp=False',
  'disable_overlap_schedule=False',
  'enable_mixed_chunk=False',
  'enable_dp_attention=False',
  'enable_dp_lm_head=False',
  'enable_two_batch_overlap=False',
  'enable_torch_compile=False',
  'torch_compile_max_bs=32',
  'triton_attention_num_kv_splits=8',
  'num_continuous_decode_steps=1',
  'delete_ckpt_after_loading=False',
  'enable_memory_saver=False',
  'allow_auto_truncate=False',
  'enable_custom_logit_processor=False',
  'flashinfer_mla_disable_ragged=False',
  'disable_shared_experts_fusion=False',
  'disable_chunked_prefix_cache=False',
  'disable_fast_image_processor=False',
  'keep_mm_feature_on_device=False',
  'enable_return_hidden_states=False',
  'scheduler_recv_interval=1',
  'numa_node=None',
  'enable_deterministic_inference=False',
  'debug_tensor_dump_output_folder=None',
  'debug_tensor_dump_input_file=None',
  "disaggregation_transfer_backend='mooncake'",
  'disaggregation_decode_tp=None',
  'disaggregation_decode_dp=None',
  'disaggregation_prefill_pp=1',
  'disaggregation_ib_device=None',
  'num_reserved_decode_tokens=512',
  'disaggregation_decode_polling_interval=1',
  'custom_weight_loader=[]',
  'weight_loader_disable_mmap=False',
  'enable_pdmux=False',
  'sm_group_num=8',
];

/**
 * SGLang's start-up line with every ServerArgs field (logged once by the launcher): over 4 kB, so journalctl's
 * JSON gives its MESSAGE as null unless --all.
 */
export function serverArgsLine(role: ServerRole, port: number, dpRanks: number, metrics: boolean): string {
  const dp = role === 'decode' ? dpRanks : 1;
  const given = [
    `model_path='${MODEL_PATH}'`,
    `tokenizer_path='${MODEL_PATH}'`,
    "host='127.0.0.1'",
    `port=${port}`,
    'mem_fraction_static=0.88',
    `tp_size=${TP_SIZE}`,
    `random_seed=${port * 7 + 13}`,
    `enable_metrics=${metrics ? 'True' : 'False'}`,
    `served_model_name='${MODEL_NAME}'`,
    `dp_size=${dp}`,
    `enable_dp_attention=${dp > 1 ? 'True' : 'False'}`,
    `base_gpu_id=${role === 'prefill' ? 0 : 4}`,
    `disaggregation_mode='${role}'`,
    `disaggregation_bootstrap_port=${PORTS.bootstrap}`,
    "disaggregation_ib_device='mlx5_0'",
    `disable_cuda_graph=${role === 'prefill' ? 'True' : 'False'}`,
  ];
  const named = new Set(given.map((g) => g.slice(0, g.indexOf('='))));
  const rest = SERVER_ARG_DEFAULTS.filter((d) => !named.has(d.slice(0, d.indexOf('='))));
  return `server_args=ServerArgs(${[...given, ...rest].join(', ')})`;
}

/** tqdm's format_interval: "MM:SS", "H:MM:SS" past an hour, seconds truncated. */
function tqdmInterval(seconds: number): string {
  const total = Math.max(0, Math.floor(seconds));
  const mins = Math.floor(total / 60);
  const s = total % 60;
  const h = Math.floor(mins / 60);
  const m = mins % 60;
  const p2 = (n: number): string => String(n).padStart(2, '0');
  return h ? `${h}:${p2(m)}:${p2(s)}` : `${p2(m)}:${p2(s)}`;
}

/** tqdm's rate: "{:5.2f}it/s", or the inverse "{:5.2f}s/it" when an item takes more than a second. */
function tqdmRate(rate: number | null): string {
  if (!rate) return '?it/s';
  return 1 / rate > 1
    ? `${(1 / rate).toFixed(2).padStart(5, ' ')}s/it`
    : `${rate.toFixed(2).padStart(5, ' ')}it/s`;
}

/** Python's "{:3.0f}" of a percentage. */
function tqdmPercent(done: number, total: number): string {
  return String(Math.round((100 * done) / total)).padStart(3, ' ');
}

/** One state of a tqdm bar: items done of total, seconds elapsed, and the rate tqdm shows (null before the first). */
export interface TqdmState {
  done: number;
  total: number;
  elapsedS: number;
  rate: number | null;
}

function tqdmTail(st: TqdmState): string {
  const remaining = st.rate ? tqdmInterval((st.total - st.done) / st.rate) : '?';
  return `${st.done}/${st.total} [${tqdmInterval(st.elapsedS)}<${remaining}, ${tqdmRate(st.rate)}]`;
}

/**
 * SGLang's weight-loading bar (model_loader/weight_utils.py `_BAR_FORMAT`, a plain format that ends in "\n" so
 * that each redraw is a line of its own): "Loading safetensors checkpoint shards:   6% Completed | 1/17 [...]".
 */
export function shardProgress(
  done: number,
  elapsedS: number,
  total = SHARDS,
  rate: number | null = done > 0 && elapsedS > 0 ? done / elapsedS : null,
): string {
  return `Loading safetensors checkpoint shards: ${tqdmPercent(done, total)}% Completed | ${tqdmTail({ done, total, elapsedS, rate })}`;
}

const BLOCKS = ' ▏▎▍▌▋▊▉█';

/** tqdm's default bar: "{desc}: {percentage:3.0f}%|{bar}| {n}/{total} [...]", 10 cells of Unicode eighths. */
export function tqdmDefaultBar(desc: string, st: TqdmState): string {
  const frac = st.done / st.total;
  const eighths = Math.floor(frac * 10 * 8);
  const full = Math.floor(eighths / 8);
  const bar =
    full >= 10 ? BLOCKS[8].repeat(10) : BLOCKS[8].repeat(full) + BLOCKS[eighths % 8] + ' '.repeat(9 - full);
  return `${desc ? `${desc}: ` : ''}${tqdmPercent(st.done, st.total)}%|${bar}| ${tqdmTail(st)}`;
}

/**
 * The journal lines a tqdm bar becomes on a pipe to journald, which splits the stream only at "\n". tqdm
 * writes each redraw as "\r" + bar + spaces over the rest of a longer previous one (status_printer), and a
 * "\n" when it closes. With a format that ends in "\n" (SGLang's weight loader) every redraw is a line, led
 * by the spaces the previous one left; otherwise (tqdm's default) the whole bar, every redraw joined by "\r",
 * is one line written when the bar closes. journald drops empty lines.
 */
export function tqdmJournalLines(bars: readonly string[], formatEndsWithNewline: boolean): string[] {
  let last = 0;
  const writes = bars.map((b) => {
    const len = [...b].length + (formatEndsWithNewline ? 1 : 0);
    const pad = ' '.repeat(Math.max(last - len, 0));
    last = len;
    return { bar: b, pad };
  });
  if (!formatEndsWithNewline) return [writes.map((w) => `\r${w.bar}${w.pad}`).join('')];
  const lines = writes.map((w, i) => `${i > 0 ? writes[i - 1].pad : ''}\r${w.bar}`);
  const tail = writes.at(-1)?.pad ?? '';
  return tail ? [...lines, tail] : lines;
}

/** tqdm's smoothed rate (EMA of items and seconds per redraw, smoothing 0.3), as its __iter__ computes it. */
export class TqdmRate {
  private dn = new Ema();
  private dt = new Ema();
  update(items: number, seconds: number): void {
    if (items && seconds) {
      this.dn.add(items);
      this.dt.add(seconds);
    }
  }
  get rate(): number | null {
    const dt = this.dt.value;
    return dt ? this.dn.value / dt : null;
  }
}

class Ema {
  private last = 0;
  private calls = 0;
  add(x: number): void {
    this.last = 0.3 * x + 0.7 * this.last;
    this.calls++;
  }
  get value(): number {
    return this.calls ? this.last / (1 - 0.7 ** this.calls) : 0;
  }
}

export function uvicornAccess(clientPort: number, method: string, path: string, status: number): string {
  const reason: Record<number, string> = {
    200: 'OK',
    307: 'Temporary Redirect',
    404: 'Not Found',
    405: 'Method Not Allowed',
    500: 'Internal Server Error',
    503: 'Service Unavailable',
  };
  return `INFO:     127.0.0.1:${clientPort} - "${method} ${path} HTTP/1.1" ${status} ${reason[status] ?? ''}`.trimEnd();
}

/** Rust tracing-subscriber's default format without ANSI colours: level right-aligned to 5. */
export function rust(
  us: number,
  level: 'INFO' | 'WARN' | 'ERROR' | 'DEBUG',
  target: string,
  msg: string,
): string {
  return `${rustTracingTimestamp(us)} ${level.padStart(5, ' ')} ${target}: ${msg}`;
}

export function routerTarget(era: RouterEra, module: string): string {
  return `${isSmgEra(era) ? 'smg' : 'sglang_router_rs'}::${module}`;
}

/** What systemd 252 (PID 1) writes about a Type=simple service, word for word, with journald's MESSAGE_ID. */
export const systemdText = {
  started: (unit: string, desc: string) => `Started ${unit} - ${desc}.`,
  stopping: (unit: string, desc: string) => `Stopping ${unit} - ${desc}...`,
  stopped: (unit: string, desc: string) => `Stopped ${unit} - ${desc}.`,
  deactivated: (unit: string) => `${unit}: Deactivated successfully.`,
  consumed: (unit: string, cpuS: number) => `${unit}: Consumed ${cpuTimespan(cpuS)} CPU time.`,
  exited: (unit: string, status: number) =>
    `${unit}: Main process exited, code=exited, status=${status}/${status === 0 ? 'SUCCESS' : 'FAILURE'}`,
  killed: (unit: string, sig: number, name: string) =>
    `${unit}: Main process exited, code=killed, status=${sig}/${name}`,
  failedResult: (unit: string, result: string) => `${unit}: Failed with result '${result}'.`,
  failedToStart: (unit: string, desc: string) => `Failed to start ${unit} - ${desc}.`,
  scheduledRestart: (unit: string, n: number) =>
    `${unit}: Scheduled restart job, restart counter is at ${n}.`,
};

/** journald MESSAGE_IDs of PID 1's lines (sd-messages.h), as the real journal carries them. */
export const SYSTEMD_MESSAGE_IDS = {
  started: '39f53479d3a045ac8e11786248231fbf',
  stopping: 'de5b426a63be47a7b6ac3eaac82e2f6f',
  stopped: '9d1aaa27d60140bd96365438aad20286',
  deactivated: '7ad2d189f7e94e70a38c781354912448',
  consumed: 'ae8f7b866b0347b9af31fe1c80b127c0',
  exited: '98e322203f7a4ed290d09fe03c09fe15',
  failedResult: 'd9b373ed55a64feb8242e02dbe79a49c',
  scheduledRestart: '5eb03494b6584870a536b337290809b3',
} as const;

/**
 * systemd logs the CPU a unit used when it stops only from a second on (below: at debug level, not stored),
 * and past ten minutes as a notice. Returns the priority, or null when nothing is logged.
 */
export function consumedPriority(cpuS: number): number | null {
  if (cpuS < 1) return null;
  return cpuS > 600 ? 5 : 6;
}

/** The traceback SGLang prints when the scheduler cannot allocate its KV pool at startup. */
export function startupFailureTraceback(ms: number, role: ServerRole): string[] {
  const r = { tp: 0 };
  const gpu = role === 'prefill' ? 0 : 4;
  return [
    sgl(ms, 'Scheduler hit an exception: Traceback (most recent call last):', r),
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2954, in run_scheduler_process',
    '    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)',
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 345, in __init__',
    '    self.tp_worker = TpWorkerClass(',
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/model_executor/model_runner.py", line 1498, in init_memory_pool',
    '    raise RuntimeError(',
    `RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.88 (GPU ${gpu} has 1.02 GiB free)`,
    '',
    sgl(ms + 40, 'Received sigquit from a child process. It usually means the child failed.'),
    'Traceback (most recent call last):',
    '  File "<frozen runpy>", line 198, in _run_module_as_main',
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/launch_server.py", line 14, in <module>',
    '    launch_server(server_args)',
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/entrypoints/http_server.py", line 1201, in launch_server',
    '    tokenizer_manager, template_manager, scheduler_info = _launch_subprocesses(server_args=server_args)',
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/entrypoints/engine.py", line 843, in _launch_subprocesses',
    '    raise RuntimeError(',
    'RuntimeError: Rank 0 scheduler is dead. Please check if there are relevant logs.',
  ];
}

/** What a scheduler crash at runtime looks like just before the watchdog kills the process tree. */
export function runtimeCrash(ms: number): string[] {
  const r = { tp: 0 };
  return [
    sgl(ms, 'Scheduler hit an exception: Traceback (most recent call last):', r),
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2966, in run_scheduler_process',
    '    scheduler.event_loop_overlap()',
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 1012, in event_loop_overlap',
    '    self.process_batch_result(tmp_batch, tmp_result)',
    'RuntimeError: CUDA error: an illegal memory access was encountered',
    'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
    'For debugging consider passing CUDA_LAUNCH_BLOCKING=1',
    '',
    sgl(ms + 30, 'Received sigquit from a child process. It usually means the child failed.'),
  ];
}
