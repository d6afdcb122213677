// The simulated processes behind the units. Every counter and histogram lives on the process object, so
// a restart (a new process) starts them from zero — exactly what a real restart does to /metrics.
import { BUCKETS, Histogram } from './histogram';
import type { ServerRole } from './units';

export type ServerStage = 'loading' | 'listening' | 'ready';

/**
 * The pid of the scheduler process a server runs on one of its GPUs (one per TP rank, a child of the server's
 * main process): what nvidia-smi lists on that GPU and `ps` shows under the main pid.
 */
export function rankPid(serverPid: number, gpuIndex: number): number {
  return serverPid + 3 + (gpuIndex % 4);
}

export interface KvTransferSample {
  speedGbS: number;
  latencyMs: number;
  bootstrapMs: number;
  allocMs: number;
  totalMb: number;
}

/** Gauges as the scheduler last logged them, per DP rank. */
export interface RankGauges {
  running: number;
  queue: number;
  usedTokens: number;
  evictableTokens: number;
  capacity: number;
  sumSeqLens: number;
}

export class ServerProcess {
  stage: ServerStage = 'loading';
  /** Set once the warmup request after startup finished: /health is 200 from then on. */
  readyAt: number | null = null;
  listeningAt: number | null = null;
  /** A node of a multi-node server whose other node died: its collectives hang for good. */
  peerLost = false;
  /** A node of a multi-node server that has passed torch.distributed's rendezvous with its peer. */
  joined = false;

  // Counters (tokenizer and scheduler side).
  promptTokens = 0;
  generationTokensFloat = 0;
  numRequests = 0;
  abortedRequests = 0;
  cachedTokens = 0;
  bootstrapFailed = 0;
  transferFailed = 0;
  prefillRetries = 0;
  retractedRequests = 0;
  retractedInputTokens = 0;
  retractedOutputTokens = 0;
  realtimePrefillCompute = 0;
  realtimePrefillCache = 0;
  realtimeDecode = 0;
  cudaGraphPasses = 0;
  noneGraphPasses = 0;

  // Gauges.
  genThroughput = 0;
  inputThroughput = 0;
  cacheHitRate = 0;
  evictableTokens = 0;
  bootstrapQueue = 0;
  inflightQueue = 0;
  preallocQueue = 0;
  transferQueue = 0;
  retractedQueue = 0;
  pendingPreallocTokens = 0;
  ranks: RankGauges[];
  lastKvTransfer: KvTransferSample = { speedGbS: 0, latencyMs: 0, bootstrapMs: 0, allocMs: 0, totalMb: 0 };

  // Histograms.
  readonly ttft = new Histogram(BUCKETS.ttft);
  readonly itl = new Histogram(BUCKETS.itl);
  readonly e2e = new Histogram(BUCKETS.e2e);
  readonly queueTime = new Histogram(BUCKETS.queueTimeNewest);
  readonly queueTimeLegacy = new Histogram(BUCKETS.queueTime);
  readonly kvSpeed = new Histogram(BUCKETS.kvTransferSpeedGbS);
  readonly kvLatency = new Histogram(BUCKETS.kvTransferLatencyMs);
  readonly kvBootstrap = new Histogram(BUCKETS.kvTransferBootstrapMs);
  readonly kvAlloc = new Histogram(BUCKETS.kvTransferAllocMs);
  readonly kvTotalMb = new Histogram(BUCKETS.kvTransferTotalMb);

  /** Last time the scheduler wrote "Decode batch"/"Prefill batch" to its log. */
  lastBatchLogAt = 0;
  cpuSeconds = 0;
  /** Memory used on each of the process's GPUs (weights, then KV pool, then CUDA graphs). */
  gpuMemMiB = 420;

  constructor(
    readonly role: ServerRole,
    readonly pid: number,
    readonly startedAt: number,
    /** Total KV capacity in tokens (summed over DP ranks). */
    readonly capacity: number,
    readonly dpRanks: number,
  ) {
    this.ranks = Array.from({ length: dpRanks }, () => ({
      running: 0,
      queue: 0,
      usedTokens: 0,
      evictableTokens: 0,
      capacity: Math.floor(capacity / dpRanks),
      sumSeqLens: 0,
    }));
  }

  get generationTokens(): number {
    return Math.floor(this.generationTokensFloat);
  }

  get usedTokens(): number {
    return this.ranks.reduce((a, r) => a + r.usedTokens, 0);
  }

  get runningReqs(): number {
    return this.ranks.reduce((a, r) => a + r.running, 0);
  }

  get queueReqs(): number {
    return this.ranks.reduce((a, r) => a + r.queue, 0);
  }

  observeKvTransfer(s: KvTransferSample): void {
    this.lastKvTransfer = s;
    this.kvSpeed.observe(s.speedGbS);
    this.kvLatency.observe(s.latencyMs);
    this.kvBootstrap.observe(s.bootstrapMs);
    this.kvAlloc.observe(s.allocMs);
    this.kvTotalMb.observe(s.totalMb);
  }
}

export type WorkerHealthState = 'pending' | 'healthy' | 'unhealthy';

export interface RouterWorker {
  role: ServerRole;
  url: string;
  id: string;
  /** Key of the simulated unit that serves this URL. */
  unit: string;
  health: WorkerHealthState;
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  checksOk: number;
  checksFailed: number;
  cbState: 0 | 1 | 2;
  cbConsecutiveFailures: number;
  active: number;
  processed: number;
  errors: number;
  /** While router-never-readds is on, a worker that went unhealthy stays so. */
  stuck: boolean;
}

export class RouterProcess {
  listening = false;
  readonly workers: RouterWorker[];
  readonly httpRequests = new Map<string, number>();
  readonly httpResponses = new Map<string, number>();
  readonly httpDurations = new Map<string, Histogram>();
  readonly duration = new Histogram(BUCKETS.routerDuration);
  readonly durationLegacy = new Histogram(BUCKETS.routerDurationLegacy);
  routedRequests = 0;
  /** sglang-router 0.2.4's PD router: requests it took in, and those it found no worker pair for. */
  pdRequests = 0;
  pdSelectionErrors = 0;
  connectionsActive = 0;
  cpuSeconds = 0;

  constructor(
    readonly pid: number,
    readonly startedAt: number,
    workers: Array<{ role: ServerRole; url: string; id: string; unit: string }>,
  ) {
    this.workers = workers.map((w) => ({
      ...w,
      health: 'pending',
      consecutiveFailures: 0,
      consecutiveSuccesses: 0,
      checksOk: 0,
      checksFailed: 0,
      cbState: 0,
      cbConsecutiveFailures: 0,
      active: 0,
      processed: 0,
      errors: 0,
      stuck: false,
    }));
  }

  worker(role: ServerRole): RouterWorker {
    const w = this.workers.find((x) => x.role === role);
    if (!w) throw new Error(`router has no ${role} worker`);
    return w;
  }

  countRequest(method: string, path: string): void {
    const k = `${method} ${path}`;
    this.httpRequests.set(k, (this.httpRequests.get(k) ?? 0) + 1);
  }

  /** smg's HTTP middleware times every request by method and path. */
  observeHttp(method: string, path: string, seconds: number): void {
    const k = `${method} ${path}`;
    let h = this.httpDurations.get(k);
    if (!h) this.httpDurations.set(k, (h = new Histogram(BUCKETS.routerDuration)));
    h.observe(seconds);
  }

  countResponse(path: string, status: number, errorCode: string, n = 1): void {
    const k = `${path}\t${status}\t${errorCode}`;
    this.httpResponses.set(k, (this.httpResponses.get(k) ?? 0) + n);
  }

  /** PD readiness as smg computes it: at least one healthy prefill AND one healthy decode worker. */
  get ready(): boolean {
    return (
      this.listening &&
      this.workers.some((w) => w.role === 'prefill' && w.health === 'healthy') &&
      this.workers.some((w) => w.role === 'decode' && w.health === 'healthy')
    );
  }
}
