// Contract part: restarting prefill, decode and router (one service, or the PD stack in order), guarded and
// observable. A restart is an operation with an id; its progress is pushed as `restartProgress` snapshots and
// can be fetched again with `getRestart`, so a reloaded UI picks up where it left off.
import type { Role } from '../domain';

export const RESTART_TARGETS = ['prefill', 'decode', 'router', 'stack'] as const;
export type RestartTarget = (typeof RESTART_TARGETS)[number];

/** The steps of one service's restart, in order. `readd` follows `health` only when the worker was drained. */
export const RESTART_STEP_KINDS = ['drain', 'command', 'active', 'health', 'readd', 'router'] as const;
export type RestartStepKind = (typeof RESTART_STEP_KINDS)[number];

export type RestartStepState =
  'pending' | 'running' | 'succeeded' | 'failed' | 'skipped' | 'cancelled' | 'unknown';

/**
 * How an operation ended. `unknown` means the SSH link was down when a deadline passed: nothing was observed,
 * so neither success nor failure is claimed.
 */
export type RestartState = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'unknown';

/** Per-step limits, each measured from the start of its step. */
export interface RestartTimeouts {
  /** Drain: waiting for the worker's running requests to reach 0 before restarting anyway. */
  drainMs: number;
  /** From the restart command until systemd reports the unit active (a new invocation). */
  activeMs: number;
  /** From active until the service's health endpoint answers 200 (model loading happens here or before). */
  healthMs: number;
  /** From healthy until the router reports the worker healthy again (or, for the router, /readiness 200). */
  routerMs: number;
}

export type StackOrder = 'parallel' | 'prefill-first' | 'decode-first';

export interface RestartSettings {
  /** Hides every action in the UI; the core refuses restarts too. */
  readOnly: boolean;
  /** True when the shell locked read-only on (e.g. a --read-only flag): it cannot be switched off from a client. */
  readOnlyLocked: boolean;
  /** polkit lets the SSH user manage these units: run plain `systemctl` instead of `sudo -n systemctl`. */
  polkit: boolean;
  /** How a stack restart restarts prefill and decode; the router always follows once both are healthy. */
  stackOrder: StackOrder;
  /** Restart the router at the end of a stack restart. */
  stackIncludesRouter: boolean;
  /** Limits for prefill/decode (model loading is slow) and for the router. */
  timeouts: { server: RestartTimeouts; router: RestartTimeouts };
}

export interface RestartSettingsPatch {
  readOnly?: boolean;
  polkit?: boolean;
  stackOrder?: StackOrder;
  stackIncludesRouter?: boolean;
  timeouts?: { server?: Partial<RestartTimeouts>; router?: Partial<RestartTimeouts> };
}

export interface RestartPlanArgs {
  deploymentId: string;
  target: RestartTarget;
  /** Ask for a plan that drains workers first (ignored where the router cannot drain). */
  drain?: boolean;
}

export interface StartRestartArgs extends RestartPlanArgs {
  /** Who asked, for the record; the core fills in the OS user name when absent. */
  requestedBy?: string;
}

export interface RestartOperationRef {
  operationId: string;
}

/** What restarting one service will stop, read from the latest observation before the plan. */
export interface RestartImpact {
  /** Requests the worker is running now (sglang:num_running_reqs); null when not exposed. */
  runningOnWorker: number | null;
  /** Requests waiting on the worker (queue + PD bootstrap/prealloc/transfer queues); null when not exposed. */
  queuedOnWorker: number | null;
  /** Requests the router has in flight to this worker (smg_worker_requests_active); null when unknown. */
  inFlightAtRouter: number | null;
  /** When the figures were read (ms); null when there was no scrape yet. */
  observedAt: number | null;
  /** Why a figure is missing or how to read it. */
  notes: string[];
}

export interface DrainSupport {
  supported: boolean;
  /** What drain does here, or why it is not available ("drain not supported by this router version …"). */
  detail: string;
}

export interface PlannedService {
  role: Role;
  unit: string;
  hostId: string;
  hostLabel: string;
  /** The exact command line sent over SSH. */
  command: string;
  privilege: 'root' | 'sudo' | 'polkit';
  activeState: string | null;
  subState: string | null;
  /** When the unit last became active (its last start or restart), ms; null when unknown. */
  lastRestartAt: number | null;
  nRestarts: number | null;
  impact: RestartImpact;
  drain: DrainSupport;
  timeouts: RestartTimeouts;
  steps: Array<{ kind: RestartStepKind; label: string }>;
}

export interface RestartPlan {
  deploymentId: string;
  target: RestartTarget;
  hostLabel: string;
  /** The SSH user as the host sees it (from `id -un` / `id -u`), null when not checked yet. */
  connectedAs: { user: string; uid: number } | null;
  /** Services in the order they will restart: each inner list runs together, the next waits for its health. */
  stages: Role[][];
  services: PlannedService[];
  /** Everything the router has in flight now (all workers); null when unknown. */
  routerInFlight: number | null;
  drainRequested: boolean;
  /** True when every service in the plan can be drained. */
  drainAvailable: boolean;
  /** The sudoers line that allows exactly these restarts without a password. */
  sudoersLine: string;
  warnings: string[];
  /** Set when starting would be refused (disconnected, read-only). */
  blockedReason?: string;
  /** A restart already covering one of these services: starting the same target joins it. */
  running?: { operationId: string; target: RestartTarget };
  plannedAt: number;
}

export interface JournalLine {
  ts: number;
  text: string;
  priority?: number;
}

/** Loading progress as far as the service's log reveals it. */
export interface LoadProgress {
  phase: 'starting' | 'weights' | 'kv-cache' | 'cuda-graph' | 'warmup' | 'ready';
  /** Weight shards or CUDA graph batches done / total, when the log says. */
  done?: number;
  total?: number;
  /** 0..1 within the phase; null when the log gives no figure. */
  fraction: number | null;
  /** The log line it was read from. */
  text: string;
  /** In words: "loading weights: shard 9/17 (53 %)". */
  label: string;
}

export interface RestartStepView {
  kind: RestartStepKind;
  label: string;
  state: RestartStepState;
  startedAt?: number;
  endedAt?: number;
  /** When this step gives up. */
  deadlineAt?: number;
  /** What is happening or what was seen ("activating/start-post", "503 while loading", "2 running"). */
  detail?: string;
}

export interface ServiceRestartView {
  role: Role;
  unit: string;
  state: RestartStepState;
  steps: RestartStepView[];
  /** The unit's journal since the restart began (the last lines only). */
  journal: JournalLine[];
  progress?: LoadProgress;
  /**
   * How long the unit's last complete load took (its journal: systemd's "Started" to "The server is fired up"), for
   * a progress read from time where the log gives no figure (a bar without a newline in its format reaches
   * journald as one entry only once it ends, as the CUDA-graph capture bar does).
   */
  lastLoadMs?: number;
  /** Last systemd state seen: "activating/start-post", "failed (Result=exit-code)". */
  unitState?: string;
  startedAt?: number;
  endedAt?: number;
}

export interface RestartFailure {
  role?: Role;
  step: RestartStepKind | 'start';
  message: string;
  /** What the operator can do next. */
  hint?: string;
  /** systemd's Result= of the unit, when it failed. */
  result?: string;
  journalTail?: string[];
  /** For sudo failures: the line that would allow these restarts. */
  sudoersLine?: string;
}

export interface RestartOperation {
  id: string;
  deploymentId: string;
  hostLabel: string;
  target: RestartTarget;
  requestedBy: string;
  drain: boolean;
  state: RestartState;
  startedAt: number;
  endedAt?: number;
  /** Time since start (or total time once ended), ms, on the deployment's clock. */
  elapsedMs: number;
  stages: Role[][];
  services: ServiceRestartView[];
  cancelRequested: boolean;
  /** The SSH link as the operation last saw it. */
  link: 'up' | 'down';
  /** One line for a status bar: "decode: loading weights 9/17 (4 min 10 s)". */
  summary: string;
  failure?: RestartFailure;
}

export interface StartRestartResult {
  operation: RestartOperation;
  /** True when a restart of the same target was already running and this call joined it. */
  joined: boolean;
}

export interface RestartRequests {
  planRestart(args: RestartPlanArgs): Promise<RestartPlan>;
  startRestart(args: StartRestartArgs): Promise<StartRestartResult>;
  getRestart(args: RestartOperationRef): Promise<RestartOperation>;
  /** Running restarts first, then the most recent finished ones. */
  listRestarts(args: { deploymentId: string }): Promise<RestartOperation[]>;
  /** Stops before the next step that would act on the host; waits in progress end as `cancelled`. */
  cancelRestart(args: RestartOperationRef): Promise<RestartOperation>;
  getRestartSettings(args: Record<string, never>): Promise<RestartSettings>;
  setRestartSettings(args: RestartSettingsPatch): Promise<RestartSettings>;
}

export const RESTART_REQUESTS = [
  'planRestart',
  'startRestart',
  'getRestart',
  'listRestarts',
  'cancelRestart',
  'getRestartSettings',
  'setRestartSettings',
] as const satisfies readonly (keyof RestartRequests)[];

export interface RestartEvents {
  restartProgress: RestartOperation;
  restartSettings: RestartSettings;
}

export const RESTART_EVENTS = [
  'restartProgress',
  'restartSettings',
] as const satisfies readonly (keyof RestartEvents)[];

// ---- Rolling restarts over many workers ----------------------------------------------------------------
// A layer above the one-service restart: a worker is one SGLang server (one or more units, one per node of a
// multi-node worker), identified by its URL as the router knows it. A roll restarts one worker, every worker
// of a role one at a time, or the whole deployment in a safe order.

/** One systemd unit of a worker, on one host. */
export interface RollUnit {
  hostId: string;
  /** The alias or user@host:port, as every message names the host. */
  hostLabel: string;
  unit: string;
  /** 0 for a single-node worker; a multi-node worker's node ranks are 0..nnodes-1 (rank 0 serves HTTP). */
  nodeRank: number;
  /** GPU indices the unit uses on its host. */
  gpus: number[];
}

/** What the roll needs to know about one worker of a deployment. */
export interface RollWorker {
  /** The worker's URL as the router knows it (for a router: its API URL). */
  id: string;
  /**
   * Every URL the router lists this server under, when it is more than `id`: a DP-aware server is listed once
   * per data-parallel rank (`{base}@{rank}`) and is healthy only when every rank is.
   */
  routerUrls?: string[];
  /** Short name for messages: "decode-2". */
  name: string;
  role: Role;
  /** Base URL of its HTTP API as seen from its rank-0 host. */
  apiUrl: string;
  healthUrl?: string;
  metricsUrl?: string;
  /** The PD bootstrap port a prefill worker binds on its rank-0 host. */
  bootstrapPort?: number;
  units: RollUnit[];
}

export type RollTarget =
  | { kind: 'worker'; /** The worker's URL, or one of its units' names. */ worker: string }
  | { kind: 'role'; role: Role }
  | { kind: 'deployment' };

/** The router's opinion of a worker right now (GET /workers, worker health metrics). */
export interface RollHealth {
  state: 'healthy' | 'unhealthy' | 'unknown';
  detail: string;
}

/**
 * `gpu-owners` runs on the running worker, before anything is stopped: the compute processes on its GPUs must all
 * be its own units' (MainPID and descendants), or stopping it would free nothing. `drain` and `readd` surround a
 * worker's restart where the router can drain it: out of the pool first, back in once it serves again.
 */
export const ROLL_STEP_KINDS = [
  'drain',
  'gpu-owners',
  'stop',
  'gpus-free',
  'port-free',
  'start',
  'readd',
  'router',
] as const;
export type RollStepKind = (typeof ROLL_STEP_KINDS)[number];

export interface RollStepPlan {
  kind: RollStepKind;
  label: string;
  hostId?: string;
  hostLabel?: string;
  unit?: string;
  /** The exact command sent over SSH, where the step sends one. */
  command?: string;
  /** The port that must be free (port-free) or the GPU indices checked (gpu-owners, gpus-free). */
  port?: number;
  gpus?: number[];
}

export interface RollWorkerPlan {
  workerId: string;
  name: string;
  role: Role;
  /** What the router says about the worker while planning. */
  healthNow: RollHealth;
  /** What restarting it cuts off, from the monitor's latest scrapes of it and of the router. */
  impact?: RestartImpact;
  steps: RollStepPlan[];
}

export interface RollCheck {
  /** What is checked: "router keeps a healthy decode worker while decode-0 is down". */
  name: string;
  ok: boolean;
  detail: string;
  /**
   * The check could not be read (ok is false): the roll starts only when the operator chooses to go without it
   * (StartRollArgs.withoutGpuCheck, `--without-gpu-check`).
   */
  unreadable?: boolean;
}

export interface RollPlan {
  target: RollTarget;
  /** In words: "every decode worker, one at a time (3)". */
  targetText: string;
  /** Workers in the order they restart. */
  workers: RollWorkerPlan[];
  /**
   * Worker ids restarted together, stage by stage (a one-host pair's prefill and decode, then its router); a
   * stage starts once every worker of the one before came back. Absent: one worker at a time, in `workers` order.
   */
  stages?: string[][];
  checks: RollCheck[];
  warnings: string[];
  /** Set when the roll would be refused: starting it is not allowed. */
  refused?: string;
  /** What to do about the refusal. */
  refusedHint?: string;
}

export type RollState = 'running' | 'paused' | 'succeeded' | 'failed' | 'cancelled' | 'unknown';

export interface RollStepView extends RollStepPlan {
  state: RestartStepState;
  startedAt?: number;
  endedAt?: number;
  detail?: string;
}

export interface RollWorkerView {
  workerId: string;
  name: string;
  role: Role;
  state: RestartStepState;
  steps: RollStepView[];
  /** The one-service restart that started and followed the worker's rank-0 unit, when it ran. */
  follow?: RestartOperation;
}

export interface RollFailure {
  workerId: string;
  worker: string;
  step: RollStepKind | 'preflight' | 'internal';
  message: string;
  hint?: string;
  /** Workers of the deployment the router reported healthy when the roll stopped. */
  stillServing: string[];
  journalTail?: string[];
}

export interface RollOperation {
  id: string;
  target: RollTarget;
  targetText: string;
  state: RollState;
  startedAt: number;
  endedAt?: number;
  /** Time since start (or total time once ended), ms, on the deployment's clock. */
  elapsedMs: number;
  workers: RollWorkerView[];
  /** The worker being restarted now. */
  current?: string;
  /** Set while the roll waits for a host link to come back. */
  paused?: { hostLabel: string; since: number; reason: string };
  cancelRequested: boolean;
  failure?: RollFailure;
  summary: string;
}
