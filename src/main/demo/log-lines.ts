// The text of the log lines the demo host's services write: SGLang's Python logger
// ("[2026-11-29 16:46:30 TP0] …"), uvicorn's access log, the router's Rust tracing output, and the
// messages systemd (PID 1) writes about the units.
import { MODEL_NAME, MODEL_PATH, PORTS, TP_SIZE, type ServerRole } from './units';
import { isSmgEra, type RouterEra } from './eras';
import { cpuTimespan, pythonAsctime, rustTracingTimestamp, tqdmElapsed } from './time-format';

export const SHARDS = 17;

/** SGLang's logger prefix: "[2026-11-29 16:46:30 TP0] " or "[… DP1 TP1] " with DP attention. */
export function sgl(ms: number, msg: string, rank?: { tp: number; dp?: number }): string {
  const who = rank ? (rank.dp !== undefined ? ` DP${rank.dp} TP${rank.tp}` : ` TP${rank.tp}`) : '';
  return `[${pythonAsctime(ms)}${who}] ${msg}`;
}

export function serverArgsLine(role: ServerRole, port: number, dpRanks: number, metrics: boolean): string {
  const dp = role === 'decode' ? dpRanks : 1;
  return (
    `server_args=ServerArgs(model_path='${MODEL_PATH}', tokenizer_path='${MODEL_PATH}', tokenizer_mode='auto', ` +
    `skip_tokenizer_init=False, load_format='auto', trust_remote_code=False, context_length=None, ` +
    `is_embedding=False, enable_multimodal=None, revision=None, model_impl='auto', host='127.0.0.1', ` +
    `port=${port}, skip_server_warmup=False, warmups=None, nccl_port=None, dtype='auto', quantization=None, ` +
    `kv_cache_dtype='auto', mem_fraction_static=0.88, max_running_requests=None, max_total_tokens=None, ` +
    `chunked_prefill_size=8192, max_prefill_tokens=16384, schedule_policy='fcfs', schedule_conservativeness=1.0, ` +
    `page_size=1, tp_size=${TP_SIZE}, pp_size=1, stream_interval=1, random_seed=${port * 7 + 13}, ` +
    `log_level='info', log_level_http=None, log_requests=False, show_time_cost=False, ` +
    `enable_metrics=${metrics ? 'True' : 'False'}, enable_metrics_for_all_schedulers=False, ` +
    `decode_log_interval=40, served_model_name='${MODEL_NAME}', dp_size=${dp}, ` +
    `enable_dp_attention=${dp > 1 ? 'True' : 'False'}, base_gpu_id=${role === 'prefill' ? 0 : 4}, ` +
    `disaggregation_mode='${role}', disaggregation_transfer_backend='mooncake', ` +
    `disaggregation_bootstrap_port=${PORTS.bootstrap}, disaggregation_ib_device='mlx5_0', ` +
    `disable_radix_cache=False, disable_cuda_graph=${role === 'prefill' ? 'True' : 'False'}, ` +
    `cuda_graph_max_bs=256, attention_backend='fa3', sampling_backend='flashinfer', grammar_backend='xgrammar')`
  );
}

export function shardProgress(done: number, elapsedS: number): string {
  const pct = Math.floor((100 * done) / SHARDS);
  const per = done > 0 ? elapsedS / done : 0;
  const remaining = done > 0 ? per * (SHARDS - done) : 0;
  const fmt = tqdmElapsed;
  const rate = done > 0 ? `${per.toFixed(2)}s/it` : '?it/s';
  const eta = done > 0 ? fmt(remaining) : '?';
  return `Loading safetensors checkpoint shards: ${String(pct).padStart(3, ' ')}% Completed | ${done}/${SHARDS} [${fmt(elapsedS)}<${eta}, ${rate}]`;
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

export const systemdText = {
  starting: (unit: string, desc: string) => `Starting ${unit} - ${desc}...`,
  started: (unit: string, desc: string) => `Started ${unit} - ${desc}.`,
  stopping: (unit: string, desc: string) => `Stopping ${unit} - ${desc}...`,
  stopped: (unit: string, desc: string) => `Stopped ${unit} - ${desc}.`,
  deactivated: (unit: string) => `${unit}: Deactivated successfully.`,
  consumed: (unit: string, cpuS: number, peakGiB: number) =>
    `${unit}: Consumed ${cpuTimespan(cpuS)} CPU time, ${peakGiB.toFixed(1)}G memory peak, 0B memory swap peak.`,
  exited: (unit: string, status: number) =>
    `${unit}: Main process exited, code=exited, status=${status}/${status === 0 ? 'SUCCESS' : 'FAILURE'}`,
  killed: (unit: string, sig: number, name: string) =>
    `${unit}: Main process exited, code=killed, status=${sig}/${name}`,
  failedResult: (unit: string, result: string) => `${unit}: Failed with result '${result}'.`,
  failedToStart: (unit: string, desc: string) => `Failed to start ${unit} - ${desc}.`,
  scheduledRestart: (unit: string, n: number) =>
    `${unit}: Scheduled restart job, restart counter is at ${n}.`,
  startTimedOut: (unit: string, phase: string) => `${unit}: ${phase} operation timed out. Terminating.`,
  controlKilled: (unit: string) => `${unit}: Control process exited, code=killed, status=15/TERM`,
};

export function consumedLine(unit: string, cpuS: number, peakGiB: number): string {
  return systemdText.consumed(unit, cpuS, peakGiB);
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
