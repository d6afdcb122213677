// The demo's simulated world: its hosts (each with a journal, a boot, GPUs), the systemd units on them and
// their processes, the PD traffic, the router's health checks and the injectable faults. The single demo
// host is a world of one host with one unit per role (unit keys = roles); the demo fleet is a world of three
// hosts (topology.ts). All time comes from the injected clock; the state is advanced lazily whenever
// something reads it (a command, an HTTP request, a snapshot), by replaying the scheduled events in time
// order and integrating the traffic in steps of at most one simulated second.
import { EventEmitter } from 'node:events';
import type { Clock, ClockTimer } from '../core/clock';
import {
  DEMO_FAULT_NAMES,
  DEMO_FAULT_SCOPES,
  MAX_DEMO_FAULT_MS,
  type DemoFaultName,
  type DemoFaultState,
} from '@shared/demo-faults';
import type { DemoEra, RouterEra } from './eras';
import { Journal, type JournalEntry } from './journal';
import { LoadModel } from './load-model';
import {
  SHARDS,
  SYSTEMD_MESSAGE_IDS,
  TqdmRate,
  consumedPriority,
  routerTarget,
  runtimeCrash,
  rust,
  serverArgsLine,
  sgl,
  shardProgress,
  startupFailureTraceback,
  systemdText,
  tqdmDefaultBar,
  tqdmJournalLines,
  uvicornAccess,
} from './log-lines';
import { PdTraffic, type TrafficContext, type WorkerSlot } from './pd-traffic';
import { RouterProcess, ServerProcess, type RouterWorker } from './processes';
import { Rng, hash32, valueNoise } from './rng';
import {
  MODEL_NAME,
  ROUTER_HEALTH_FAILURE_THRESHOLD,
  ROUTER_HEALTH_INTERVAL_S,
  ROUTER_HEALTH_SUCCESS_THRESHOLD,
  servesHttp,
  type DemoRole,
  type ServerRole,
  type RouterSpec,
  type ServerSpec,
  type UnitDefinition,
} from './units';
import { singleHostTopology, type HostSpec, type Topology } from './topology';

export { DEMO_ERAS, ROUTER_ERAS, isSmgEra, type DemoEra, type RouterEra } from './eras';

export const FAULT_NAMES = DEMO_FAULT_NAMES;
export type FaultName = DemoFaultName;

/** Roles a fault can be scoped to; null = host-wide. Omitting the target in setFault means all of them. */
export const FAULT_SCOPES: Record<FaultName, readonly DemoRole[] | null> = DEMO_FAULT_SCOPES;

/** Pids of the foreign-gpu-process fault's processes: above any pid the units get, below Linux's pid_max. */
const FOREIGN_PID_BASE = 4_190_000;

/** KV pool sizes: the decode pool of the reference deployment, and a prefill pool. */
export const KV_CAPACITY: Record<ServerRole, number> = { prefill: 447_416, decode: 2_580_000 };

export type ActiveState = 'active' | 'activating' | 'deactivating' | 'inactive' | 'failed';
export type SubState = 'running' | 'stop-sigterm' | 'dead' | 'failed' | 'auto-restart';

export interface UnitRuntime {
  readonly def: UnitDefinition;
  activeState: ActiveState;
  subState: SubState;
  result: 'success' | 'exit-code' | 'signal' | 'timeout' | 'core-dump';
  nRestarts: number;
  mainPid: number;
  controlPid: number;
  /** The main process's children while it runs (an SGLang server's; a router has none). */
  children: ServerChildren | null;
  /** CPU seconds of the last process that ended, for the "Consumed" line systemd repeats on an automatic restart. */
  lastCpuS: number;
  execMain: {
    pid: number;
    startAt: number | null;
    exitAt: number | null;
    code: 0 | 1 | 2 | 3;
    status: number;
  };
  ts: {
    inactiveExit: number | null;
    activeEnter: number | null;
    activeExit: number | null;
    inactiveEnter: number | null;
    stateChange: number | null;
  };
  invocationId: string;
  /** Bumped on every start/stop so events scheduled for an older process are ignored. */
  gen: number;
  server: ServerProcess | null;
  router: RouterProcess | null;
  peakMemGiB: number;
  /** Set by `systemctl restart` while the unit is stopping: start again when stopped. */
  restartPending: boolean;
  /**
   * systemd's flush_n_restarts: the unit went down with no automatic restart to follow (a stop, a restart's stop
   * half, a failure it does not retry), so its next start zeroes NRestarts. Kept until then, so a stopped unit
   * still shows how often it restarted.
   */
  flushRestarts: boolean;
}

/**
 * What an SGLang server's main process starts: multiprocessing's resource tracker, a scheduler per GPU of its node
 * in rank order (under a data-parallel controller with DP attention), and on the node that serves HTTP the
 * detokenizer.
 */
export interface ServerChildren {
  tracker: number;
  dpController?: number;
  schedulers: number[];
  detokenizer?: number;
}

export interface GpuReading {
  index: number;
  name: string;
  uuid: string;
  busId: string;
  utilization: number;
  memoryUsedMiB: number;
  memoryTotalMiB: number;
  temperature: number;
  powerDraw: number;
  powerLimit: number;
  pstate: string;
  /** Processes of the servers on it: the scheduler of the rank that runs on this GPU. */
  pids: number[];
  /** Other processes on it (the foreign-gpu-process fault), listed by their own pid. */
  foreign: ForeignGpuProcess[];
}

/** A process that is no unit's, holding GPUs of a worker's unit (the foreign-gpu-process fault). */
export interface ForeignGpuProcess {
  pid: number;
  gpus: number[];
  usedMiB: number;
  args: string;
}

export interface KvTruth {
  used: number;
  evictable: number;
  available: number;
  capacity: number;
  /** used / capacity */
  ratio: number;
}

export interface UnitSnapshot {
  unit: string;
  activeState: ActiveState;
  subState: SubState;
  result: string;
  mainPid: number;
  nRestarts: number;
  execMainStatus: number;
  activeEnterTimestamp: number | null;
  /** Process state behind the unit: is its port open, does /health say 200. */
  listening: boolean;
  healthy: boolean;
}

export interface DemoSnapshot {
  at: number;
  bootId: string;
  bootedAt: number;
  era: DemoEra;
  routerEra: RouterEra;
  dpRanks: number;
  units: Record<DemoRole, UnitSnapshot>;
  /** null while the server process is down. */
  kv: Record<ServerRole, KvTruth | null>;
  queues: {
    prefill: { waiting: number; bootstrap: number; inflight: number; running: number } | null;
    decode: {
      running: number;
      waiting: number;
      prealloc: number;
      transfer: number;
      retracted: number;
    } | null;
  };
  counters: Record<
    ServerRole,
    {
      promptTokens: number;
      generationTokens: number;
      numRequests: number;
      abortedRequests: number;
      transferFailed: number;
      bootstrapFailed: number;
      ttftCount: number;
      e2eCount: number;
    } | null
  >;
  genThroughput: number;
  router: {
    listening: boolean;
    ready: boolean;
    workers: Array<{ role: ServerRole; url: string; health: RouterWorker['health'] }>;
  };
  offeredRate: number;
  faults: Array<{ name: FaultName; roles: DemoRole[] | null }>;
}

/** A decode server's model load in the demo: Qwen3-32B from local disk onto 8×H100. */
export const DEFAULT_MODEL_LOAD_MS = 90_000;
/** The shortest load asked for: its fixed steps (torch.distributed, the KV pool) take about 8 s. */
export const MIN_MODEL_LOAD_MS = 20_000;

export interface DemoSimulationOptions {
  clock: Clock;
  era?: DemoEra;
  routerEra?: RouterEra;
  dpRanks?: number;
  metricsDisabled?: ServerRole[];
  seed?: number;
  /** How much simulated past exists at construction (processes started this long ago). Default 45 min. */
  historyMs?: number;
  /** The hosts and units; default the single demo host (built from dpRanks and metricsDisabled). */
  topology?: Topology;
  /**
   * How long a decode server takes from its start to "fired up and ready to roll" (prefill: two thirds of it),
   * ±8 %. Default 90 s, a 32B model from local disk; a smaller model or warm page cache loads faster.
   */
  modelLoadMs?: number;
}

interface ScheduledEvent {
  at: number;
  seq: number;
  /** The host whose reboot cancels it. */
  host: string;
  fn: () => void;
}

export type NetworkEvent =
  | { type: 'drop-connections' }
  | { type: 'down'; forMs: number }
  /** The path to the host is blackholed (on) or carries traffic again (off); nothing on the host changes. */
  | { type: 'blackhole'; on: boolean };

/** One simulated machine: what `journalctl`, `uptime` and `nvidia-smi` on it read. */
export interface HostRuntime {
  readonly spec: HostSpec;
  /** Position in the topology: salts the GPU identities and readings of hosts after the first. */
  readonly index: number;
  readonly journal: Journal;
  bootId: string;
  bootedAt: number;
  /** Until this time the host is rebooting: SSH refuses and nothing runs. */
  downUntil: number;
  lastJournalUs: number;
  readonly network: EventEmitter;
  readonly units: UnitRuntime[];
}

/** One change of a unit's ActiveState, for tests that check what was down when. */
export interface UnitTransition {
  at: number;
  unit: string;
  host: string;
  role: DemoRole;
  /** The worker the unit serves or is a node of ("decode-2"); null for the router. */
  worker: string | null;
  activeState: ActiveState;
  subState: SubState;
}

const HISTORY_LIMIT = 20_000;

const UVICORN_PORT_BASE = 40_000;

const CAPTURE_BS = [256, 224, 192, 160, 128, 112, 96, 80, 64, 56, 48, 40, 32, 24, 16, 12, 8, 4, 2, 1];

/**
 * The CUDA-graph capture bar of SGLang's decode server (cuda_graph_runner.py: a default tqdm whose description
 * names the batch size and free memory): its redraws are joined by "\r" and reach the journal as one line
 * when the capture ends.
 */
function captureBarLine(startMs: number, endMs: number): string {
  const n = CAPTURE_BS.length;
  const dt = (endMs - startMs) / n / 1000;
  const rate = new TqdmRate();
  const desc = (i: number): string =>
    `Capturing batches (bs=${CAPTURE_BS[i]} avail_mem=${(7.9 - (1.5 * i) / n).toFixed(2)} GB)`;
  const bars = [tqdmDefaultBar('', { done: 0, total: n, elapsedS: 0, rate: null })];
  for (let i = 0; i < n; i++) {
    bars.push(tqdmDefaultBar(desc(i), { done: i, total: n, elapsedS: i * dt, rate: rate.rate }));
    rate.update(1, dt);
    bars.push(tqdmDefaultBar(desc(i), { done: i + 1, total: n, elapsedS: (i + 1) * dt, rate: rate.rate }));
  }
  bars.push(tqdmDefaultBar(desc(n - 1), { done: n, total: n, elapsedS: n * dt, rate: 1 / dt }));
  return tqdmJournalLines(bars, false)[0];
}

export class DemoSimulation {
  readonly clock: Clock;
  readonly era: DemoEra;
  readonly routerEra: RouterEra;
  readonly dpRanks: number;
  private readonly modelLoadMs: number;
  readonly metricsDisabled: ReadonlySet<ServerRole>;
  readonly seed: number;
  readonly topology: Topology;
  /** The journal of the first host (the single demo host's). */
  readonly journal: Journal;
  private readonly unitMap: Record<string, UnitRuntime> = {};
  private readonly hostMap = new Map<string, HostRuntime>();
  /** Server units that serve HTTP, per role, in topology order: the traffic's worker slots. */
  private readonly slotUnits: Record<ServerRole, UnitRuntime[]> = { prefill: [], decode: [] };
  private readonly routerUnit: UnitRuntime | null;
  /** Maps simulated HTTP ports to real loopback ports when the host listens them (listenHttp). */
  httpPorts: Record<number, number> = {};
  /** Every ActiveState change of every unit, oldest first (bounded). */
  readonly unitHistory: UnitTransition[] = [];

  private advancing = false;
  private stepMs = 1000;

  private t: number;
  private readonly rng: Rng;
  private readonly load: LoadModel;
  private readonly traffic: PdTraffic;
  private events: ScheduledEvent[] = [];
  private eventSeq = 0;
  private nextPid: number;
  /** Unit keys (unit-scoped faults) or host ids (host-wide faults) each fault is on for. */
  private readonly faults = new Map<FaultName, Set<string>>();
  /** Faults turned on for a while: when each (fault, unit key or host id) turns off, and the timer that does it. */
  private readonly faultEnds = new Map<string, { at: number; timer: ClockTimer }>();
  private clientPort = UVICORN_PORT_BASE;
  private accessLogTurn = 0;
  private malformedTick = 0;
  /** Counts /metrics requests so metrics-garbage alternates between its two shapes. */
  garbageCounter = 0;

  constructor(opts: DemoSimulationOptions) {
    this.clock = opts.clock;
    this.era = opts.era ?? 'E4';
    this.routerEra = opts.routerEra ?? 'smg-1.5';
    this.dpRanks = Math.max(1, Math.floor(opts.dpRanks ?? 1));
    this.modelLoadMs = Math.max(MIN_MODEL_LOAD_MS, opts.modelLoadMs ?? DEFAULT_MODEL_LOAD_MS);
    this.metricsDisabled = new Set(opts.metricsDisabled ?? []);
    this.seed = (opts.seed ?? 20261129) >>> 0;
    this.topology =
      opts.topology ??
      singleHostTopology({
        dpRanks: this.dpRanks,
        metricsDisabled: this.metricsDisabled,
        engineMetrics: this.routerEra === 'smg-engine-metrics',
      });
    this.rng = new Rng(this.seed);
    this.load = new LoadModel(this.seed);
    this.traffic = new PdTraffic(this.rng.fork(1), this.load, this.topology.rateScale);
    this.nextPid = 40_000 + this.rng.int(0, 8000);
    const now = this.clock.now();
    const history = opts.historyMs ?? 45 * 60_000;
    this.t = now - history;
    this.topology.hosts.forEach((spec, index) => {
      const bootedAt = this.t - (6 * 86_400_000 + this.rng.int(0, 86_400_000));
      this.hostMap.set(spec.id, {
        spec,
        index,
        journal: new Journal(),
        bootedAt,
        bootId: this.rng.hex(16),
        downUntil: 0,
        lastJournalUs: 0,
        network: new EventEmitter(),
        units: [],
      });
    });
    this.journal = this.firstHost.journal;
    const mk = (def: UnitDefinition): UnitRuntime => ({
      def,
      activeState: 'inactive',
      subState: 'dead',
      result: 'success',
      nRestarts: 0,
      mainPid: 0,
      controlPid: 0,
      children: null,
      lastCpuS: 0,
      execMain: { pid: 0, startAt: null, exitAt: null, code: 0, status: 0 },
      ts: { inactiveExit: null, activeEnter: null, activeExit: null, inactiveEnter: null, stateChange: null },
      invocationId: this.rng.hex(16),
      gen: 0,
      server: null,
      router: null,
      peakMemGiB: 0,
      restartPending: false,
      flushRestarts: false,
    });
    for (const def of this.topology.units) {
      const host = this.hostMap.get(def.host);
      if (!host) throw new Error(`demo topology: unit ${def.name} is on unknown host "${def.host}"`);
      const u = mk(def);
      this.unitMap[def.key] = u;
      host.units.push(u);
      if (def.server && servesHttp(def.server)) this.slotUnits[def.server.role].push(u);
    }
    const routerDef = this.topology.units.find((d) => d.router);
    this.routerUnit = routerDef ? this.unitOf(routerDef.key) : null;
    const start = this.t;
    for (const host of this.hostMap.values()) this.bootStart(host, start);
    this.advance();
  }

  private get firstHost(): HostRuntime {
    return this.hostMap.values().next().value as HostRuntime;
  }

  /** The single demo host's methods (role-keyed) read the one host of a one-host world. */
  private get single(): HostRuntime {
    if (this.hostMap.size !== 1)
      throw new Error('this method describes the single demo host; a fleet is read per host or per unit');
    return this.firstHost;
  }

  /** Ids of the simulated hosts, in topology order. */
  get hostIds(): string[] {
    return [...this.hostMap.keys()];
  }

  host(id: string): HostRuntime {
    const h = this.hostMap.get(id);
    if (!h) throw new RangeError(`demo: no simulated host "${id}"; hosts: ${this.hostIds.join(', ')}`);
    return h;
  }

  /** A unit by key ("prefill" on the single host, "gpu-b/sglang-decode-0.service" in the fleet). */
  unitOf(key: string): UnitRuntime {
    const u = this.unitMap[key];
    if (!u) throw new RangeError(`demo: no unit "${key}"; units: ${Object.keys(this.unitMap).join(', ')}`);
    return u;
  }

  /** Every unit of the world, in topology order, as of the clock's current time. */
  allUnits(): UnitRuntime[] {
    this.advance();
    return Object.values(this.unitMap);
  }

  // ---------------------------------------------------------------- time

  /** Simulated time the state has been advanced to. */
  get now(): number {
    return this.t;
  }

  /** Brings the simulation up to the clock's current time. Every reader calls this first. */
  advance(): void {
    const target = this.clock.now();
    if (target <= this.t || this.advancing) return;
    this.advancing = true;
    // Across long gaps (nobody read the host for hours), coarser steps keep the catch-up bounded.
    const gap = target - this.t;
    this.stepMs = gap > 6 * 3_600_000 ? gap / 6000 : 1000;
    try {
      for (;;) {
        const ev = this.events[0];
        if (!ev || ev.at > target) break;
        this.events.shift();
        this.integrate(Math.max(this.t, ev.at));
        ev.fn();
      }
      this.integrate(target);
    } finally {
      this.advancing = false;
    }
  }

  /** The units by key (on the single host: by role), their runtime state and processes, as of now. */
  get units(): Readonly<Record<DemoRole, UnitRuntime>> & Readonly<Record<string, UnitRuntime>> {
    this.advance();
    return this.unitMap as Record<DemoRole, UnitRuntime>;
  }

  get bootId(): string {
    this.advance();
    return this.single.bootId;
  }

  get bootedAt(): number {
    this.advance();
    return this.single.bootedAt;
  }

  /** Until this time the single host is rebooting. */
  get downUntil(): number {
    return this.single.downUntil;
  }

  private scheduleFor(u: UnitRuntime, at: number, fn: () => void): void {
    this.schedule(at, fn, u.def.host);
  }

  private schedule(at: number, fn: () => void, host: string): void {
    const ev = { at: Math.max(at, this.t), seq: this.eventSeq++, host, fn };
    let i = this.events.length;
    while (
      i > 0 &&
      (this.events[i - 1].at > ev.at || (this.events[i - 1].at === ev.at && this.events[i - 1].seq > ev.seq))
    )
      i--;
    this.events.splice(i, 0, ev);
  }

  private integrate(to: number): void {
    while (this.t < to) {
      const dt = Math.min(this.stepMs, to - this.t);
      this.stepWorld(this.t, dt);
      this.t += dt;
    }
  }

  private trafficContext(): TrafficContext {
    const router = this.routerUnit?.router ?? null;
    const weights = this.topology.weights ?? {};
    const slot = (u: UnitRuntime): WorkerSlot => ({
      proc: u.server,
      worker: router?.workers.find((w) => w.unit === u.def.key) ?? null,
      weight: weights[u.def.key] ?? 1,
      kvFull: this.isFaultOn('kv-full', u.def.key),
    });
    return { prefill: this.slotUnits.prefill.map(slot), decode: this.slotUnits.decode.map(slot), router };
  }

  private slotOf(u: UnitRuntime): number {
    return u.def.server ? this.slotUnits[u.def.server.role].indexOf(u) : -1;
  }

  private stepWorld(t0: number, dt: number): void {
    const live = [...this.hostMap.values()].filter((h) => t0 >= h.downUntil);
    if (!live.length) return;
    const ctx = this.trafficContext();
    const stats = this.traffic.step(t0, dt, ctx);
    const t1 = t0 + dt;
    for (const h of live)
      for (const u of h.units) {
        const p = u.server;
        if (p) p.cpuSeconds += (dt / 1000) * (p.stage === 'ready' ? 5.3 : 2.1);
      }
    if (ctx.router) ctx.router.cpuSeconds += (dt / 1000) * 0.4;
    const routerKey = this.routerUnit?.def.key ?? 'router';
    // Sampled access-log lines for the router → server /generate calls (real servers log every one).
    for (let i = 0; i < stats.arrived; i++) {
      if (this.rng.next() > 0.125) continue;
      const turn = this.accessLogTurn++;
      for (const role of ['prefill', 'decode'] as const) {
        const units = this.slotUnits[role];
        if (!units.length) continue;
        const key = units[turn % units.length].def.key;
        this.log(key, uvicornAccess(this.nextClientPort(), 'POST', '/generate', 200), t1);
      }
      if (ctx.router && this.rng.next() < 0.3) {
        this.log(
          routerKey,
          rust(
            t1 * 1000,
            'INFO',
            routerTarget(this.routerEra, 'middleware'),
            `finished processing request method=POST uri=/v1/chat/completions status=200 latency=${this.rng.range(3, 40).toFixed(3)}s`,
          ),
          t1,
        );
      }
    }
    if (stats.rejected > 0 && ctx.router && this.rng.next() < 0.2) {
      this.log(
        routerKey,
        rust(
          t1 * 1000,
          'WARN',
          routerTarget(this.routerEra, 'routers::http::pd_router'),
          'No healthy prefill or decode workers available',
        ),
        t1,
      );
    }
    this.batchLogs(t1);
  }

  /** "Prefill batch." / "Decode batch." lines at the scheduler's logging cadence. */
  private batchLogs(t: number): void {
    for (const u of this.slotUnits.prefill) this.prefillBatchLog(u, t);
    for (const u of this.slotUnits.decode) this.decodeBatchLog(u, t);
  }

  private prefillBatchLog(u: UnitRuntime, t: number): void {
    const p = u.server;
    if (
      p?.stage === 'ready' &&
      t - p.lastBatchLogAt >= 3500 &&
      (p.inflightQueue > 0 || p.ranks[0].running > 0)
    ) {
      p.lastBatchLogAt = t;
      const r = p.ranks[0];
      const newSeq = Math.max(1, r.running + Math.round(p.inputThroughput / 20_000));
      const newTok = Math.min(8192 * newSeq, Math.round(p.inputThroughput));
      this.log(
        u.def.key,
        sgl(
          t,
          `Prefill batch. #new-seq: ${newSeq}, #new-token: ${newTok}, #cached-token: ${Math.round((newTok * p.cacheHitRate) / Math.max(0.05, 1 - p.cacheHitRate))}, ` +
            `token usage: ${(r.usedTokens / r.capacity).toFixed(2)}, #unbootstrapped-req: ${p.bootstrapQueue}, ` +
            `#queue-req: ${r.queue}, #transferring-req: ${p.inflightQueue}, input throughput (token/s): ${p.inputThroughput.toFixed(2)} `,
          { tp: 0 },
        ),
        t,
      );
    }
  }

  private decodeBatchLog(u: UnitRuntime, t: number): void {
    const d = u.server;
    if (d?.stage === 'ready' && t - d.lastBatchLogAt >= 5000 && d.runningReqs > 0) {
      d.lastBatchLogAt = t;
      d.ranks.forEach((r, i) => {
        const rank = d.dpRanks > 1 ? { tp: i, dp: i } : { tp: 0 };
        this.log(
          u.def.key,
          sgl(
            t,
            `Decode batch. #running-req: ${r.running}, #token: ${r.usedTokens}, token usage: ${(r.usedTokens / r.capacity).toFixed(2)}, ` +
              `pre-allocated usage: ${(d.pendingPreallocTokens / d.capacity).toFixed(2)}, #retracted-req: ${d.retractedQueue}, ` +
              `cuda graph: True, gen throughput (token/s): ${(d.genThroughput / d.dpRanks).toFixed(2)}, #queue-req: ${r.queue}`,
            rank,
          ),
          t,
        );
      });
    }
  }

  // ---------------------------------------------------------------- journal

  /** Appends a line the unit's process wrote to its host's journal (key: the unit key; a role on the single host). */
  log(
    key: string,
    message: string,
    at = this.t,
    opts: { priority?: number; bytes?: Buffer } = {},
  ): JournalEntry {
    return this.appendJournal(key, message, at, false, opts.priority ?? 6, opts.bytes);
  }

  /** A line PID 1 writes about the unit, with the MESSAGE_ID journald gives that kind of line. */
  private systemdLog(
    key: string,
    kind: keyof typeof SYSTEMD_MESSAGE_IDS,
    message: string,
    priority = 6,
    at = this.t,
  ): void {
    this.appendJournal(key, message, at, true, priority, undefined, SYSTEMD_MESSAGE_IDS[kind]);
  }

  /** systemd's "Consumed … CPU time." line, when the process used enough CPU for systemd to mention it. */
  private consumedLog(u: UnitRuntime): void {
    const priority = consumedPriority(u.lastCpuS);
    if (priority !== null)
      this.systemdLog(u.def.key, 'consumed', systemdText.consumed(u.def.name, u.lastCpuS), priority);
  }

  private appendJournal(
    key: string,
    message: string,
    at: number,
    fromSystemd: boolean,
    priority: number,
    bytes?: Buffer,
    messageId?: string,
  ): JournalEntry {
    const u = this.unitOf(key);
    const h = this.host(u.def.host);
    const us = Math.max(Math.round(at * 1000), h.lastJournalUs + 1);
    h.lastJournalUs = us;
    return h.journal.append({
      realtimeUs: us,
      monotonicUs: Math.max(0, us - h.bootedAt * 1000),
      bootId: h.bootId,
      unit: u.def.name,
      fromSystemd,
      pid: fromSystemd ? 1 : u.mainPid || u.execMain.pid,
      identifier: fromSystemd ? 'systemd' : 'python',
      priority,
      message,
      messageBytes: bytes,
      invocationId: u.invocationId,
      messageId,
      argv: fromSystemd ? undefined : u.def.argv,
    });
  }

  private nextClientPort(): number {
    this.clientPort = this.clientPort >= 60_999 ? UVICORN_PORT_BASE : this.clientPort + this.rng.int(1, 37);
    return this.clientPort;
  }

  /** Logs an HTTP request the way the serving process would (uvicorn access log for the servers). */
  logHttpRequest(key: string, method: string, path: string, status: number): void {
    if (this.unitOf(key).def.role === 'router') return;
    this.log(key, uvicornAccess(this.nextClientPort(), method, path, status));
  }

  // ---------------------------------------------------------------- faults

  /**
   * Turns a fault on or off. `target` narrows it: for a host-wide fault a host id (or a role, worker or unit,
   * naming the hosts it runs on), for the others a role (every unit of it), a worker name ("decode-1": every unit
   * of it), a host id (every unit on it) or a unit key. Omitted: everywhere it applies. `forMs` turns it off again after that long on this
   * simulation's clock (a link dropped for 30 s); without it the fault stays until turned off.
   */
  setFault(name: FaultName, on: boolean, target?: string, forMs?: number): void {
    if (!FAULT_NAMES.includes(name))
      throw new RangeError(`unknown demo fault "${name}"; known: ${FAULT_NAMES.join(', ')}`);
    if (forMs !== undefined && (!on || !(forMs > 0) || forMs > MAX_DEMO_FAULT_MS))
      throw new RangeError(
        `demo fault "${name}": a duration is for turning a fault on, between 1 ms and ${MAX_DEMO_FAULT_MS / 60_000} min; got ${forMs} ms${on ? '' : ' with off'}`,
      );
    this.advance();
    const keys = this.faultTargets(name, target);
    const cur = this.faults.get(name);
    // Whatever was said about these targets' end before, this call says it again.
    const ending = on ? keys : target ? keys : [...(cur ?? [])];
    for (const k of ending) this.cancelFaultEnd(name, k);
    if (on) {
      const set = cur ?? new Set<string>();
      for (const k of keys) set.add(k);
      this.faults.set(name, set);
    } else if (!target) this.faults.delete(name);
    else if (cur) {
      for (const k of keys) cur.delete(k);
      if (!cur.size) this.faults.delete(name);
    }
    if (forMs !== undefined)
      for (const k of keys)
        this.faultEnds.set(`${name}|${k}`, {
          at: this.clock.now() + forMs,
          timer: this.clock.setTimeout(() => {
            this.faultEnds.delete(`${name}|${k}`);
            this.setFault(name, false, k);
          }, forMs),
        });
    this.onFaultChanged(name, on, FAULT_SCOPES[name] ? keys : []);
    if (name === 'link-down')
      for (const h of keys)
        this.host(h).network.emit('event', { type: 'blackhole', on } satisfies NetworkEvent);
  }

  private cancelFaultEnd(name: FaultName, key: string): void {
    const end = this.faultEnds.get(`${name}|${key}`);
    if (!end) return;
    this.clock.clearTimeout(end.timer);
    this.faultEnds.delete(`${name}|${key}`);
  }

  /** Cancels the timers of faults turned on for a while (the demo stops; its faults end with it). */
  stopFaultTimers(): void {
    for (const end of this.faultEnds.values()) this.clock.clearTimeout(end.timer);
    this.faultEnds.clear();
  }

  /** What a fault target names: host ids for host-wide faults, unit keys for the others. */
  private faultTargets(name: FaultName, target?: string): string[] {
    const scope = FAULT_SCOPES[name];
    if (!scope) {
      if (!target) return this.hostIds;
      if (this.hostMap.has(target)) return [target];
      // A role, worker or unit names the host(s) it runs on.
      const hosts = new Set(
        Object.values(this.unitMap)
          .filter((u) => u.def.key === target || u.def.role === target || u.def.server?.worker === target)
          .map((u) => u.def.host),
      );
      if (!hosts.size)
        throw new RangeError(
          `demo fault "${name}" is host-wide: name a host (${this.hostIds.join(', ')}), not "${target}"`,
        );
      return [...hosts];
    }
    const inScope = (u: UnitRuntime): boolean => scope.includes(u.def.role);
    const units = Object.values(this.unitMap);
    if (!target) return units.filter(inScope).map((u) => u.def.key);
    // A host names every unit on it.
    const named = units.filter(
      (u) =>
        u.def.key === target ||
        u.def.role === target ||
        u.def.server?.worker === target ||
        u.def.host === target,
    );
    if (!named.length)
      throw new RangeError(
        `demo fault "${name}": no host, role, worker or unit "${target}"; it applies to ${scope.join(', ')}`,
      );
    const ok = named.filter(inScope);
    if (!ok.length)
      throw new RangeError(
        `demo fault "${name}" does not apply to ${target}; it applies to ${scope.join(', ')}`,
      );
    return ok.map((u) => u.def.key);
  }

  clearFaults(): void {
    for (const name of [...this.faults.keys()]) this.setFault(name, false);
  }

  /** Is the fault on for this unit key (a role on the single host) or host id; without one: anywhere? */
  isFaultOn(name: FaultName, target?: string): boolean {
    const f = this.faults.get(name);
    if (!f) return false;
    return target ? f.has(target) : f.size > 0;
  }

  /** Faults that are on; `roles` are the unit keys (roles on the single host), null for host-wide ones. */
  activeFaults(): Array<{ name: FaultName; roles: DemoRole[] | null }> {
    return [...this.faults.entries()].map(([name, f]) => ({
      name,
      roles: FAULT_SCOPES[name] ? ([...f] as DemoRole[]) : null,
    }));
  }

  /**
   * The faults that are on, by what an operator names: the host of a host-wide fault, the worker of a unit (its
   * role on the single host, "router" for the router), with when each ends if it was turned on for a while.
   */
  faultStates(): DemoFaultState[] {
    const out: DemoFaultState[] = [];
    for (const [fault, keys] of this.faults) {
      const byTarget = new Map<string, number | null>();
      for (const k of keys) {
        const target = FAULT_SCOPES[fault] ? this.operatorName(this.unitOf(k)) : k;
        const until = this.faultEnds.get(`${fault}|${k}`)?.at ?? null;
        const prev = byTarget.get(target);
        // A worker on two hosts is on until the later of its units' ends; one without an end, for good.
        byTarget.set(
          target,
          prev === undefined ? until : prev === null || until === null ? null : Math.max(prev, until),
        );
      }
      for (const [target, until] of byTarget) out.push({ fault, target, until });
    }
    return out;
  }

  /** What the operator calls a unit: its worker ("decode-1"; the single host's are named by role), or "router". */
  private operatorName(u: UnitRuntime): string {
    return u.def.server?.worker ?? u.def.role;
  }

  private onFaultChanged(name: FaultName, on: boolean, keys: string[]): void {
    if (name === 'crash-loop' && on) {
      for (const key of keys) {
        const u = this.unitOf(key);
        if (u.activeState === 'active') this.scheduleCrash(u, this.t + this.rng.range(5_000, 15_000));
      }
    }
    if (name === 'router-never-readds' && !on) {
      const r = this.routerUnit?.router;
      if (r) for (const w of r.workers) if (keys.includes(w.unit)) w.stuck = false;
    }
    if (name === 'malformed-journal' && on) this.appendMalformedJournal();
  }

  /** Invalid UTF-8 and a 1 MB line in every server unit's journal. */
  private appendMalformedJournal(): void {
    this.malformedTick++;
    for (const u of Object.values(this.unitMap)) {
      if (!u.def.server || !this.isFaultOn('malformed-journal', u.def.host)) continue;
      const key = u.def.key;
      const bad = Buffer.concat([
        Buffer.from(sgl(this.t, 'Detokenizer output: '), 'utf8'),
        Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0xff, 0xfe]),
        Buffer.from(' <- invalid UTF-8', 'utf8'),
      ]);
      this.log(key, bad.toString('utf8'), this.t, { bytes: bad });
      const huge = sgl(this.t, `Request dump: ${'x'.repeat(1024 * 1024)}`);
      this.log(key, huge);
    }
  }

  // ---------------------------------------------------------------- units

  private allocPid(): number {
    this.nextPid += this.rng.int(3, 900);
    if (this.nextPid > 4_000_000) this.nextPid = 2000 + this.rng.int(0, 1000);
    return this.nextPid;
  }

  /** A child's pid: the next few after its parent's, as a process tree started at once gets them. */
  private allocChildPid(): number {
    this.nextPid += this.rng.int(1, 4);
    return this.nextPid;
  }

  private setState(u: UnitRuntime, active: ActiveState, sub: SubState): void {
    const prev = u.activeState;
    u.activeState = active;
    u.subState = sub;
    u.ts.stateChange = this.t;
    if (active === 'active' && prev !== 'active') u.ts.activeEnter = this.t;
    if (prev === 'active' && active !== 'active') u.ts.activeExit = this.t;
    if ((active === 'inactive' || active === 'failed') && prev !== 'inactive' && prev !== 'failed')
      u.ts.inactiveEnter = this.t;
    if ((prev === 'inactive' || prev === 'failed') && active !== 'inactive' && active !== 'failed')
      u.ts.inactiveExit = this.t;
    this.unitHistory.push({
      at: this.t,
      unit: u.def.name,
      host: u.def.host,
      role: u.def.role,
      worker: u.def.server?.worker ?? null,
      activeState: active,
      subState: sub,
    });
    if (this.unitHistory.length > HISTORY_LIMIT * 1.1)
      this.unitHistory.splice(0, this.unitHistory.length - HISTORY_LIMIT);
  }

  /** The units on the same host that this one Wants= (the router wants its host's servers). */
  private wanted(u: UnitRuntime): UnitRuntime[] {
    return this.host(u.def.host).units.filter((d) => u.def.wants.includes(d.def.name));
  }

  /** What `systemctl start` does (key: a role on the single host). Returns false when there was nothing to do. */
  startUnit(key: string): boolean {
    this.advance();
    const u = this.unitOf(key);
    if (u.activeState === 'active' || (u.activeState === 'activating' && u.subState !== 'auto-restart'))
      return false;
    if (u.activeState === 'deactivating') {
      u.restartPending = true;
      return true;
    }
    for (const d of this.wanted(u))
      if (d.activeState === 'inactive' || d.activeState === 'failed') this.spawn(d, 'manual');
    this.spawn(u, 'manual');
    return true;
  }

  /** What `systemctl stop` does. */
  stopUnit(key: string): void {
    this.advance();
    const u = this.unitOf(key);
    u.restartPending = false;
    this.beginStop(u);
  }

  /**
   * What `systemctl restart` does: stop if running, then start. A manual restart does not count in NRestarts, and
   * its stop half ends the count (the start zeroes it); one issued while an automatic restart waits keeps it.
   */
  restartUnit(key: string): void {
    this.advance();
    const u = this.unitOf(key);
    if (u.activeState === 'inactive' || u.activeState === 'failed' || u.subState === 'auto-restart') {
      u.gen++;
      this.spawn(u, 'manual');
      return;
    }
    u.restartPending = true;
    this.beginStop(u);
  }

  private beginStop(u: UnitRuntime): void {
    if (u.activeState === 'inactive' || u.activeState === 'failed') return;
    if (u.subState === 'auto-restart') {
      // systemd 252 leaves a unit stopped while it waited for its automatic restart failed, Result kept.
      u.gen++;
      this.setState(u, 'failed', 'failed');
      this.systemdLog(u.def.key, 'stopped', systemdText.stopped(u.def.name, u.def.description));
      this.consumedLog(u);
      if (u.restartPending) {
        u.restartPending = false;
        this.spawn(u, 'manual');
      }
      return;
    }
    if (u.activeState === 'deactivating') return;
    const gen = ++u.gen;
    const role = u.def.role;
    const key = u.def.key;
    this.setState(u, 'deactivating', 'stop-sigterm');
    this.systemdLog(key, 'stopping', systemdText.stopping(u.def.name, u.def.description));
    const wasListening = this.closeProcessPorts(u);
    if (u.server && wasListening) {
      for (const line of [
        'INFO:     Shutting down',
        'INFO:     Waiting for application shutdown.',
        'INFO:     Application shutdown complete.',
        `INFO:     Finished server process [${u.mainPid}]`,
      ])
        this.log(key, line);
    }
    if (u.router)
      this.log(
        key,
        rust(
          this.t * 1000,
          'INFO',
          routerTarget(this.routerEra, 'server'),
          'Received SIGTERM, starting graceful shutdown',
        ),
      );
    const stopMs = role === 'router' ? this.rng.range(200, 600) : this.rng.range(3000, 6000);
    this.scheduleFor(u, this.t + stopMs, () => {
      if (u.gen !== gen) return;
      this.processExited(u, { code: 1, status: 0 });
      this.setState(u, 'inactive', 'dead');
      u.flushRestarts = true;
      this.systemdLog(key, 'deactivated', systemdText.deactivated(u.def.name));
      this.systemdLog(key, 'stopped', systemdText.stopped(u.def.name, u.def.description));
      this.consumedLog(u);
      u.server = null;
      u.router = null;
      if (u.restartPending) {
        u.restartPending = false;
        this.spawn(u, 'manual');
      }
    });
  }

  private cpuOf(u: UnitRuntime): number {
    return Math.round(((u.server?.cpuSeconds ?? 0) + (u.router?.cpuSeconds ?? 0)) * 1000) / 1000;
  }

  /** Stops the process answering on its ports and drops the requests it held. Returns whether it listened. */
  private closeProcessPorts(u: UnitRuntime): boolean {
    let was = false;
    if (u.server) {
      was = u.server.stage !== 'loading';
      u.server.stage = 'loading';
      const slot = this.slotOf(u);
      if (slot >= 0) this.traffic.dropFor(u.server.role, slot, this.trafficContext());
      this.peerGone(u);
    }
    if (u.router) {
      was = u.router.listening;
      u.router.listening = false;
    }
    return was;
  }

  /** The other node of a multi-node server, if this unit is one. */
  private peerOf(u: UnitRuntime): UnitRuntime | null {
    const peer = u.def.server?.node?.peer;
    return peer ? this.unitOf(peer) : null;
  }

  /**
   * A node of a multi-node server lost its process: the other node's collectives never complete (NCCL
   * hangs until its watchdog), so that server stops answering /health and serves nothing until both
   * nodes are restarted.
   */
  private peerGone(u: UnitRuntime): void {
    const peer = this.peerOf(u);
    const p = peer?.server;
    // A node still waiting in the rendezvous just keeps waiting for a new peer.
    if (!peer || !p || p.peerLost || !p.joined) return;
    p.peerLost = true;
    this.log(
      peer.def.key,
      sgl(
        this.t,
        `[Rank ${u.def.server?.node?.rank === 0 ? 2 : 0}] NCCL watchdog: collective operation timeout: WorkNCCL(SeqNum=${Math.floor(this.t / 1000) % 100_000}, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.`,
      ),
      this.t,
      { priority: 3 },
    );
    if (p.stage === 'ready') p.stage = 'listening';
    const slot = this.slotOf(peer);
    if (slot >= 0) this.traffic.dropFor(p.role, slot, this.trafficContext());
  }

  /** Has the other node of this multi-node server joined the rendezvous (a live process, not hung)? */
  private peerJoined(u: UnitRuntime): boolean {
    const p = this.peerOf(u)?.server;
    return !!p && !p.peerLost;
  }

  private processExited(u: UnitRuntime, how: { code: 1 | 2 | 3; status: number }): void {
    u.lastCpuS = this.cpuOf(u);
    u.execMain.exitAt = this.t;
    u.execMain.code = how.code;
    u.execMain.status = how.status;
    u.mainPid = 0;
    u.controlPid = 0;
    u.children = null;
  }

  /** PID 1's lines when the main process ended by itself: how, and the unit's Result. */
  private logProcessEnd(u: UnitRuntime): void {
    const key = u.def.key;
    const { code, status } = u.execMain;
    if (code === 1) {
      this.systemdLog(key, 'exited', systemdText.exited(u.def.name, status), 5);
      this.systemdLog(key, 'failedResult', systemdText.failedResult(u.def.name, 'exit-code'), 4);
    } else {
      const sig = status === 9 ? 'KILL' : status === 6 ? 'ABRT' : 'TERM';
      this.systemdLog(key, 'exited', systemdText.killed(u.def.name, status, sig), 4);
      this.systemdLog(key, 'failedResult', systemdText.failedResult(u.def.name, 'signal'), 4);
    }
    this.consumedLog(u);
  }

  /**
   * systemd starts the unit's process. Type=simple: the unit is active/running at once, however long the model
   * takes to load. An automatic restart first finishes the restart job's stop half ("Stopped …", and the CPU
   * the dead process used once more), as systemd 252 logs it.
   */
  private spawn(u: UnitRuntime, kind: 'manual' | 'auto' | 'boot'): void {
    const key = u.def.key;
    const gen = ++u.gen;
    if (u.flushRestarts) {
      u.nRestarts = 0;
      u.flushRestarts = false;
    }
    if (kind === 'auto') {
      u.nRestarts++;
      this.systemdLog(key, 'scheduledRestart', systemdText.scheduledRestart(u.def.name, u.nRestarts));
      this.systemdLog(key, 'stopped', systemdText.stopped(u.def.name, u.def.description));
      this.consumedLog(u);
    }
    u.result = 'success';
    u.invocationId = this.rng.hex(16);
    const pid = this.allocPid();
    u.mainPid = pid;
    u.execMain = { pid, startAt: this.t, exitAt: null, code: 0, status: 0 };
    u.peakMemGiB = 0;
    this.setState(u, 'active', 'running');
    this.systemdLog(key, 'started', systemdText.started(u.def.name, u.def.description));
    const spec = u.def.server;
    if (u.def.router || !spec) {
      u.children = null;
      u.router = new RouterProcess(
        pid,
        this.t,
        (u.def.router?.workers ?? []).map((w, i) => ({
          role: w.role,
          url: w.url,
          unit: w.unit,
          id: this.uuid(gen, i + 1),
        })),
      );
      u.server = null;
      this.scheduleRouterStart(u, gen);
      return;
    }
    // The pids of a fresh process tree follow the main one.
    const tracker = this.allocChildPid();
    const dpController = spec.dpRanks > 1 ? this.allocChildPid() : undefined;
    const schedulers = u.def.gpus.map(() => this.allocChildPid());
    const detokenizer = servesHttp(spec) ? this.allocChildPid() : undefined;
    u.children = { tracker, dpController, schedulers, detokenizer };
    const server = new ServerProcess(spec.role, pid, this.t, spec.capacity, spec.dpRanks);
    u.server = server;
    u.router = null;
    this.scheduleLoad(u, gen, server);
  }

  private uuid(gen: number, salt: number): string {
    const h = (n: number): string =>
      hash32(this.seed ^ (gen * 7919) ^ (salt * 104729) ^ n)
        .toString(16)
        .padStart(8, '0');
    const a = h(1) + h(2) + h(3) + h(4);
    return `${a.slice(0, 8)}-${a.slice(8, 12)}-4${a.slice(13, 16)}-a${a.slice(17, 20)}-${a.slice(20, 32)}`;
  }

  /** The model-loading sequence of an SGLang server, ending in "fired up and ready to roll". */
  private scheduleLoad(u: UnitRuntime, gen: number, p: ServerProcess): void {
    const role = p.role;
    const key = u.def.key;
    const spec = u.def.server as ServerSpec;
    let start = this.t;
    const total = this.modelLoadMs * (role === 'decode' ? 1 : 2 / 3) * this.rng.range(0.92, 1.08);
    const failsToStart = this.isFaultOn('unit-fails-to-start', key);
    const hangs = this.isFaultOn('start-timeout', key);
    const metrics = spec.metrics;
    const port = spec.port;
    const http = servesHttp(spec);
    const perNode = spec.tp / (spec.node?.nnodes ?? 1);
    const tps = Array.from({ length: perNode }, (_, i) => (spec.node?.rank ?? 0) * perNode + i);
    const at = (ms: number, fn: () => void): void =>
      this.scheduleFor(u, start + ms, () => {
        if (u.gen === gen) fn();
      });
    const say = (ms: number, msg: string, rank?: { tp: number; dp?: number }): void =>
      at(ms, () => this.log(key, sgl(this.t, msg, rank)));
    const hostGiB = (g: number): void => {
      u.peakMemGiB = Math.max(u.peakMemGiB, g);
    };

    at(400, () => {
      this.log(key, sgl(this.t, serverArgsLine(role, port, spec.dpRanks, metrics)));
      hostGiB(2.1);
    });
    say(1500, 'Attention backend not explicitly specified. Use fa3 backend by default.');
    for (const tp of tps) say(3000 + (tp - tps[0]) * 40, 'Init torch distributed begin.', { tp });
    if (hangs) return; // NCCL/bootstrap never completes: the classic silent hang.
    if (!spec.node) return this.loadRest(u, gen, p, { total, failsToStart, http, tps, at, say });
    // Every node waits in torch.distributed's rendezvous until all nodes have joined it.
    const join = (): void => {
      if (u.gen !== gen) return;
      if (!this.peerJoined(u)) return void this.scheduleFor(u, this.t + 1000, join);
      start = Math.max(start, this.t - 4900);
      p.joined = true;
      this.loadRest(u, gen, p, { total, failsToStart, http, tps, at, say });
    };
    this.scheduleFor(u, start + 4900, join);
  }

  /** The load after torch.distributed is initialised: weights, KV pool, CUDA graphs, the HTTP server. */
  private loadRest(
    u: UnitRuntime,
    gen: number,
    p: ServerProcess,
    o: {
      total: number;
      failsToStart: boolean;
      http: boolean;
      tps: number[];
      at: (ms: number, fn: () => void) => void;
      say: (ms: number, msg: string, rank?: { tp: number; dp?: number }) => void;
    },
  ): void {
    const { total, failsToStart, http, tps, at, say } = o;
    const role = p.role;
    const key = u.def.key;
    const spec = u.def.server as ServerSpec;
    const port = spec.port;
    const hostGiB = (g: number): void => {
      u.peakMemGiB = Math.max(u.peakMemGiB, g);
    };
    for (const tp of tps)
      say(5000 + (tp - tps[0]) * 30, 'Init torch distributed ends. mem usage=0.91 GB', { tp });
    at(5200, () => {
      p.gpuMemMiB = 1460;
      this.log(key, sgl(this.t, 'Load weight begin. avail mem=78.53 GB', { tp: 0 }));
    });
    const loadStart = 5600;
    const loadLen = total * 0.42;
    // Global rank 0 draws the shard bar; SGLang's bar format ends in a newline, so every redraw is a journal
    // line of its own, written as it happens (tqdmJournalLines).
    const tqdm = new TqdmRate();
    const perShard = loadLen / SHARDS / 1000;
    const draws: Array<{ ms: number; bar: string }> = [];
    // The bar when created, after each shard, and once more when tqdm.close() redraws it with the overall rate.
    for (let s = 0; s <= SHARDS + 1; s++) {
      const shard = Math.min(s, SHARDS);
      const ms = loadStart + (loadLen * shard) / SHARDS;
      if (s > 0 && s <= SHARDS) tqdm.update(1, perShard);
      const elapsedS = (ms - loadStart) / 1000;
      const rate = s > SHARDS ? SHARDS / elapsedS : tqdm.rate;
      draws.push({ ms, bar: shardProgress(shard, elapsedS, SHARDS, rate) });
      at(ms, () => {
        p.gpuMemMiB = 1460 + Math.round((16_040 * shard) / SHARDS);
        hostGiB(2.1 + (14 * shard) / SHARDS);
      });
    }
    if (tps.includes(0)) {
      const lines = tqdmJournalLines(
        draws.map((d) => d.bar),
        true,
      );
      lines.forEach((line, i) => at(draws[Math.min(i, draws.length - 1)].ms, () => this.log(key, line)));
    }
    const weightsDone = loadStart + loadLen + 400;
    say(
      weightsDone,
      'Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=62.87 GB, mem usage=15.66 GB.',
      {
        tp: 0,
      },
    );
    if (failsToStart) {
      at(weightsDone + 1500, () => {
        for (const line of startupFailureTraceback(this.t, role)) this.log(key, line);
      });
      at(weightsDone + 2200, () => this.failStart(u, 1));
      return;
    }
    at(weightsDone + 1200, () => {
      p.gpuMemMiB = 73_020;
      hostGiB(22.4);
      const perRankGb = role === 'decode' ? 26.34 : 4.57;
      this.log(
        key,
        sgl(
          this.t,
          `KV Cache is allocated. #tokens: ${spec.capacity}, K size: ${perRankGb} GB, V size: ${perRankGb} GB`,
          { tp: 0 },
        ),
      );
      this.log(key, sgl(this.t, 'Memory pool end. avail mem=8.12 GB', { tp: 0 }));
    });
    let configDone = weightsDone + 1800;
    if (role === 'decode') {
      // After the KV pool, however short the load: the steps before it take a fixed few seconds.
      const capStart = Math.max(total * 0.62, weightsDone + 1500);
      const capEnd = capStart + total * 0.24;
      say(capStart, 'Capture cuda graph begin. This can take up to several minutes. avail mem=7.90 GB', {
        tp: 0,
      });
      say(
        capStart + 300,
        'Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256]',
        {
          tp: 0,
        },
      );
      const captureBar = tps.includes(0) ? captureBarLine(capStart + 400, capEnd) : null;
      at(capEnd, () => {
        p.gpuMemMiB = 74_580;
        if (captureBar) this.log(key, captureBar);
        this.log(
          key,
          sgl(
            this.t,
            `Capture cuda graph end. Time elapsed: ${((capEnd - capStart) / 1000).toFixed(2)} s. mem usage=1.52 GB. avail mem=6.38 GB.`,
            {
              tp: 0,
            },
          ),
        );
      });
      configDone = capEnd + 500;
    }
    say(
      configDone,
      `max_total_num_tokens=${spec.capacity}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=${role === 'decode' ? 256 : 32}, context_len=524288, available_gpu_mem=6.38 GB`,
      { tp: 0 },
    );
    const listenAt = Math.max(configDone + 800, total - 4000);
    if (!http) {
      // Node rank ≥ 1 runs its share of every forward pass and serves nothing itself.
      at(listenAt + 2600, () => {
        if (p.peerLost) return;
        p.stage = 'ready';
        p.readyAt = this.t;
        if (this.isFaultOn('crash-loop', key)) this.scheduleCrash(u, this.t + this.rng.range(15_000, 25_000));
      });
      return;
    }
    at(listenAt, () => {
      p.stage = 'listening';
      p.listeningAt = this.t;
      for (const line of [
        `INFO:     Started server process [${p.pid}]`,
        'INFO:     Waiting for application startup.',
        'INFO:     Application startup complete.',
        `INFO:     Uvicorn running on http://127.0.0.1:${port} (Press CTRL+C to quit)`,
      ])
        this.log(key, line);
    });
    at(listenAt + 2600, () => {
      this.logHttpRequest(key, 'POST', '/generate', 200);
      this.log(key, sgl(this.t, 'The server is fired up and ready to roll!'));
      // A node whose peer died meanwhile never finishes its warmup forward pass.
      if (p.peerLost) return;
      p.stage = 'ready';
      p.readyAt = this.t;
      if (this.isFaultOn('crash-loop', key)) this.scheduleCrash(u, this.t + this.rng.range(15_000, 25_000));
    });
  }

  private scheduleCrash(u: UnitRuntime, at: number): void {
    const gen = u.gen;
    this.scheduleFor(u, at, () => {
      if (u.gen !== gen || !this.isFaultOn('crash-loop', u.def.key)) return;
      if (u.activeState !== 'active' && u.activeState !== 'activating') return;
      this.crash(u);
    });
  }

  /** The process dies (SGLang's watchdog kills its own process tree with SIGKILL); systemd restarts it. */
  private crash(u: UnitRuntime): void {
    const key = u.def.key;
    if (u.server) for (const line of runtimeCrash(this.t)) this.log(key, line);
    else if (u.router)
      this.log(
        key,
        rust(
          this.t * 1000,
          'ERROR',
          routerTarget(this.routerEra, 'server'),
          "thread 'tokio-runtime-worker' panicked: worker registry poisoned",
        ),
      );
    this.closeProcessPorts(u);
    this.processExited(u, { code: 2, status: 9 });
    u.result = 'signal';
    this.logProcessEnd(u);
    u.server = null;
    u.router = null;
    this.setState(u, 'failed', 'failed');
    this.scheduleAutoRestart(u);
  }

  /** Restart=on-failure: systemd 252 shows the unit as activating/auto-restart until RestartSec has passed. */
  private scheduleAutoRestart(u: UnitRuntime): void {
    const gen = ++u.gen;
    this.setState(u, 'activating', 'auto-restart');
    this.scheduleFor(u, this.t + u.def.restartSec * 1000, () => {
      if (u.gen !== gen || u.subState !== 'auto-restart') return;
      this.spawn(u, 'auto');
    });
  }

  /** The server exits during startup; RestartPreventExitStatus keeps systemd from retrying exit status 1. */
  private failStart(u: UnitRuntime, status: number): void {
    this.closeProcessPorts(u);
    this.processExited(u, { code: 1, status });
    u.result = 'exit-code';
    this.logProcessEnd(u);
    u.server = null;
    u.gen++;
    this.setState(u, 'failed', 'failed');
    if (!(u.def.restartPreventExitStatus ?? []).includes(status)) this.scheduleAutoRestart(u);
    else u.flushRestarts = true;
  }

  // ---------------------------------------------------------------- router

  private scheduleRouterStart(u: UnitRuntime, gen: number): void {
    const r = u.router;
    if (!r) return;
    const key = u.def.key;
    const spec = u.def.router as RouterSpec;
    const target = (m: string): string => routerTarget(this.routerEra, m);
    const at = (ms: number, fn: () => void): void =>
      this.scheduleFor(u, this.t + ms, () => {
        if (u.gen === gen) fn();
      });
    const prefillUrls = spec.workers
      .filter((w) => w.role === 'prefill')
      .map((w) => `("${w.url}", ${w.bootstrapPort === undefined ? 'None' : `Some(${w.bootstrapPort})`})`)
      .join(', ');
    const decodeUrls = spec.workers
      .filter((w) => w.role === 'decode')
      .map((w) => `"${w.url}"`)
      .join(', ');
    at(300, () => {
      this.log(
        key,
        rust(
          this.t * 1000,
          'INFO',
          target('server'),
          `Starting router on 0.0.0.0:${spec.apiPort} | mode: PrefillDecode { prefill_urls: [${prefillUrls}], decode_urls: [${decodeUrls}] } | policy: CacheAware | max_payload: 512MB`,
        ),
      );
    });
    at(900, () => {
      r.listening = true;
      this.log(
        key,
        rust(
          this.t * 1000,
          'INFO',
          target('metrics'),
          `Starting prometheus exporter on 127.0.0.1:${spec.metricsPort}`,
        ),
      );
      this.log(
        key,
        rust(
          this.t * 1000,
          'INFO',
          target('server'),
          `Waiting for ${spec.workers.length} workers to become healthy (timeout: 1800s)`,
        ),
      );
    });
    const check = (): void => {
      if (u.gen !== gen || !r.listening) return;
      this.routerHealthCheck(r);
      // While catching up on hours nobody watched, space the checks out: their outcome cannot change then.
      const lag = this.clock.now() - this.t;
      const interval = ROUTER_HEALTH_INTERVAL_S * 1000;
      this.scheduleFor(u, this.t + (lag > 3_600_000 ? Math.max(interval, lag / 500) : interval), check);
    };
    at(1500, check);
    if (this.isFaultOn('crash-loop', key)) this.scheduleCrash(u, this.t + this.rng.range(15_000, 25_000));
  }

  /** What /health on a server answers right now: 'ok', 'starting' (503) or 'refused' (port closed). */
  serverHealth(key: string): 'ok' | 'starting' | 'refused' {
    this.advance();
    const u = this.unitOf(key);
    const p = u.server;
    if (!p || p.stage === 'loading' || this.host(u.def.host).downUntil > this.t) return 'refused';
    if (p.stage !== 'ready' || this.isFaultOn('health-never-ok', key)) return 'starting';
    return 'ok';
  }

  private routerHealthCheck(r: RouterProcess): void {
    const target = routerTarget(this.routerEra, 'core::worker');
    const key = this.routerUnit?.def.key ?? 'router';
    for (const w of r.workers) {
      const h = this.serverHealth(w.unit);
      const ok = h === 'ok';
      if (ok) w.checksOk++;
      else w.checksFailed++;
      const why =
        h === 'refused'
          ? `error sending request for url (${w.url}/health): client error (Connect): tcp connect error: Connection refused (os error 111)`
          : 'status 503 Service Unavailable';
      if (w.health === 'pending') {
        if (ok) {
          w.health = 'healthy';
          w.consecutiveFailures = 0;
          this.log(key, rust(this.t * 1000, 'INFO', target, `Worker ${w.url} (${w.role}) is healthy`));
          if (r.workers.every((x) => x.health === 'healthy'))
            this.log(
              key,
              rust(
                this.t * 1000,
                'INFO',
                routerTarget(this.routerEra, 'server'),
                `All ${r.workers.length} workers are healthy`,
              ),
            );
        }
        continue;
      }
      if (ok) {
        w.consecutiveFailures = 0;
        w.consecutiveSuccesses++;
        if (w.health === 'unhealthy') {
          if (this.isFaultOn('router-never-readds', w.unit)) w.stuck = true;
          if (!w.stuck && w.consecutiveSuccesses >= ROUTER_HEALTH_SUCCESS_THRESHOLD) {
            w.health = 'healthy';
            w.cbState = 0;
            w.cbConsecutiveFailures = 0;
            this.log(
              key,
              rust(
                this.t * 1000,
                'INFO',
                target,
                `Worker ${w.url} is healthy again after ${w.consecutiveSuccesses} consecutive successes`,
              ),
            );
          }
        }
      } else {
        w.consecutiveSuccesses = 0;
        w.consecutiveFailures++;
        if (w.health === 'healthy') {
          this.log(
            key,
            rust(
              this.t * 1000,
              'WARN',
              target,
              `Health check failed for worker ${w.url}: ${why} (${w.consecutiveFailures}/${ROUTER_HEALTH_FAILURE_THRESHOLD})`,
            ),
            this.t,
            { priority: 6 },
          );
          if (w.consecutiveFailures >= ROUTER_HEALTH_FAILURE_THRESHOLD) {
            w.health = 'unhealthy';
            w.cbState = 1;
            if (this.isFaultOn('router-never-readds', w.unit)) w.stuck = true;
            this.log(
              key,
              rust(
                this.t * 1000,
                'WARN',
                target,
                `Worker ${w.url} marked unhealthy after ${w.consecutiveFailures} consecutive failures`,
              ),
            );
          }
        }
      }
    }
  }

  // ---------------------------------------------------------------- host

  private bootStart(h: HostRuntime, at: number): void {
    this.t = Math.max(this.t, at);
    for (const u of h.units) if (u.def.server) this.spawn(u, 'boot');
    // A router is ordered After= its host's servers: it starts once their start jobs finished.
    for (const u of h.units) {
      if (!u.def.router) continue;
      const before = h.units.filter((d) => u.def.after.includes(d.def.name));
      const waitForServers = (): void => {
        if (before.every((d) => d.activeState !== 'activating')) {
          if (u.activeState === 'inactive') this.spawn(u, 'boot');
        } else this.schedule(this.t + 1000, waitForServers, h.spec.id);
      };
      this.schedule(this.t + 1000, waitForServers, h.spec.id);
    }
  }

  /**
   * Reboots a host (default: the single demo host): every process dies, SSH drops and refuses connections
   * for `downForMs`, units start at boot.
   */
  reboot(downForMs = 45_000, hostId?: string): void {
    this.advance();
    const h = hostId ? this.host(hostId) : this.single;
    for (const u of h.units) {
      if (u.activeState === 'inactive' || u.activeState === 'failed') continue;
      const key = u.def.key;
      u.gen++;
      this.systemdLog(key, 'stopping', systemdText.stopping(u.def.name, u.def.description));
      this.closeProcessPorts(u);
      this.processExited(u, { code: 1, status: 0 });
      this.setState(u, 'inactive', 'dead');
      this.systemdLog(key, 'deactivated', systemdText.deactivated(u.def.name));
      this.systemdLog(key, 'stopped', systemdText.stopped(u.def.name, u.def.description));
      this.consumedLog(u);
      u.server = null;
      u.router = null;
    }
    this.events = this.events.filter((ev) => ev.host !== h.spec.id);
    h.downUntil = this.t + downForMs;
    h.network.emit('event', { type: 'down', forMs: downForMs } satisfies NetworkEvent);
    const bootAt = h.downUntil;
    this.schedule(
      bootAt,
      () => {
        h.bootId = this.rng.hex(16);
        h.bootedAt = this.t - 12_000;
        for (const u of h.units) {
          u.nRestarts = 0;
          u.result = 'success';
          u.ts = {
            inactiveExit: null,
            activeEnter: null,
            activeExit: null,
            inactiveEnter: null,
            stateChange: null,
          };
          u.execMain = { pid: 0, startAt: null, exitAt: null, code: 0, status: 0 };
        }
        this.bootStart(h, this.t);
      },
      h.spec.id,
    );
  }

  /** Every SSH connection to the host (default: the single one) is cut, as by a network blip. */
  dropConnections(hostId?: string): void {
    const h = hostId ? this.host(hostId) : this.single;
    h.network.emit('event', { type: 'drop-connections' } satisfies NetworkEvent);
  }

  onNetwork(fn: (e: NetworkEvent) => void, hostId?: string): () => void {
    const h = hostId ? this.host(hostId) : this.single;
    h.network.on('event', fn);
    return () => h.network.off('event', fn);
  }

  get isDown(): boolean {
    return this.hostDown(this.single.spec.id);
  }

  hostDown(hostId: string): boolean {
    return this.clock.now() < this.host(hostId).downUntil;
  }

  /** Is something listening on this port of the host (default: the single one) right now? */
  portOpen(port: number, hostId?: string): boolean {
    this.advance();
    const h = hostId ? this.host(hostId) : this.single;
    if (this.hostDown(h.spec.id)) return false;
    const u = this.listenerOf(h, port);
    if (!u) return false;
    if (u.router) return u.router.listening;
    return !!u.server && u.server.stage !== 'loading';
  }

  /** The unit whose process would listen on this port of the host. */
  listenerOf(h: HostRuntime, port: number): UnitRuntime | null {
    if (port <= 0) return null;
    for (const u of h.units) {
      if (u.def.router && (u.def.router.apiPort === port || u.def.router.metricsPort === port)) return u;
      if (u.def.server && u.def.port === port) return u;
    }
    return null;
  }

  /** Every port some unit of the host listens on when it runs. */
  httpPortsOf(hostId: string): number[] {
    const out: number[] = [];
    for (const u of this.host(hostId).units) {
      if (u.def.server && u.def.port > 0) out.push(u.def.port);
      if (u.def.router) out.push(u.def.router.apiPort, u.def.router.metricsPort);
    }
    return out;
  }

  // ---------------------------------------------------------------- inspection

  /** Exact KV of a server unit (key: a role on the single host); null while its process is down. */
  kvTruth(key: string): KvTruth | null {
    this.advance();
    const p = this.unitOf(key).server;
    if (!p || p.stage === 'loading') return null;
    const used = p.usedTokens;
    const evictable = p.ranks.reduce((a, r) => a + r.evictableTokens, 0);
    return {
      used,
      evictable,
      available: p.capacity - used - evictable,
      capacity: p.capacity,
      ratio: used / p.capacity,
    };
  }

  /** The GPUs of a host (default: the single one) as nvidia-smi reads them. */
  gpus(hostId?: string): GpuReading[] {
    this.advance();
    const h = hostId ? this.host(hostId) : this.single;
    const down = this.hostDown(h.spec.id);
    // Hosts after the first get GPUs of their own: other UUIDs, other noise.
    const salt = h.index * 7919;
    const foreign = this.foreignGpuProcesses(h.spec.id);
    const out: GpuReading[] = [];
    for (let i = 0; i < h.spec.gpuCount; i++) {
      const u = h.units.find((x) => x.def.server && x.def.gpus.includes(i));
      const p = u?.server ?? null;
      const role: ServerRole = p?.role ?? 'prefill';
      // A node that serves no HTTP runs the forward passes its peer schedules: read the load there.
      const peer = u?.def.server && !servesHttp(u.def.server) ? this.peerOf(u)?.server : null;
      const loadOf = peer ?? p;
      const n = (s: number, scale: number): number =>
        valueNoise(this.seed ^ salt ^ (i * 31 + s), this.t / scale);
      let util = 0;
      let mem = 4;
      if (p && loadOf && !down) {
        mem = p.gpuMemMiB + Math.round(40 * n(1, 20_000));
        if (p.stage === 'ready' && loadOf.stage === 'ready') {
          const load =
            role === 'decode'
              ? Math.min(1, loadOf.runningReqs / 70)
              : Math.min(1, loadOf.inputThroughput / 52_000 + (loadOf.bootstrapQueue > 0 ? 0.1 : 0));
          util = Math.round(
            Math.max(0, Math.min(100, (role === 'decode' ? 25 : 5) + 75 * load + 6 * n(2, 3000))),
          );
        } else util = Math.round(Math.max(0, 4 + 3 * n(3, 2000)));
      }
      const temp = Math.round(31 + util * 0.38 + 2 * n(4, 60_000));
      const power = Math.max(62, 69 + (util / 100) * 560 + 18 * n(5, 4000));
      out.push({
        index: i,
        name: 'NVIDIA H100 80GB HBM3',
        uuid: `GPU-${this.uuidFor(i, h.index)}`,
        busId: `00000000:${['18', '2A', '3A', '5D', '9A', 'AB', 'BA', 'DB'][i % 8]}:00.0`,
        utilization: util,
        memoryUsedMiB: Math.max(0, mem),
        memoryTotalMiB: 81_559,
        temperature: temp,
        powerDraw: Math.round(power * 100) / 100,
        powerLimit: 700,
        pstate: util > 0 || mem > 1000 ? 'P0' : 'P8',
        pids:
          p && u?.children
            ? [u.children.schedulers[u.def.gpus.indexOf(i)]].filter((x) => x !== undefined)
            : [],
        foreign: foreign.filter((f) => f.gpus.includes(i)),
      });
    }
    return out;
  }

  /** The foreign-gpu-process fault's processes on a host: one on the GPUs of each unit it is on for. */
  foreignGpuProcesses(hostId: string): ForeignGpuProcess[] {
    const h = this.host(hostId);
    return h.units.flatMap((u, n) =>
      u.def.gpus.length && this.isFaultOn('foreign-gpu-process', u.def.key)
        ? [
            {
              pid: FOREIGN_PID_BASE + h.index * 64 + n,
              gpus: [...u.def.gpus],
              usedMiB: 30_720,
              args: `python3 /home/alice/bench/matmul_burn.py --devices ${u.def.gpus.join(',')}`,
            },
          ]
        : [],
    );
  }

  private uuidFor(i: number, hostIndex: number): string {
    const h = (n: number): string =>
      hash32(this.seed * 13 + i * 977 + hostIndex * 104_729 + n)
        .toString(16)
        .padStart(8, '0');
    const a = h(1) + h(2) + h(3) + h(4);
    return `${a.slice(0, 8)}-${a.slice(8, 12)}-${a.slice(12, 16)}-${a.slice(16, 20)}-${a.slice(20, 32)}`;
  }

  memoryCurrentBytes(key: string): number | null {
    const u = this.unitOf(key);
    if (u.router) return Math.round((180 + 20 * valueNoise(this.seed, this.t / 30_000)) * 1024 * 1024);
    if (!u.server) return null;
    const base = u.peakMemGiB > 0 ? Math.min(u.peakMemGiB, 23.6) : 1.2;
    return Math.round((base + 0.3 * valueNoise(this.seed ^ 5, this.t / 30_000)) * 1024 ** 3);
  }

  offeredRate(): number {
    return this.load.rate(this.t);
  }

  /** The single demo host's state (a fleet reads fleetTruth() in fleet.ts instead). */
  snapshot(): DemoSnapshot {
    this.advance();
    const h = this.single;
    const unitSnap = (role: DemoRole): UnitSnapshot => {
      const u = this.unitMap[role];
      const listening =
        role === 'router' ? !!u.router?.listening : !!u.server && u.server.stage !== 'loading';
      const healthy =
        role === 'router' ? !!u.router?.listening : this.serverHealth(role as ServerRole) === 'ok';
      return {
        unit: u.def.name,
        activeState: u.activeState,
        subState: u.subState,
        result: u.result,
        mainPid: u.mainPid,
        nRestarts: u.nRestarts,
        execMainStatus: u.execMain.status,
        activeEnterTimestamp: u.ts.activeEnter,
        listening,
        healthy,
      };
    };
    const counters = (role: ServerRole): DemoSnapshot['counters'][ServerRole] => {
      const p = this.unitMap[role].server;
      if (!p) return null;
      return {
        promptTokens: p.promptTokens,
        generationTokens: p.generationTokens,
        numRequests: p.numRequests,
        abortedRequests: p.abortedRequests,
        transferFailed: p.transferFailed,
        bootstrapFailed: p.bootstrapFailed,
        ttftCount: p.ttft.count,
        e2eCount: p.e2e.count,
      };
    };
    const pp = this.unitMap.prefill.server;
    const dp = this.unitMap.decode.server;
    const r = this.unitMap.router.router;
    return {
      at: this.t,
      bootId: h.bootId,
      bootedAt: h.bootedAt,
      era: this.era,
      routerEra: this.routerEra,
      dpRanks: this.dpRanks,
      units: { prefill: unitSnap('prefill'), decode: unitSnap('decode'), router: unitSnap('router') },
      kv: { prefill: this.kvTruth('prefill'), decode: this.kvTruth('decode') },
      queues: {
        prefill: pp
          ? {
              waiting: pp.queueReqs,
              bootstrap: pp.bootstrapQueue,
              inflight: pp.inflightQueue,
              running: pp.runningReqs,
            }
          : null,
        decode: dp
          ? {
              running: dp.runningReqs,
              waiting: dp.queueReqs,
              prealloc: dp.preallocQueue,
              transfer: dp.transferQueue,
              retracted: dp.retractedQueue,
            }
          : null,
      },
      counters: { prefill: counters('prefill'), decode: counters('decode') },
      genThroughput: dp?.genThroughput ?? 0,
      router: {
        listening: !!r?.listening,
        ready: !!r?.ready,
        workers: r ? r.workers.map((w) => ({ role: w.role, url: w.url, health: w.health })) : [],
      },
      offeredRate: this.load.rate(this.t),
      faults: this.activeFaults(),
    };
  }

  /** Model name served, for the HTTP endpoints. */
  get modelName(): string {
    return MODEL_NAME;
  }
}
