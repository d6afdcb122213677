// A synthetic PD session for tests and benchmarks: prefill, decode and router scraped at 1 s, ~300 series each,
// stepped one second at a time on a seed.
//
// The workload is a small queueing model, not random noise: Poisson arrivals with a diurnal rate and bursts,
// lognormal prompt/output lengths, a prefill token budget, KV transfer, token-by-token decode whose inter-token
// latency grows with batch size, and one decode restart (counter reset, new pid label, 503s at the router). Values
// are written the way SGLang and smg write them: integer counters, full-precision float sums and ratios, 2-decimal
// token_usage, gauges refreshed only when the scheduler logs stats.
import type {
  Exposition,
  MetricFamily,
  MetricType,
  Sample,
} from '../../src/main/core/probes/exposition/types';
import type { AppEvent, HealthResult, UnitState } from '../../src/shared/domain';
import type { JournalLine } from '../../src/main/core/recording';
// The demo host's seeded generator: one seed reproduces one synthetic session.
import { Rng } from '../../src/main/demo/rng';

// ---------------------------------------------------------------------------------------------------------------
// Metric families whose samples are mutated in place each tick (the writer reads values, not identities).

class Registry {
  readonly families: MetricFamily[] = [];
  private readonly byName = new Map<string, MetricFamily>();
  sampleCount = 0;

  family(name: string, type: MetricType, help: string): MetricFamily {
    let f = this.byName.get(name);
    if (!f) {
      f = { name, type, help, samples: [] };
      this.byName.set(name, f);
      this.families.push(f);
    }
    return f;
  }

  sample(family: MetricFamily, name: string, labels: Record<string, string>, value = 0): Sample {
    const s: Sample = { name, labels, value };
    family.samples.push(s);
    this.sampleCount++;
    return s;
  }

  remove(family: MetricFamily, s: Sample): void {
    const i = family.samples.indexOf(s);
    if (i >= 0) {
      family.samples.splice(i, 1);
      this.sampleCount--;
    }
  }

  exposition(): Exposition {
    return { format: 'prometheus', families: this.families, sampleCount: this.sampleCount };
  }
}

function sortedLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(labels).sort()) out[k] = labels[k];
  return out;
}

class Gauge {
  readonly s: Sample;
  constructor(reg: Registry, name: string, help: string, labels: Record<string, string>) {
    this.s = reg.sample(reg.family(name, 'gauge', help), name, labels);
  }
  set(v: number): void {
    this.s.value = v;
  }
}

class Counter {
  readonly s: Sample;
  constructor(reg: Registry, name: string, help: string, labels: Record<string, string>) {
    this.s = reg.sample(reg.family(name, 'counter', help), name, labels);
  }
  inc(v = 1): void {
    this.s.value += v;
  }
  reset(): void {
    this.s.value = 0;
  }
}

/** A labelled histogram child: buckets are cumulative, the sum is a float accumulated the way clients do it. */
class Histogram {
  private readonly bucketSamples: Sample[] = [];
  private readonly sumSample: Sample;
  private readonly countSample: Sample;
  constructor(
    reg: Registry,
    name: string,
    help: string,
    labels: Record<string, string>,
    private readonly bounds: number[],
    sorted: boolean,
    fmtLe: (b: number) => string,
  ) {
    const fam = reg.family(name, 'histogram', help);
    for (const b of [...bounds, Infinity]) {
      const le = b === Infinity ? '+Inf' : fmtLe(b);
      const l = { ...labels, le };
      this.bucketSamples.push(reg.sample(fam, `${name}_bucket`, sorted ? sortedLabels(l) : l));
    }
    this.sumSample = reg.sample(fam, `${name}_sum`, labels);
    this.countSample = reg.sample(fam, `${name}_count`, labels);
  }
  observe(v: number, weight = 1): void {
    for (let i = 0; i < this.bounds.length; i++)
      if (v <= this.bounds[i]) this.bucketSamples[i].value += weight;
    this.bucketSamples[this.bounds.length].value += weight;
    this.sumSample.value += v * weight;
    this.countSample.value += weight;
  }
  reset(): void {
    for (const s of this.bucketSamples) s.value = 0;
    this.sumSample.value = 0;
    this.countSample.value = 0;
  }
}

const pyLe = (b: number): string => (Number.isInteger(b) ? `${b}.0` : String(b));
const rustLe = (b: number): string => String(b);

// Bucket layouts from reference/sglang-metrics.md
const TTFT_BUCKETS = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400];
const E2E_BUCKETS = [
  0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400,
];
const ITL_BUCKETS = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6,
  0.8, 1, 2, 4, 6, 8,
];
const QUEUE_BUCKETS = [
  0.001, 0.005, 0.01, 0.05, 0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200,
  300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
].sort((a, b) => a - b);
const STAGE_BUCKETS = Array.from({ length: 30 }, (_, i) => Number((0.001 * 1.62 ** i).toPrecision(6)));
const KV_LAT_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
const KV_WAIT_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500];
const KV_SPEED_BUCKETS = [0.1, 0.5, 1, 5, 10, 25, 50, 100, 200, 400];
const KV_MB_BUCKETS = [1, 5, 10, 50, 100, 500, 1000, 5000, 10000];
const TOKENS_BUCKETS = [10, 50, 100, 300, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000];
const RETRACT_BUCKETS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 75, 100];
const SMG_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 45, 60, 90, 120, 180, 240, 300, 480,
  900, 1200, 1800, 2700, 3600, 5400, 7200,
];

const MODEL = 'Qwen/Qwen3-32B';

/** One SGLang server (prefill or decode) as its /metrics shows it. */
class SglangServer {
  readonly reg = new Registry();
  private readonly g: Record<string, Gauge> = {};
  private readonly c: Record<string, Counter> = {};
  private readonly h: Record<string, Histogram> = {};
  private retracted!: Gauge;
  private paused!: Gauge;
  private readonly sched: Record<string, string>;
  private readonly tok: Record<string, string>;

  constructor(
    readonly mode: 'prefill' | 'decode',
    readonly capacity: number,
    private pid: number,
  ) {
    this.sched = { engine_type: mode, model_name: MODEL, moe_ep_rank: '0', pp_rank: '0', tp_rank: '0' };
    this.tok = { engine_type: mode, model_name: MODEL };
    const reg = this.reg;
    const gauge = (n: string, help: string): void => {
      this.g[n] = new Gauge(reg, `sglang:${n}`, help, this.sched);
    };
    for (const [n, help] of [
      ['num_running_reqs', 'The number of running requests.'],
      ['num_queue_reqs', 'The number of requests in the waiting queue.'],
      ['num_grammar_queue_reqs', 'The number of requests in the grammar waiting queue.'],
      ['num_used_tokens', 'The number of used tokens.'],
      ['token_usage', 'The token usage.'],
      ['full_token_usage', 'The token usage for full attention layers.'],
      ['swa_token_usage', 'The token usage for SWA layers.'],
      ['kv_used_tokens', 'Number of actively used token slots in the KV cache pool.'],
      ['kv_evictable_tokens', 'Number of evictable (radix-cached) token slots in the KV cache pool.'],
      ['kv_available_tokens', 'Number of free token slots in the KV cache pool.'],
      ['max_total_num_tokens', 'Maximum total number of tokens in the KV cache pool.'],
      ['gen_throughput', 'The generation throughput (token/s).'],
      ['cache_hit_rate', 'The prefix cache hit rate.'],
      ['utilization', 'The utilization.'],
      ['new_token_ratio', 'The new token ratio.'],
      ['is_cuda_graph', 'Whether the batch is using CUDA graph.'],
      ['decode_sum_seq_lens', 'The sum of all sequence lengths in decode.'],
      ['context_len', 'The context length.'],
      ['page_size', 'The page size.'],
      ['engine_startup_time', 'The time taken for the engine to start up.'],
      ['engine_load_weights_time', 'The time taken for the engine to load weights.'],
      ['spec_accept_length', 'The average acceptance length of speculative decoding.'],
    ] as const)
      gauge(n, help);
    if (mode === 'prefill') {
      gauge('num_prefill_bootstrap_queue_reqs', 'The number of requests in the prefill bootstrap queue.');
      gauge('num_prefill_inflight_queue_reqs', 'The number of requests in the prefill inflight queue.');
    } else {
      gauge('num_decode_prealloc_queue_reqs', 'The number of requests in the decode prealloc queue.');
      gauge('num_decode_transfer_queue_reqs', 'The number of requests in the decode transfer queue.');
      gauge('pending_prealloc_token_usage', 'The token usage for pending preallocated tokens.');
    }
    this.addPidGauges();
    const counter = (n: string, help: string, labels: Record<string, string>): void => {
      this.c[n + JSON.stringify(labels)] = new Counter(reg, `sglang:${n}`, help, labels);
    };
    counter('prompt_tokens_total', 'Number of prefill tokens processed.', this.tok);
    counter('generation_tokens_total', 'Number of generation tokens processed.', this.tok);
    counter('num_requests_total', 'Number of requests processed.', this.tok);
    counter('num_aborted_requests_total', 'Number of requests aborted.', this.tok);
    for (const cs of ['device', 'host', 'total'])
      counter('cached_tokens_total', 'Number of cached prompt tokens.', { ...this.tok, cache_source: cs });
    for (const m of ['prefill_compute', 'prefill_cache', 'decode'])
      counter('realtime_tokens_total', 'Realtime tokens by mode.', { ...this.sched, mode: m });
    for (const m of [`${mode}_cuda_graph`, `${mode}_none`])
      counter('cuda_graph_passes_total', 'Forward passes by CUDA graph mode.', { ...this.sched, mode: m });
    for (const cat of ['forward', 'sample', 'schedule'])
      counter('forward_execution_seconds_total', 'Forward execution seconds.', {
        ...this.sched,
        category: cat,
      });
    counter('num_bootstrap_failed_reqs_total', 'The number of bootstrap failed requests.', this.sched);
    counter('num_transfer_failed_reqs_total', 'The number of transfer failed requests.', this.sched);
    counter('num_prefill_retries_total', 'The number of prefill retries.', this.sched);

    const hist = (
      key: string,
      n: string,
      help: string,
      labels: Record<string, string>,
      b: number[],
    ): void => {
      this.h[key] = new Histogram(reg, `sglang:${n}`, help, labels, b, true, pyLe);
    };
    hist(
      'ttft',
      'time_to_first_token_seconds',
      'Histogram of time to first token in seconds.',
      this.tok,
      TTFT_BUCKETS,
    );
    hist(
      'e2e',
      'e2e_request_latency_seconds',
      'Histogram of End-to-end request latency in seconds',
      this.tok,
      E2E_BUCKETS,
    );
    if (mode === 'prefill') {
      hist(
        'queue',
        'queue_time_seconds',
        'Histogram of queueing time in seconds.',
        this.sched,
        QUEUE_BUCKETS,
      );
      for (const st of [
        'request_process',
        'prefill_forward',
        'prefill_bootstrap',
        'prefill_transfer_kv_cache',
      ])
        hist(
          `stage:${st}`,
          'per_stage_req_latency_seconds',
          'Per-stage latency.',
          { ...this.sched, stage: st },
          STAGE_BUCKETS,
        );
      hist('kvlat', 'kv_transfer_latency_ms', 'KV transfer latency in ms.', this.sched, KV_LAT_BUCKETS);
      hist('kvspeed', 'kv_transfer_speed_gb_s', 'KV transfer speed in GB/s.', this.sched, KV_SPEED_BUCKETS);
      hist('kvmb', 'kv_transfer_total_mb', 'KV transfer size in MB.', this.sched, KV_MB_BUCKETS);
      hist('prompt', 'prompt_tokens_histogram', 'Prompt tokens per request.', this.tok, TOKENS_BUCKETS);
    } else {
      hist(
        'itl',
        'inter_token_latency_seconds',
        'Histogram of inter-token latency in seconds.',
        this.tok,
        ITL_BUCKETS,
      );
      for (const st of ['decode_prepare', 'decode_bootstrap', 'decode_waiting', 'decode_transferred'])
        hist(
          `stage:${st}`,
          'per_stage_req_latency_seconds',
          'Per-stage latency.',
          { ...this.sched, stage: st },
          STAGE_BUCKETS,
        );
      hist('kvalloc', 'kv_transfer_alloc_ms', 'KV allocation wait in ms.', this.sched, KV_WAIT_BUCKETS);
      hist('kvboot', 'kv_transfer_bootstrap_ms', 'KV bootstrap time in ms.', this.sched, KV_WAIT_BUCKETS);
      hist('gen', 'generation_tokens_histogram', 'Generation tokens per request.', this.tok, TOKENS_BUCKETS);
      hist('retract', 'num_retractions', 'Retractions per request.', this.sched, RETRACT_BUCKETS);
    }
    this.setConstants();
  }

  private addPidGauges(): void {
    const l = sortedLabels({ ...this.sched, pid: String(this.pid) });
    this.retracted = new Gauge(this.reg, 'sglang:num_retracted_reqs', 'The number of retracted requests.', l);
    this.paused = new Gauge(this.reg, 'sglang:num_paused_reqs', 'The number of paused requests.', l);
  }

  private setConstants(): void {
    this.g.max_total_num_tokens.set(this.capacity);
    this.g.context_len.set(131072);
    this.g.page_size.set(1);
    this.g.is_cuda_graph.set(this.mode === 'decode' ? 1 : 0);
    this.g.engine_startup_time.set(187.43217396736145 + this.pid / 1e5);
    this.g.engine_load_weights_time.set(61.90345788002014 + this.pid / 1e6);
  }

  /** A process restart: counters and histograms start over, pid-labelled gauges get a new series. */
  restart(newPid: number): void {
    for (const c of Object.values(this.c)) c.reset();
    for (const h of Object.values(this.h)) h.reset();
    for (const g of Object.values(this.g)) g.set(0);
    const famR = this.reg.family('sglang:num_retracted_reqs', 'gauge', '');
    const famP = this.reg.family('sglang:num_paused_reqs', 'gauge', '');
    this.reg.remove(famR, this.retracted.s);
    this.reg.remove(famP, this.paused.s);
    this.pid = newPid;
    this.addPidGauges();
    this.setConstants();
  }

  gauge(n: string, v: number): void {
    this.g[n]?.set(v);
  }
  inc(n: string, v: number, labels?: Record<string, string>): void {
    const l =
      labels ??
      (n.startsWith('num_') && !n.startsWith('num_requests') && !n.startsWith('num_aborted')
        ? this.sched
        : this.tok);
    this.c[n + JSON.stringify(l)]?.inc(v);
  }
  incSched(n: string, v: number, extra: Record<string, string>): void {
    this.c[n + JSON.stringify({ ...this.sched, ...extra })]?.inc(v);
  }
  incTok(n: string, v: number, extra: Record<string, string>): void {
    this.c[n + JSON.stringify({ ...this.tok, ...extra })]?.inc(v);
  }
  observe(key: string, v: number, weight = 1): void {
    this.h[key]?.observe(v, weight);
  }
  setRetracted(v: number): void {
    this.retracted.set(v);
  }
  setPaused(v: number): void {
    this.paused.set(v);
  }
}

/** The smg router's :29001/metrics. */
class SmgRouter {
  readonly reg = new Registry();
  readonly workers = ['http://127.0.0.1:30100', 'http://127.0.0.1:30200'];
  private readonly counters = new Map<string, Counter>();
  private readonly hists = new Map<string, Histogram>();
  private readonly gauges = new Map<string, Gauge>();

  counter(name: string, help: string, labels: Record<string, string>): Counter {
    const key = name + JSON.stringify(labels);
    let c = this.counters.get(key);
    if (!c) {
      c = new Counter(this.reg, name, help, labels);
      this.counters.set(key, c);
    }
    return c;
  }
  hist(name: string, help: string, labels: Record<string, string>): Histogram {
    const key = name + JSON.stringify(labels);
    let h = this.hists.get(key);
    if (!h) {
      h = new Histogram(this.reg, name, help, labels, SMG_BUCKETS, false, rustLe);
      this.hists.set(key, h);
    }
    return h;
  }
  gauge(name: string, help: string, labels: Record<string, string>): Gauge {
    const key = name + JSON.stringify(labels);
    let g = this.gauges.get(key);
    if (!g) {
      g = new Gauge(this.reg, name, help, labels);
      this.gauges.set(key, g);
    }
    return g;
  }
}

interface Req {
  arrival: number;
  prompt: number;
  uncached: number;
  output: number;
  generated: number;
  tokenCredit: number;
  prefillStart?: number;
  decodeStart?: number;
  ttft?: number;
  endpoint: 'chat' | 'completions';
  streaming: boolean;
}

export interface SyntheticScrape {
  ts: number;
  target: 'prefill' | 'decode' | 'router';
  exp: Exposition;
}

export interface SyntheticTick {
  scrapes: SyntheticScrape[];
  unitStates: { ts: number; role: 'prefill' | 'decode' | 'router'; state: UnitState }[];
  health: { ts: number; role: 'prefill' | 'decode' | 'router'; health: HealthResult }[];
  events: AppEvent[];
  journal: JournalLine[];
}

/**
 * A PD deployment under a day of load, stepped one second at a time. `step()` returns what the monitor would hand
 * the recorder in that second.
 */
export class SyntheticPdSession {
  readonly prefill = new SglangServer('prefill', 447416, 48211);
  readonly decode = new SglangServer('decode', 1290240, 48377);
  readonly router = new SmgRouter();
  private readonly rng: Rng;
  private t: number;
  private tick = 0;
  private prefillQueue: Req[] = [];
  private decodeActive: Req[] = [];
  private transferring: { req: Req; readyAt: number }[] = [];
  private burstUntil = 0;
  private burstFactor = 1;
  private evictable = { prefill: 150000, decode: 300000 };
  private decodeDownUntil = 0;
  private decodeRestartAt: number;
  private eventSeq = 0;
  private nRestarts = 0;

  constructor(
    readonly startMs: number,
    seed = 42,
    readonly durationMs = 86_400_000,
  ) {
    this.rng = new Rng(seed);
    this.t = startMs;
    // One decode crash somewhere in the afternoon of the session.
    this.decodeRestartAt = startMs + Math.round(durationMs * 0.58);
  }

  get now(): number {
    return this.t;
  }

  private arrivalRate(): number {
    const hour = ((this.t - this.startMs) / 3_600_000 + 8) % 24;
    const diurnal = 3.2 + 2.6 * Math.sin((2 * Math.PI * (hour - 9)) / 24);
    if (this.t > this.burstUntil && this.rng.next() < 1 / 1800) {
      this.burstUntil = this.t + (120 + this.rng.next() * 480) * 1000;
      this.burstFactor = 1.8 + this.rng.next() * 1.5;
    }
    return Math.max(0.2, diurnal) * (this.t < this.burstUntil ? this.burstFactor : 1);
  }

  step(): SyntheticTick {
    const rng = this.rng;
    const out: SyntheticTick = { scrapes: [], unitStates: [], health: [], events: [], journal: [] };
    const now = this.t;
    const P = this.prefill;
    const D = this.decode;
    const R = this.router;
    const decodeUp = now >= this.decodeDownUntil;

    if (now >= this.decodeRestartAt && this.decodeRestartAt > 0) {
      this.decodeRestartAt = 0;
      this.decodeDownUntil = now + 190_000;
      this.nRestarts++;
      const lost = this.decodeActive.length;
      this.decodeActive = [];
      D.restart(48377 + 911);
      out.events.push(
        this.event(now, 'alert', 'error', 'decode', 'decode exited: CUDA error: an illegal memory access'),
      );
      out.events.push(
        this.event(now + 5, 'restart-step', 'info', 'decode', 'systemd restarting sglang-decode.service'),
      );
      out.journal.push(
        this.jl(
          now,
          'decode',
          3,
          `RuntimeError: CUDA error: an illegal memory access was encountered (${lost} requests aborted)`,
        ),
      );
      out.unitStates.push({ ts: now, role: 'decode', state: this.unit('decode', 'activating', 'start', 0) });
      out.health.push({
        ts: now,
        role: 'decode',
        health: { ok: false, detail: 'connection refused', checkedAt: now },
      });
    }
    if (this.decodeDownUntil > 0 && now >= this.decodeDownUntil && now < this.decodeDownUntil + 1000) {
      out.unitStates.push({
        ts: now,
        role: 'decode',
        state: this.unit('decode', 'active', 'running', 49288),
      });
      out.health.push({
        ts: now,
        role: 'decode',
        health: { ok: true, status: 200, detail: '200 OK', checkedAt: now },
      });
      out.events.push(this.event(now, 'restart-step', 'info', 'decode', 'decode is healthy again'));
    }
    if (this.tick === 0) {
      for (const role of ['prefill', 'decode', 'router'] as const) {
        out.unitStates.push({
          ts: now,
          role,
          state: this.unit(
            role,
            'active',
            'running',
            role === 'prefill' ? 48211 : role === 'decode' ? 48377 : 48102,
          ),
        });
        out.health.push({
          ts: now,
          role,
          health: { ok: true, status: 200, detail: '200 OK', checkedAt: now },
        });
      }
      out.events.push(this.event(now, 'connection', 'info', undefined, 'connected to gpu-host-01'));
    }

    // Arrivals
    const n = rng.poisson(this.arrivalRate());
    let rejected = 0;
    for (let i = 0; i < n; i++) {
      const endpoint = rng.next() < 0.8 ? 'chat' : 'completions';
      const streaming = rng.next() < 0.7;
      if (!decodeUp) {
        rejected++;
        R.counter('smg_http_requests_total', 'Total HTTP requests by method and path', {
          method: 'POST',
          path: `/v1/${endpoint === 'chat' ? 'chat/completions' : 'completions'}`,
        }).inc();
        R.counter('smg_http_responses_total', 'Total HTTP responses by path, status_code and error_code', {
          path: `/v1/${endpoint === 'chat' ? 'chat/completions' : 'completions'}`,
          status_code: '503',
          error_code: 'no_workers',
        }).inc();
        R.counter('smg_router_request_errors_total', 'Router request errors', {
          router_type: 'http',
          backend_type: 'pd',
          connection_mode: 'http',
          model: MODEL,
          endpoint,
          error_type: 'no_workers',
        }).inc();
        continue;
      }
      const prompt = Math.min(32000, Math.max(16, Math.round(rng.logNormal(1800, 0.9))));
      const hit = Math.min(0.95, Math.max(0, 0.55 + 0.2 * rng.normal()));
      this.prefillQueue.push({
        arrival: now + rng.next() * 1000,
        prompt,
        uncached: Math.max(1, Math.round(prompt * (1 - hit))),
        output: Math.min(8000, Math.max(1, Math.round(rng.logNormal(220, 0.8)))),
        generated: 0,
        tokenCredit: 0,
        endpoint,
        streaming,
      });
      R.counter('smg_http_requests_total', 'Total HTTP requests by method and path', {
        method: 'POST',
        path: `/v1/${endpoint === 'chat' ? 'chat/completions' : 'completions'}`,
      }).inc();
      R.counter('smg_router_requests_total', 'Total routed requests', {
        router_type: 'http',
        backend_type: 'pd',
        connection_mode: 'http',
        model: MODEL,
        endpoint,
        streaming: String(streaming),
      }).inc();
    }

    // Prefill: a token budget per second, FIFO.
    const budget = 52000 * (0.9 + 0.2 * rng.next());
    let used = 0;
    let batches = 0;
    let prefillTokens = 0;
    let cachedTokens = 0;
    while (this.prefillQueue.length && used < budget && decodeUp) {
      const r = this.prefillQueue[0];
      const startAt = Math.max(r.arrival, now + (used / budget) * 1000);
      r.prefillStart = startAt;
      used += r.uncached;
      batches++;
      prefillTokens += r.prompt;
      cachedTokens += r.prompt - r.uncached;
      this.prefillQueue.shift();
      const fwd = r.uncached / budget;
      const queueWait = Math.max(0, (startAt - r.arrival) / 1000);
      const kvMs = rng.logNormal(18 + r.prompt * 0.004, 0.35);
      const kvMb = r.prompt * 0.25;
      r.ttft = queueWait + fwd + kvMs / 1000 + 0.012 + rng.logNormal(0.004, 0.5);
      P.observe('queue', queueWait);
      P.observe('stage:request_process', rng.logNormal(0.0025, 0.4));
      P.observe('stage:prefill_forward', fwd);
      P.observe('stage:prefill_bootstrap', rng.logNormal(0.004, 0.6));
      P.observe('stage:prefill_transfer_kv_cache', kvMs / 1000);
      P.observe('kvlat', kvMs);
      P.observe('kvspeed', kvMb / 1024 / (kvMs / 1000));
      P.observe('kvmb', kvMb);
      P.observe('prompt', r.prompt);
      P.observe('ttft', r.ttft);
      P.observe('e2e', r.ttft);
      P.inc('num_requests_total', 1);
      this.transferring.push({ req: r, readyAt: now + kvMs });
    }
    P.inc('prompt_tokens_total', prefillTokens);
    P.incTok('cached_tokens_total', cachedTokens * 0.93, { cache_source: 'device' });
    P.incTok('cached_tokens_total', cachedTokens * 0.07, { cache_source: 'host' });
    P.incTok('cached_tokens_total', cachedTokens, { cache_source: 'total' });
    P.incSched('realtime_tokens_total', used, { mode: 'prefill_compute' });
    P.incSched('realtime_tokens_total', cachedTokens, { mode: 'prefill_cache' });
    if (batches) {
      P.incSched('cuda_graph_passes_total', batches, { mode: 'prefill_none' });
      P.incSched('forward_execution_seconds_total', used / budget, { category: 'forward' });
      P.incSched('forward_execution_seconds_total', batches * rng.logNormal(0.0004, 0.3), {
        category: 'sample',
      });
      P.incSched('forward_execution_seconds_total', batches * rng.logNormal(0.0011, 0.3), {
        category: 'schedule',
      });
      // Prefill gauges refresh with each prefill batch.
      const inflight = this.transferring.length;
      const pUsed = Math.round(inflight * 1900 + rng.next() * 4000);
      this.evictable.prefill = Math.min(
        P.capacity - pUsed,
        Math.max(0, this.evictable.prefill + Math.round(rng.normal() * 3000 + 400)),
      );
      P.gauge('num_running_reqs', Math.min(batches, 8));
      P.gauge('num_queue_reqs', this.prefillQueue.length);
      P.gauge('num_used_tokens', pUsed);
      P.gauge('kv_used_tokens', pUsed);
      P.gauge('kv_evictable_tokens', this.evictable.prefill);
      P.gauge('kv_available_tokens', P.capacity - pUsed - this.evictable.prefill);
      P.gauge('token_usage', Math.round((pUsed / P.capacity) * 100) / 100);
      P.gauge('full_token_usage', pUsed / P.capacity);
      P.gauge('cache_hit_rate', prefillTokens ? cachedTokens / prefillTokens : 0);
      P.gauge('utilization', used / budget);
      P.gauge('new_token_ratio', 0.7 + 0.3 * rng.next());
      P.gauge('num_prefill_bootstrap_queue_reqs', rng.poisson(0.4));
      P.gauge('num_prefill_inflight_queue_reqs', inflight);
    }

    // KV arrives at decode.
    const arrived = this.transferring.filter((x) => x.readyAt <= now + 1000);
    this.transferring = this.transferring.filter((x) => x.readyAt > now + 1000);
    let decodeUsed = this.decodeActive.reduce((a, r) => a + r.prompt + r.generated, 0);
    let prealloc = 0;
    for (const { req } of arrived) {
      if (decodeUsed + req.prompt > D.capacity * 0.97) {
        prealloc++;
        this.transferring.push({ req, readyAt: now + 1000 });
        continue;
      }
      req.decodeStart = now;
      decodeUsed += req.prompt;
      this.decodeActive.push(req);
      D.observe('stage:decode_prepare', rng.logNormal(0.003, 0.4));
      D.observe('stage:decode_bootstrap', rng.logNormal(0.006, 0.5));
      D.observe('stage:decode_waiting', rng.logNormal(0.02, 0.7));
      D.observe('stage:decode_transferred', rng.logNormal(0.002, 0.4));
      D.observe('kvalloc', rng.logNormal(3, 0.8));
      D.observe('kvboot', rng.logNormal(6, 0.6));
    }

    // Decode: token-by-token, ITL grows with the batch.
    let genTokens = 0;
    const running = this.decodeActive.length;
    const itl = 0.011 + 0.00022 * running + 0.0004 * rng.normal();
    if (decodeUp) {
      const keep: Req[] = [];
      for (const r of this.decodeActive) {
        r.tokenCredit += 1 / Math.max(0.006, itl * (0.9 + 0.2 * rng.next()));
        const k = Math.min(Math.floor(r.tokenCredit), r.output - r.generated);
        r.tokenCredit -= k;
        r.generated += k;
        genTokens += k;
        if (k > 0) D.observe('itl', Math.max(0.003, rng.logNormal(itl, 0.15)), k);
        if (r.generated >= r.output) {
          const e2e = (now + 1000 * rng.next() - r.arrival) / 1000;
          D.observe('e2e', e2e);
          D.observe('ttft', r.ttft ?? 0);
          D.observe('gen', r.output);
          D.observe('retract', 0);
          D.inc('num_requests_total', 1);
          const path = r.endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions';
          R.counter('smg_http_responses_total', 'Total HTTP responses by path, status_code and error_code', {
            path,
            status_code: '200',
            error_code: '',
          }).inc();
          R.hist('smg_http_request_duration_seconds', 'HTTP request duration by method and path', {
            method: 'POST',
            path,
          }).observe(e2e);
          R.hist('smg_router_request_duration_seconds', 'Router request duration', {
            router_type: 'http',
            backend_type: 'pd',
            connection_mode: 'http',
            model: MODEL,
            endpoint: r.endpoint,
          }).observe(e2e);
          R.hist('smg_pd_ttft_seconds', 'PD time to first token', {
            backend_type: 'pd',
            model: MODEL,
            runtime: 'sglang',
          }).observe(r.ttft ?? 0);
          R.hist('smg_pd_prefill_duration_seconds', 'PD prefill duration', {
            backend_type: 'pd',
            model: MODEL,
            runtime: 'sglang',
          }).observe((r.ttft ?? 0) * 0.8);
          R.hist('smg_pd_kv_transfer_duration_seconds', 'PD KV transfer duration', {
            backend_type: 'pd',
            model: MODEL,
            runtime: 'sglang',
          }).observe(rng.logNormal(0.02, 0.4));
        } else keep.push(r);
      }
      this.decodeActive = keep;
      D.inc('generation_tokens_total', genTokens);
      D.incSched('realtime_tokens_total', genTokens, { mode: 'decode' });
      const steps = Math.round(1 / Math.max(itl, 0.006));
      D.incSched('cuda_graph_passes_total', steps, { mode: 'decode_cuda_graph' });
      D.incSched('forward_execution_seconds_total', steps * itl * 0.86, { category: 'forward' });
      D.incSched('forward_execution_seconds_total', steps * itl * 0.05, { category: 'sample' });
      D.incSched('forward_execution_seconds_total', steps * itl * 0.07, { category: 'schedule' });
      // Decode gauges refresh every --decode-log-interval (40) steps, i.e. about every 40*ITL seconds.
      if (running > 0 && rng.next() < Math.min(1, 1 / (40 * itl))) {
        const dUsed = this.decodeActive.reduce((a, r) => a + r.prompt + r.generated, 0);
        this.evictable.decode = Math.min(
          D.capacity - dUsed,
          Math.max(0, this.evictable.decode + Math.round(rng.normal() * 6000 + 300)),
        );
        D.gauge('num_running_reqs', this.decodeActive.length);
        D.gauge('num_queue_reqs', 0);
        D.gauge('num_used_tokens', dUsed);
        D.gauge('kv_used_tokens', dUsed);
        D.gauge('kv_evictable_tokens', this.evictable.decode);
        D.gauge('kv_available_tokens', D.capacity - dUsed - this.evictable.decode);
        D.gauge('token_usage', Math.round((dUsed / D.capacity) * 100) / 100);
        D.gauge('full_token_usage', dUsed / D.capacity);
        D.gauge('decode_sum_seq_lens', dUsed);
        D.gauge('gen_throughput', genTokens / (0.98 + 0.04 * rng.next()));
        D.gauge('utilization', Math.min(1, this.decodeActive.length / 128));
        D.gauge('new_token_ratio', 0.4 + 0.1 * rng.next());
        D.gauge('cache_hit_rate', 0);
        D.gauge('num_decode_prealloc_queue_reqs', prealloc);
        D.gauge('num_decode_transfer_queue_reqs', this.transferring.length);
        D.gauge('pending_prealloc_token_usage', Math.round(((prealloc * 1800) / D.capacity) * 100) / 100);
        D.setRetracted(0);
        D.setPaused(0);
        out.journal.push(
          this.jl(
            now + 400,
            'decode',
            6,
            `[${new Date(now).toISOString().slice(0, 19).replace('T', ' ')} TP0] Decode batch. #running-req: ${this.decodeActive.length}, #token: ${dUsed}, token usage: ${(dUsed / D.capacity).toFixed(2)}, cuda graph: True, gen throughput (token/s): ${genTokens.toFixed(2)}, #queue-req: 0,`,
          ),
        );
      } else if (running === 0) D.gauge('gen_throughput', 0);
    }
    if (batches)
      out.journal.push(
        this.jl(
          now + 300,
          'prefill',
          6,
          `[${new Date(now).toISOString().slice(0, 19).replace('T', ' ')} TP0] Prefill batch. #new-seq: ${batches}, #new-token: ${used}, #cached-token: ${cachedTokens}, token usage: ${P.capacity ? ((this.transferring.length * 1900) / P.capacity).toFixed(2) : 0}, #running-req: 0, #queue-req: ${this.prefillQueue.length},`,
        ),
      );

    // Router gauges and health checks.
    const conns = this.prefillQueue.length + this.transferring.length + this.decodeActive.length;
    R.gauge('smg_http_connections_active', 'Currently active HTTP connections', {}).set(conns);
    for (const [i, w] of R.workers.entries()) {
      const isDecode = i === 1;
      const healthy = !isDecode || decodeUp ? 1 : 0;
      R.gauge('smg_worker_health', 'Worker health status (1=healthy, 0=unhealthy)', { worker: w }).set(
        healthy,
      );
      R.gauge('smg_worker_cb_state', 'Circuit breaker state per worker', { worker: w }).set(healthy ? 0 : 1);
      R.gauge('smg_worker_requests_active', 'Currently running requests per worker', { worker: w }).set(
        isDecode ? this.decodeActive.length : this.prefillQueue.length + this.transferring.length,
      );
      R.gauge('smg_worker_cb_consecutive_failures', 'Consecutive failures', { worker: w }).set(
        healthy ? 0 : Math.min(99, Math.floor((now - (this.decodeDownUntil - 190_000)) / 10_000)),
      );
      R.gauge('smg_worker_cb_consecutive_successes', 'Consecutive successes', { worker: w }).set(
        healthy ? Math.floor((now - this.startMs) / 10_000) % 1000 : 0,
      );
      const wt = isDecode ? 'decode' : 'prefill';
      R.gauge('smg_worker_pool_size', 'Current worker pool size', {
        worker_type: wt,
        connection_mode: 'http',
        model: MODEL,
      }).set(1);
      R.gauge('smg_worker_connections_active', 'Active worker connections', {
        worker_type: wt,
        connection_mode: 'http',
      }).set(isDecode ? this.decodeActive.length : this.prefillQueue.length);
      if (this.tick % 10 === 0)
        R.counter('smg_worker_health_checks_total', 'Health check results by worker_type and result', {
          worker_type: wt,
          result: healthy ? 'success' : 'failure',
        }).inc();
      R.counter('smg_worker_selection_total', 'Worker selections', {
        worker_type: wt,
        connection_mode: 'http',
        model: MODEL,
        policy: 'cache_aware',
      }).inc(n - rejected);
      R.counter('smg_worker_cb_outcomes_total', 'Circuit breaker outcomes', {
        worker: w,
        outcome: healthy ? 'success' : 'failure',
      }).inc(healthy ? n - rejected : rejected);
      if (this.tick % 5 === 0) {
        const srv = isDecode ? D : P;
        const lbl = { worker: w, model: MODEL, dp_rank: '0' };
        R.gauge('smg_engine_running_requests', 'Engine running requests', lbl).set(
          isDecode ? this.decodeActive.length : batches,
        );
        R.gauge('smg_engine_waiting_requests', 'Engine waiting requests', lbl).set(
          isDecode ? 0 : this.prefillQueue.length,
        );
        R.gauge('smg_engine_token_usage', 'Engine-reported KV token usage ratio', lbl).set(
          isDecode ? Math.round((decodeUsed / srv.capacity) * 100) / 100 : 0.04,
        );
        R.gauge('smg_engine_gen_throughput', 'Engine generation throughput', lbl).set(
          isDecode ? genTokens : 0,
        );
        R.gauge('smg_engine_cache_hit_rate', 'Engine cache hit rate', lbl).set(
          isDecode ? 0 : Math.round((prefillTokens ? cachedTokens / prefillTokens : 0) * 1000) / 1000,
        );
        R.gauge(`smg_engine_pd_${isDecode ? 'decode' : 'prefill'}_queue_reqs`, 'Engine PD queue depth', {
          worker: w,
          role: wt,
          dp_rank: '0',
        }).set(isDecode ? prealloc : this.prefillQueue.length);
      }
    }
    R.gauge('smg_cache_tree_chars', 'Cache-aware tree size in chars', { model: MODEL }).set(
      Math.round(4e6 + 1e6 * Math.sin((now - this.startMs) / 3.6e6)),
    );
    R.gauge('smg_cache_tree_tokens', 'Cache-aware tree size in tokens', { model: MODEL }).set(
      Math.round(1e6 + 2.5e5 * Math.sin((now - this.startMs) / 3.6e6)),
    );
    if (this.tick % 15 === 0) {
      R.counter('smg_http_requests_total', 'Total HTTP requests by method and path', {
        method: 'GET',
        path: '/v1/models',
      }).inc();
      R.counter('smg_http_responses_total', 'Total HTTP responses by path, status_code and error_code', {
        path: '/v1/models',
        status_code: '200',
        error_code: '',
      }).inc();
    }
    if (rng.next() < 0.002)
      out.journal.push(
        this.jl(
          now + 700,
          'router',
          4,
          `WARN smg::routers::http::pd_router: request to http://127.0.0.1:30200 took ${(20 + rng.next() * 40).toFixed(1)}s`,
        ),
      );

    // Scrapes, each target with its own jitter.
    const jitter = (): number => Math.round(rng.next() * 20 - 10);
    out.scrapes.push({ ts: now + 5 + jitter(), target: 'prefill', exp: P.reg.exposition() });
    if (decodeUp) out.scrapes.push({ ts: now + 35 + jitter(), target: 'decode', exp: D.reg.exposition() });
    out.scrapes.push({ ts: now + 65 + jitter(), target: 'router', exp: R.reg.exposition() });

    this.tick++;
    this.t += 1000;
    return out;
  }

  private event(
    ts: number,
    kind: AppEvent['kind'],
    severity: AppEvent['severity'],
    role: 'prefill' | 'decode' | 'router' | undefined,
    title: string,
  ): AppEvent {
    return {
      id: `ev-${++this.eventSeq}`,
      ts,
      kind,
      severity,
      role,
      title,
      deploymentId: 'demo',
      hostId: 'demo',
    };
  }

  private jl(
    ts: number,
    role: 'prefill' | 'decode' | 'router',
    priority: number,
    message: string,
  ): JournalLine {
    return { ts, role, unit: `sglang-${role}.service`, priority, message };
  }

  private unit(role: string, activeState: string, subState: string, pid: number): UnitState {
    return {
      unit: `sglang-${role}.service`,
      loadState: 'loaded',
      activeState,
      subState,
      mainPid: pid,
      nRestarts: role === 'decode' ? this.nRestarts : 0,
      activeEnterTimestamp: activeState === 'active' ? this.t : null,
      result: 'success',
      execStart: `/opt/sglang/venv/bin/python -m sglang.launch_server --model-path /models/Qwen3-32B --port 30${role === 'prefill' ? 1 : 2}00`,
      memoryCurrentBytes: 12_884_901_888,
    };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The exposition text of a scrape, as SGLang prints it.

function fmtValue(v: number): string {
  if (v !== v) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return Number.isInteger(v) && Math.abs(v) < 1e15 ? `${v}.0` : String(v);
}

export function formatExposition(exp: Exposition): string {
  let out = '';
  for (const f of exp.families) {
    if (f.help !== undefined) out += `# HELP ${f.name} ${f.help}\n`;
    out += `# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) {
      const ls = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
        .join(',');
      out += `${s.name}${ls ? `{${ls}}` : ''} ${fmtValue(s.value)}\n`;
    }
  }
  return out;
}
