// The demo host's simulated world: systemd units and their processes, the PD traffic, the router's health
// checks, the journal, the GPUs and the injectable faults. All time comes from the injected clock; the state
// is advanced lazily whenever something reads it (a command, an HTTP request, a snapshot), by replaying the
// scheduled events in time order and integrating the traffic in steps of at most one simulated second.
import { EventEmitter } from 'node:events';
import type { Clock } from '../core/clock';
import { DEMO_FAULT_NAMES, type DemoFaultName } from '@shared/demo-faults';
import type { DemoEra, RouterEra } from './eras';
import { Journal, type JournalEntry } from './journal';
import { LoadModel } from './load-model';
import {
  SHARDS,
  consumedLine,
  routerTarget,
  runtimeCrash,
  rust,
  serverArgsLine,
  sgl,
  shardProgress,
  startupFailureTraceback,
  systemdText,
  uvicornAccess,
} from './log-lines';
import { PdTraffic, type TrafficContext } from './pd-traffic';
import { RouterProcess, ServerProcess, type RouterWorker } from './processes';
import { Rng, hash32, valueNoise } from './rng';
import {
  DEMO_ROLES,
  GPU_COUNT,
  MODEL_NAME,
  PORTS,
  ROUTER_HEALTH_FAILURE_THRESHOLD,
  ROUTER_HEALTH_INTERVAL_S,
  ROUTER_HEALTH_SUCCESS_THRESHOLD,
  TP_SIZE,
  buildUnits,
  type DemoRole,
  type ServerRole,
  type UnitDefinition,
} from './units';

export { DEMO_ERAS, ROUTER_ERAS, isSmgEra, type DemoEra, type RouterEra } from './eras';

export const FAULT_NAMES = DEMO_FAULT_NAMES;
export type FaultName = DemoFaultName;

/** Roles a fault can be scoped to; null = host-wide. Omitting the role in setFault means all of them. */
export const FAULT_SCOPES: Record<FaultName, readonly DemoRole[] | null> = {
  'sudo-password': null,
  'unit-fails-to-start': ['prefill', 'decode', 'router'],
  'start-timeout': ['prefill', 'decode'],
  'health-never-ok': ['prefill', 'decode'],
  'router-never-readds': ['prefill', 'decode'],
  'crash-loop': ['prefill', 'decode', 'router'],
  'metrics-500': ['prefill', 'decode', 'router'],
  'metrics-hang': ['prefill', 'decode', 'router'],
  'metrics-trickle': ['prefill', 'decode', 'router'],
  'metrics-huge': ['prefill', 'decode', 'router'],
  'metrics-garbage': ['prefill', 'decode', 'router'],
  'malformed-systemctl': null,
  'malformed-journal': null,
  'malformed-nvidia-smi': null,
  'kv-full': ['decode'],
};

/** KV pool sizes: the decode pool of the reference deployment, and a prefill pool. */
export const KV_CAPACITY: Record<ServerRole, number> = { prefill: 447_416, decode: 2_580_000 };

export type ActiveState = 'active' | 'activating' | 'deactivating' | 'inactive' | 'failed';
export type SubState =
  'running' | 'start' | 'start-post' | 'stop-sigterm' | 'dead' | 'failed' | 'auto-restart';

export interface UnitRuntime {
  readonly def: UnitDefinition;
  activeState: ActiveState;
  subState: SubState;
  result: 'success' | 'exit-code' | 'signal' | 'timeout' | 'core-dump';
  nRestarts: number;
  mainPid: number;
  controlPid: number;
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
  pids: number[];
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

export interface DemoSimulationOptions {
  clock: Clock;
  era?: DemoEra;
  routerEra?: RouterEra;
  dpRanks?: number;
  metricsDisabled?: ServerRole[];
  seed?: number;
  /** How much simulated past exists at construction (processes started this long ago). Default 45 min. */
  historyMs?: number;
}

interface ScheduledEvent {
  at: number;
  seq: number;
  fn: () => void;
}

type NetworkEvent = { type: 'drop-connections' } | { type: 'down'; forMs: number };

const UVICORN_PORT_BASE = 40_000;

export class DemoSimulation {
  readonly clock: Clock;
  readonly era: DemoEra;
  readonly routerEra: RouterEra;
  readonly dpRanks: number;
  readonly metricsDisabled: ReadonlySet<ServerRole>;
  readonly seed: number;
  readonly journal = new Journal();
  private readonly unitMap: Record<DemoRole, UnitRuntime>;
  /** Maps simulated HTTP ports to real loopback ports when the host listens them (listenHttp). */
  httpPorts: Record<number, number> = {};

  private _bootId: string;
  private _bootedAt: number;
  private advancing = false;
  private stepMs = 1000;
  /** Until this time the host is rebooting: SSH refuses and nothing runs. */
  downUntil = 0;

  private t: number;
  private readonly rng: Rng;
  private readonly load: LoadModel;
  private readonly traffic: PdTraffic;
  private events: ScheduledEvent[] = [];
  private eventSeq = 0;
  private nextPid: number;
  private lastJournalUs = 0;
  private readonly faults = new Map<FaultName, Set<DemoRole> | true>();
  private readonly network = new EventEmitter();
  private clientPort = UVICORN_PORT_BASE;
  private malformedTick = 0;
  /** Counts /metrics requests so metrics-garbage alternates between its two shapes. */
  garbageCounter = 0;

  constructor(opts: DemoSimulationOptions) {
    this.clock = opts.clock;
    this.era = opts.era ?? 'E4';
    this.routerEra = opts.routerEra ?? 'smg-1.5';
    this.dpRanks = Math.max(1, Math.floor(opts.dpRanks ?? 1));
    this.metricsDisabled = new Set(opts.metricsDisabled ?? []);
    this.seed = (opts.seed ?? 20261129) >>> 0;
    this.rng = new Rng(this.seed);
    this.load = new LoadModel(this.seed);
    this.traffic = new PdTraffic(this.rng.fork(1), this.load);
    this.nextPid = 40_000 + this.rng.int(0, 8000);
    const defs = buildUnits({
      dpRanks: this.dpRanks,
      metricsDisabled: this.metricsDisabled,
      engineMetrics: this.routerEra === 'smg-engine-metrics',
    });
    const now = this.clock.now();
    const history = opts.historyMs ?? 45 * 60_000;
    this.t = now - history;
    this._bootedAt = this.t - (6 * 86_400_000 + this.rng.int(0, 86_400_000));
    this._bootId = this.rng.hex(16);
    const mk = (role: DemoRole): UnitRuntime => ({
      def: defs[role],
      activeState: 'inactive',
      subState: 'dead',
      result: 'success',
      nRestarts: 0,
      mainPid: 0,
      controlPid: 0,
      execMain: { pid: 0, startAt: null, exitAt: null, code: 0, status: 0 },
      ts: { inactiveExit: null, activeEnter: null, activeExit: null, inactiveEnter: null, stateChange: null },
      invocationId: this.rng.hex(16),
      gen: 0,
      server: null,
      router: null,
      peakMemGiB: 0,
      restartPending: false,
    });
    this.unitMap = { prefill: mk('prefill'), decode: mk('decode'), router: mk('router') };
    this.bootStart(this.t);
    this.advance();
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

  /** The units, their runtime state and processes, as of the clock's current time. */
  get units(): Readonly<Record<DemoRole, UnitRuntime>> {
    this.advance();
    return this.unitMap;
  }

  get bootId(): string {
    this.advance();
    return this._bootId;
  }

  get bootedAt(): number {
    this.advance();
    return this._bootedAt;
  }

  private schedule(at: number, fn: () => void): void {
    const ev = { at: Math.max(at, this.t), seq: this.eventSeq++, fn };
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
    const up = (r: ServerRole): ServerProcess | null => this.unitMap[r].server;
    return {
      prefill: up('prefill'),
      decode: up('decode'),
      router: this.unitMap.router.router,
      kvFull: this.isFaultOn('kv-full', 'decode'),
    };
  }

  private stepWorld(t0: number, dt: number): void {
    if (t0 < this.downUntil) return;
    const ctx = this.trafficContext();
    const stats = this.traffic.step(t0, dt, ctx);
    const t1 = t0 + dt;
    for (const role of ['prefill', 'decode'] as const) {
      const p = ctx[role];
      if (p) p.cpuSeconds += (dt / 1000) * (p.stage === 'ready' ? 5.3 : 2.1);
    }
    if (ctx.router) ctx.router.cpuSeconds += (dt / 1000) * 0.4;
    // Sampled access-log lines for the router → server /generate calls (real servers log every one).
    for (let i = 0; i < stats.arrived; i++) {
      if (this.rng.next() > 0.125) continue;
      for (const role of ['prefill', 'decode'] as const) {
        this.log(role, uvicornAccess(this.nextClientPort(), 'POST', '/generate', 200), t1);
      }
      if (ctx.router && this.rng.next() < 0.3) {
        this.log(
          'router',
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
        'router',
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
    const p = this.unitMap.prefill.server;
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
        'prefill',
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
    const d = this.unitMap.decode.server;
    if (d?.stage === 'ready' && t - d.lastBatchLogAt >= 5000 && d.runningReqs > 0) {
      d.lastBatchLogAt = t;
      d.ranks.forEach((r, i) => {
        const rank = this.dpRanks > 1 ? { tp: i, dp: i } : { tp: 0 };
        this.log(
          'decode',
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

  log(
    role: DemoRole,
    message: string,
    at = this.t,
    opts: { priority?: number; bytes?: Buffer } = {},
  ): JournalEntry {
    return this.appendJournal(role, message, at, false, opts.priority ?? 6, opts.bytes);
  }

  private systemdLog(role: DemoRole, message: string, priority = 6, at = this.t): void {
    this.appendJournal(role, message, at, true, priority);
  }

  private appendJournal(
    role: DemoRole,
    message: string,
    at: number,
    fromSystemd: boolean,
    priority: number,
    bytes?: Buffer,
  ): JournalEntry {
    const u = this.unitMap[role];
    const us = Math.max(Math.round(at * 1000), this.lastJournalUs + 1);
    this.lastJournalUs = us;
    return this.journal.append({
      realtimeUs: us,
      monotonicUs: Math.max(0, us - this._bootedAt * 1000),
      bootId: this._bootId,
      unit: u.def.name,
      fromSystemd,
      pid: fromSystemd ? 1 : u.mainPid || u.execMain.pid,
      identifier: fromSystemd ? 'systemd' : 'python',
      priority,
      message,
      messageBytes: bytes,
      invocationId: u.invocationId,
      cmdline: fromSystemd ? undefined : u.def.execStartArgv.join(' '),
    });
  }

  private nextClientPort(): number {
    this.clientPort = this.clientPort >= 60_999 ? UVICORN_PORT_BASE : this.clientPort + this.rng.int(1, 37);
    return this.clientPort;
  }

  /** Logs an HTTP request the way the serving process would (uvicorn access log for the servers). */
  logHttpRequest(role: DemoRole, method: string, path: string, status: number): void {
    if (role === 'router') return;
    this.log(role, uvicornAccess(this.nextClientPort(), method, path, status));
  }

  // ---------------------------------------------------------------- faults

  setFault(name: FaultName, on: boolean, role?: DemoRole): void {
    if (!FAULT_NAMES.includes(name))
      throw new RangeError(`unknown demo fault "${name}"; known: ${FAULT_NAMES.join(', ')}`);
    this.advance();
    const scope = FAULT_SCOPES[name];
    if (role && scope && !scope.includes(role))
      throw new RangeError(
        `demo fault "${name}" does not apply to ${role}; it applies to ${scope.join(', ')}`,
      );
    const roles: DemoRole[] = scope ? (role ? [role] : [...scope]) : [];
    const cur = this.faults.get(name);
    if (on) {
      if (!scope) this.faults.set(name, true);
      else {
        const set = cur instanceof Set ? cur : new Set<DemoRole>();
        for (const r of roles) set.add(r);
        this.faults.set(name, set);
      }
    } else if (!scope || !role) this.faults.delete(name);
    else if (cur instanceof Set) {
      cur.delete(role);
      if (!cur.size) this.faults.delete(name);
    }
    this.onFaultChanged(name, on, roles);
  }

  clearFaults(): void {
    for (const name of [...this.faults.keys()]) this.setFault(name, false);
  }

  isFaultOn(name: FaultName, role?: DemoRole): boolean {
    const f = this.faults.get(name);
    if (!f) return false;
    if (f === true) return true;
    return role ? f.has(role) : f.size > 0;
  }

  activeFaults(): Array<{ name: FaultName; roles: DemoRole[] | null }> {
    return [...this.faults.entries()].map(([name, f]) => ({ name, roles: f === true ? null : [...f] }));
  }

  private onFaultChanged(name: FaultName, on: boolean, roles: DemoRole[]): void {
    if (name === 'crash-loop' && on) {
      for (const role of roles) {
        const u = this.unitMap[role];
        if (u.activeState === 'active') this.scheduleCrash(u, this.t + this.rng.range(5_000, 15_000));
      }
    }
    if (name === 'router-never-readds' && !on) {
      const r = this.unitMap.router.router;
      if (r) for (const w of r.workers) if (roles.includes(w.role)) w.stuck = false;
    }
    if (name === 'malformed-journal' && on) this.appendMalformedJournal();
  }

  /** Invalid UTF-8 and a 1 MB line in every server unit's journal. */
  private appendMalformedJournal(): void {
    this.malformedTick++;
    for (const role of ['prefill', 'decode'] as const) {
      const bad = Buffer.concat([
        Buffer.from(sgl(this.t, 'Detokenizer output: '), 'utf8'),
        Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0xff, 0xfe]),
        Buffer.from(' <- invalid UTF-8', 'utf8'),
      ]);
      this.log(role, bad.toString('utf8'), this.t, { bytes: bad });
      const huge = sgl(this.t, `Request dump: ${'x'.repeat(1024 * 1024)}`);
      this.log(role, huge);
    }
  }

  // ---------------------------------------------------------------- units

  private allocPid(): number {
    this.nextPid += this.rng.int(3, 900);
    if (this.nextPid > 4_000_000) this.nextPid = 2000 + this.rng.int(0, 1000);
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
  }

  /** What `systemctl start` does. Returns false when there was nothing to do. */
  startUnit(role: DemoRole): boolean {
    this.advance();
    const u = this.unitMap[role];
    if (u.activeState === 'active' || (u.activeState === 'activating' && u.subState !== 'auto-restart'))
      return false;
    if (u.activeState === 'deactivating') {
      u.restartPending = true;
      return true;
    }
    if (role === 'router') {
      for (const dep of ['prefill', 'decode'] as const) {
        const d = this.unitMap[dep];
        if (d.activeState === 'inactive' || d.activeState === 'failed') this.spawn(d, 'manual');
      }
    }
    this.spawn(u, 'manual');
    return true;
  }

  /** What `systemctl stop` does. */
  stopUnit(role: DemoRole): void {
    this.advance();
    const u = this.unitMap[role];
    u.restartPending = false;
    this.beginStop(u);
  }

  /** What `systemctl restart` does: stop if running, then start. Manual restarts do not count in NRestarts. */
  restartUnit(role: DemoRole): void {
    this.advance();
    const u = this.unitMap[role];
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
      u.gen++;
      this.setState(u, 'inactive', 'dead');
      if (u.restartPending) {
        u.restartPending = false;
        this.spawn(u, 'manual');
      }
      return;
    }
    if (u.activeState === 'deactivating') return;
    const gen = ++u.gen;
    const role = u.def.role;
    this.setState(u, 'deactivating', 'stop-sigterm');
    this.systemdLog(role, systemdText.stopping(u.def.name, u.def.description));
    const wasListening = this.closeProcessPorts(u);
    if (u.server && wasListening) {
      for (const line of [
        'INFO:     Shutting down',
        'INFO:     Waiting for application shutdown.',
        'INFO:     Application shutdown complete.',
        `INFO:     Finished server process [${u.mainPid}]`,
      ])
        this.log(role, line);
    }
    if (u.router)
      this.log(
        role,
        rust(
          this.t * 1000,
          'INFO',
          routerTarget(this.routerEra, 'server'),
          'Received SIGTERM, starting graceful shutdown',
        ),
      );
    const stopMs = role === 'router' ? this.rng.range(200, 600) : this.rng.range(3000, 6000);
    this.schedule(this.t + stopMs, () => {
      if (u.gen !== gen) return;
      this.processExited(u, { code: 1, status: 0 });
      this.setState(u, 'inactive', 'dead');
      this.systemdLog(role, systemdText.deactivated(u.def.name));
      this.systemdLog(role, systemdText.stopped(u.def.name, u.def.description));
      this.systemdLog(role, consumedLine(u.def.name, this.cpuOf(u), u.peakMemGiB));
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
      this.traffic.dropFor(u.def.role as ServerRole, this.trafficContext());
    }
    if (u.router) {
      was = u.router.listening;
      u.router.listening = false;
    }
    return was;
  }

  private processExited(u: UnitRuntime, how: { code: 1 | 2 | 3; status: number }): void {
    u.execMain.exitAt = this.t;
    u.execMain.code = how.code;
    u.execMain.status = how.status;
    u.mainPid = 0;
    u.controlPid = 0;
  }

  private spawn(u: UnitRuntime, kind: 'manual' | 'auto' | 'boot'): void {
    const role = u.def.role;
    const gen = ++u.gen;
    if (kind === 'auto') {
      u.nRestarts++;
      this.systemdLog(role, systemdText.scheduledRestart(u.def.name, u.nRestarts));
    }
    u.result = 'success';
    u.invocationId = this.rng.hex(16);
    const pid = this.allocPid();
    u.mainPid = pid;
    u.execMain = { pid, startAt: this.t, exitAt: null, code: 0, status: 0 };
    u.peakMemGiB = 0;
    this.systemdLog(role, systemdText.starting(u.def.name, u.def.description));
    if (role === 'router') {
      this.setState(u, 'active', 'running');
      this.systemdLog(role, systemdText.started(u.def.name, u.def.description));
      u.router = new RouterProcess(pid, this.t, [
        { role: 'prefill', url: `http://127.0.0.1:${PORTS.prefill}`, id: this.uuid(gen, 1) },
        { role: 'decode', url: `http://127.0.0.1:${PORTS.decode}`, id: this.uuid(gen, 2) },
      ]);
      u.server = null;
      this.scheduleRouterStart(u, gen);
      return;
    }
    u.controlPid = pid + 1;
    this.setState(u, 'activating', 'start-post');
    const server = new ServerProcess(
      role,
      pid,
      this.t,
      KV_CAPACITY[role],
      role === 'decode' ? this.dpRanks : 1,
    );
    u.server = server;
    u.router = null;
    this.scheduleLoad(u, gen, server);
    this.schedule(this.t + u.def.timeoutStartSec * 1000, () => {
      if (u.gen === gen && u.activeState === 'activating' && u.subState === 'start-post')
        this.startTimedOut(u);
    });
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
    const start = this.t;
    const total = (role === 'decode' ? 90_000 : 60_000) * this.rng.range(0.92, 1.08);
    const failsToStart = this.isFaultOn('unit-fails-to-start', role);
    const hangs = this.isFaultOn('start-timeout', role);
    const metrics = !this.metricsDisabled.has(role);
    const port = role === 'prefill' ? PORTS.prefill : PORTS.decode;
    const at = (ms: number, fn: () => void): void =>
      this.schedule(start + ms, () => {
        if (u.gen === gen) fn();
      });
    const say = (ms: number, msg: string, rank?: { tp: number; dp?: number }): void =>
      at(ms, () => this.log(role, sgl(this.t, msg, rank)));
    const hostGiB = (g: number): void => {
      u.peakMemGiB = Math.max(u.peakMemGiB, g);
    };

    at(400, () => {
      this.log(role, sgl(this.t, serverArgsLine(role, port, this.dpRanks, metrics)));
      hostGiB(2.1);
    });
    say(1500, 'Attention backend not explicitly specified. Use fa3 backend by default.');
    for (let tp = 0; tp < TP_SIZE; tp++) say(3000 + tp * 40, 'Init torch distributed begin.', { tp });
    if (hangs) return; // NCCL/bootstrap never completes: the classic silent hang.
    for (let tp = 0; tp < TP_SIZE; tp++)
      say(5000 + tp * 30, 'Init torch distributed ends. mem usage=0.91 GB', { tp });
    at(5200, () => {
      p.gpuMemMiB = 1460;
      this.log(role, sgl(this.t, 'Load weight begin. avail mem=78.53 GB', { tp: 0 }));
    });
    const loadStart = 5600;
    const loadLen = total * 0.42;
    for (let s = 0; s <= SHARDS; s++) {
      const ms = loadStart + (loadLen * s) / SHARDS;
      at(ms, () => {
        p.gpuMemMiB = 1460 + Math.round((16_040 * s) / SHARDS);
        hostGiB(2.1 + (14 * s) / SHARDS);
        this.log(role, shardProgress(s, (ms - loadStart) / 1000));
      });
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
        for (const line of startupFailureTraceback(this.t, role)) this.log(role, line);
      });
      at(weightsDone + 2200, () => this.failStart(u, 1));
      return;
    }
    at(weightsDone + 1200, () => {
      p.gpuMemMiB = 73_020;
      hostGiB(22.4);
      const perRankGb = role === 'decode' ? 26.34 : 4.57;
      this.log(
        role,
        sgl(
          this.t,
          `KV Cache is allocated. #tokens: ${KV_CAPACITY[role]}, K size: ${perRankGb} GB, V size: ${perRankGb} GB`,
          { tp: 0 },
        ),
      );
      this.log(role, sgl(this.t, 'Memory pool end. avail mem=8.12 GB', { tp: 0 }));
    });
    let configDone = weightsDone + 1800;
    if (role === 'decode') {
      const capStart = total * 0.62;
      const capEnd = total * 0.86;
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
      at(capEnd, () => {
        p.gpuMemMiB = 74_580;
        this.log(
          role,
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
      `max_total_num_tokens=${KV_CAPACITY[role]}, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=${role === 'decode' ? 256 : 32}, context_len=524288, available_gpu_mem=6.38 GB`,
      { tp: 0 },
    );
    const listenAt = Math.max(configDone + 800, total - 4000);
    at(listenAt, () => {
      p.stage = 'listening';
      p.listeningAt = this.t;
      for (const line of [
        `INFO:     Started server process [${p.pid}]`,
        'INFO:     Waiting for application startup.',
        'INFO:     Application startup complete.',
        `INFO:     Uvicorn running on http://127.0.0.1:${port} (Press CTRL+C to quit)`,
      ])
        this.log(role, line);
    });
    // ExecStartPost polls /get_model_info every 5 s; the unit turns active at the first poll that answers.
    const firstPoll = Math.ceil(listenAt / 5000) * 5000 + 50;
    at(firstPoll, () => {
      this.logHttpRequest(role, 'GET', '/get_model_info', 200);
      u.controlPid = 0;
      this.setState(u, 'active', 'running');
      this.systemdLog(role, systemdText.started(u.def.name, u.def.description));
    });
    at(listenAt + 2600, () => {
      this.logHttpRequest(role, 'POST', '/generate', 200);
      this.log(role, sgl(this.t, 'The server is fired up and ready to roll!'));
      p.stage = 'ready';
      p.readyAt = this.t;
      if (this.isFaultOn('crash-loop', role)) this.scheduleCrash(u, this.t + this.rng.range(15_000, 25_000));
    });
  }

  private scheduleCrash(u: UnitRuntime, at: number): void {
    const gen = u.gen;
    this.schedule(at, () => {
      if (u.gen !== gen || !this.isFaultOn('crash-loop', u.def.role)) return;
      if (u.activeState !== 'active' && u.activeState !== 'activating') return;
      this.crash(u);
    });
  }

  /** The process dies (SGLang's watchdog kills its own process tree with SIGKILL); systemd restarts it. */
  private crash(u: UnitRuntime): void {
    const role = u.def.role;
    const wasActivating = u.activeState === 'activating';
    if (u.server) for (const line of runtimeCrash(this.t)) this.log(role, line);
    else if (u.router)
      this.log(
        role,
        rust(
          this.t * 1000,
          'ERROR',
          routerTarget(this.routerEra, 'server'),
          "thread 'tokio-runtime-worker' panicked: worker registry poisoned",
        ),
      );
    this.closeProcessPorts(u);
    this.processExited(u, { code: 2, status: 9 });
    this.systemdLog(role, systemdText.killed(u.def.name, 9, 'KILL'), 5);
    this.systemdLog(role, systemdText.failedResult(u.def.name, 'signal'), 4);
    if (wasActivating) this.systemdLog(role, systemdText.failedToStart(u.def.name, u.def.description), 3);
    this.systemdLog(role, consumedLine(u.def.name, this.cpuOf(u), u.peakMemGiB));
    u.result = 'signal';
    u.server = null;
    u.router = null;
    this.setState(u, 'failed', 'failed');
    this.scheduleAutoRestart(u);
  }

  private scheduleAutoRestart(u: UnitRuntime): void {
    const gen = ++u.gen;
    this.setState(u, 'activating', 'auto-restart');
    this.schedule(this.t + u.def.restartSec * 1000, () => {
      if (u.gen !== gen || u.subState !== 'auto-restart') return;
      this.spawn(u, 'auto');
    });
  }

  /** The server exits during startup; RestartPreventExitStatus keeps systemd from retrying exit status 1. */
  private failStart(u: UnitRuntime, status: number): void {
    const role = u.def.role;
    this.closeProcessPorts(u);
    this.processExited(u, { code: 1, status });
    this.systemdLog(role, systemdText.exited(u.def.name, status), 5);
    this.systemdLog(role, systemdText.failedResult(u.def.name, 'exit-code'), 4);
    this.systemdLog(role, systemdText.failedToStart(u.def.name, u.def.description), 3);
    this.systemdLog(role, consumedLine(u.def.name, this.cpuOf(u), u.peakMemGiB));
    u.result = 'exit-code';
    u.server = null;
    u.gen++;
    this.setState(u, 'failed', 'failed');
    if (!(u.def.restartPreventExitStatus ?? []).includes(status)) this.scheduleAutoRestart(u);
  }

  private startTimedOut(u: UnitRuntime): void {
    const role = u.def.role;
    const gen = ++u.gen;
    this.systemdLog(role, systemdText.startTimedOut(u.def.name, 'start-post'), 3);
    this.closeProcessPorts(u);
    this.setState(u, 'deactivating', 'stop-sigterm');
    this.schedule(this.t + 1500, () => {
      if (u.gen !== gen) return;
      this.processExited(u, { code: 2, status: 15 });
      this.systemdLog(role, systemdText.controlKilled(u.def.name), 5);
      this.systemdLog(role, systemdText.failedResult(u.def.name, 'timeout'), 4);
      this.systemdLog(role, systemdText.failedToStart(u.def.name, u.def.description), 3);
      this.systemdLog(role, consumedLine(u.def.name, this.cpuOf(u), u.peakMemGiB));
      u.result = 'timeout';
      u.server = null;
      this.setState(u, 'failed', 'failed');
      this.scheduleAutoRestart(u);
    });
  }

  // ---------------------------------------------------------------- router

  private scheduleRouterStart(u: UnitRuntime, gen: number): void {
    const r = u.router;
    if (!r) return;
    const target = (m: string): string => routerTarget(this.routerEra, m);
    const at = (ms: number, fn: () => void): void =>
      this.schedule(this.t + ms, () => {
        if (u.gen === gen) fn();
      });
    at(300, () => {
      this.log(
        'router',
        rust(
          this.t * 1000,
          'INFO',
          target('server'),
          `Starting router on 0.0.0.0:${PORTS.routerApi} | mode: PrefillDecode { prefill_urls: [("http://127.0.0.1:${PORTS.prefill}", Some(${PORTS.bootstrap}))], decode_urls: ["http://127.0.0.1:${PORTS.decode}"] } | policy: CacheAware | max_payload: 512MB`,
        ),
      );
    });
    at(900, () => {
      r.listening = true;
      this.log(
        'router',
        rust(
          this.t * 1000,
          'INFO',
          target('metrics'),
          `Starting prometheus exporter on 127.0.0.1:${PORTS.routerMetrics}`,
        ),
      );
      this.log(
        'router',
        rust(
          this.t * 1000,
          'INFO',
          target('server'),
          `Waiting for 2 workers to become healthy (timeout: 1800s)`,
        ),
      );
    });
    const check = (): void => {
      if (u.gen !== gen || !r.listening) return;
      this.routerHealthCheck(r);
      // While catching up on hours nobody watched, space the checks out: their outcome cannot change then.
      const lag = this.clock.now() - this.t;
      const interval = ROUTER_HEALTH_INTERVAL_S * 1000;
      this.schedule(this.t + (lag > 3_600_000 ? Math.max(interval, lag / 500) : interval), check);
    };
    at(1500, check);
    if (this.isFaultOn('crash-loop', 'router'))
      this.scheduleCrash(u, this.t + this.rng.range(15_000, 25_000));
  }

  /** What /health on a server answers right now: 'ok', 'starting' (503) or 'refused' (port closed). */
  serverHealth(role: ServerRole): 'ok' | 'starting' | 'refused' {
    this.advance();
    const p = this.unitMap[role].server;
    if (!p || p.stage === 'loading') return 'refused';
    if (p.stage !== 'ready' || this.isFaultOn('health-never-ok', role)) return 'starting';
    return 'ok';
  }

  private routerHealthCheck(r: RouterProcess): void {
    const target = routerTarget(this.routerEra, 'core::worker');
    for (const w of r.workers) {
      const h = this.serverHealth(w.role);
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
          this.log('router', rust(this.t * 1000, 'INFO', target, `Worker ${w.url} (${w.role}) is healthy`));
          if (r.workers.every((x) => x.health === 'healthy'))
            this.log(
              'router',
              rust(
                this.t * 1000,
                'INFO',
                routerTarget(this.routerEra, 'server'),
                `All 2 workers are healthy`,
              ),
            );
        }
        continue;
      }
      if (ok) {
        w.consecutiveFailures = 0;
        w.consecutiveSuccesses++;
        if (w.health === 'unhealthy') {
          if (this.isFaultOn('router-never-readds', w.role)) w.stuck = true;
          if (!w.stuck && w.consecutiveSuccesses >= ROUTER_HEALTH_SUCCESS_THRESHOLD) {
            w.health = 'healthy';
            w.cbState = 0;
            w.cbConsecutiveFailures = 0;
            this.log(
              'router',
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
            'router',
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
            if (this.isFaultOn('router-never-readds', w.role)) w.stuck = true;
            this.log(
              'router',
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

  private bootStart(at: number): void {
    this.t = at;
    this.spawn(this.unitMap.prefill, 'boot');
    this.spawn(this.unitMap.decode, 'boot');
    // The router is ordered After= both servers: it starts once their start jobs finished (they are active).
    const waitForServers = (): void => {
      const ready = (['prefill', 'decode'] as const).every(
        (r) => this.unitMap[r].activeState !== 'activating',
      );
      if (ready) {
        if (this.unitMap.router.activeState === 'inactive') this.spawn(this.unitMap.router, 'boot');
      } else this.schedule(this.t + 1000, waitForServers);
    };
    this.schedule(this.t + 1000, waitForServers);
  }

  /** Reboots the host: every process dies, SSH drops and refuses connections for `downForMs`, units start at boot. */
  reboot(downForMs = 45_000): void {
    this.advance();
    for (const role of DEMO_ROLES) {
      const u = this.unitMap[role];
      if (u.activeState === 'inactive' || u.activeState === 'failed') continue;
      u.gen++;
      this.systemdLog(role, systemdText.stopping(u.def.name, u.def.description));
      this.closeProcessPorts(u);
      this.processExited(u, { code: 1, status: 0 });
      this.setState(u, 'inactive', 'dead');
      this.systemdLog(role, systemdText.stopped(u.def.name, u.def.description));
      u.server = null;
      u.router = null;
    }
    this.events = this.events.filter(() => false);
    this.downUntil = this.t + downForMs;
    this.network.emit('event', { type: 'down', forMs: downForMs } satisfies NetworkEvent);
    const bootAt = this.downUntil;
    this.schedule(bootAt, () => {
      this._bootId = this.rng.hex(16);
      this._bootedAt = this.t - 12_000;
      for (const role of DEMO_ROLES) {
        const u = this.unitMap[role];
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
      this.bootStart(this.t);
    });
  }

  /** Every SSH connection is cut (as by a network blip); new connections are accepted at once. */
  dropConnections(): void {
    this.network.emit('event', { type: 'drop-connections' } satisfies NetworkEvent);
  }

  onNetwork(fn: (e: NetworkEvent) => void): () => void {
    this.network.on('event', fn);
    return () => this.network.off('event', fn);
  }

  get isDown(): boolean {
    return this.clock.now() < this.downUntil;
  }

  /** Is something listening on this loopback port of the host right now? */
  portOpen(port: number): boolean {
    this.advance();
    if (this.isDown) return false;
    if (port === PORTS.prefill || port === PORTS.decode) {
      const p = this.unitMap[port === PORTS.prefill ? 'prefill' : 'decode'].server;
      return !!p && p.stage !== 'loading';
    }
    if (port === PORTS.routerApi || port === PORTS.routerMetrics)
      return !!this.unitMap.router.router?.listening;
    return false;
  }

  // ---------------------------------------------------------------- inspection

  kvTruth(role: ServerRole): KvTruth | null {
    this.advance();
    const p = this.unitMap[role].server;
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

  gpus(): GpuReading[] {
    this.advance();
    const out: GpuReading[] = [];
    for (let i = 0; i < GPU_COUNT; i++) {
      const role: ServerRole = i < 4 ? 'prefill' : 'decode';
      const p = this.unitMap[role].server;
      const n = (salt: number, scale: number): number =>
        valueNoise(this.seed ^ (i * 31 + salt), this.t / scale);
      let util = 0;
      let mem = 4;
      if (p && !this.isDown) {
        mem = p.gpuMemMiB + Math.round(40 * n(1, 20_000));
        if (p.stage === 'ready') {
          const load =
            role === 'decode'
              ? Math.min(1, p.runningReqs / 70)
              : Math.min(1, p.inputThroughput / 52_000 + (p.bootstrapQueue > 0 ? 0.1 : 0));
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
        uuid: `GPU-${this.uuidFor(i)}`,
        busId: `00000000:${['18', '2A', '3A', '5D', '9A', 'AB', 'BA', 'DB'][i]}:00.0`,
        utilization: util,
        memoryUsedMiB: Math.max(0, mem),
        memoryTotalMiB: 81_559,
        temperature: temp,
        powerDraw: Math.round(power * 100) / 100,
        powerLimit: 700,
        pstate: util > 0 || mem > 1000 ? 'P0' : 'P8',
        pids: p ? [p.pid] : [],
      });
    }
    return out;
  }

  private uuidFor(i: number): string {
    const h = (n: number): string =>
      hash32(this.seed * 13 + i * 977 + n)
        .toString(16)
        .padStart(8, '0');
    const a = h(1) + h(2) + h(3) + h(4);
    return `${a.slice(0, 8)}-${a.slice(8, 12)}-${a.slice(12, 16)}-${a.slice(16, 20)}-${a.slice(20, 32)}`;
  }

  memoryCurrentBytes(role: DemoRole): number | null {
    const u = this.unitMap[role];
    if (u.router) return Math.round((180 + 20 * valueNoise(this.seed, this.t / 30_000)) * 1024 * 1024);
    if (!u.server) return null;
    const base = u.peakMemGiB > 0 ? Math.min(u.peakMemGiB, 23.6) : 1.2;
    return Math.round((base + 0.3 * valueNoise(this.seed ^ 5, this.t / 30_000)) * 1024 ** 3);
  }

  offeredRate(): number {
    return this.load.rate(this.t);
  }

  snapshot(): DemoSnapshot {
    this.advance();
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
      bootId: this._bootId,
      bootedAt: this._bootedAt,
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
