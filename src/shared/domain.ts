// Domain types shared by the core, every transport and the renderer.
// Plain data only (structured-clone and JSON safe): no classes, no Dates, no Maps.
// Times are Unix epoch milliseconds unless a name says otherwise.
import type { Fleet } from './fleet';

export const ROLES = ['prefill', 'decode', 'router'] as const;
export type Role = (typeof ROLES)[number];

/** How the app reaches a host. `demo` is the embedded simulated GPU host (still reached over real SSH). */
export interface HostConfig {
  id: string;
  label: string;
  kind: 'demo' | 'ssh';
  /** A Host alias from ~/.ssh/config; resolved like `ssh alias` would. */
  alias?: string;
  hostname?: string;
  port?: number;
  user?: string;
  identityFile?: string;
}

export interface ServiceConfig {
  role: Role;
  /**
   * Unique within the deployment, and the scope of its series keys (signals/scoped-key.ts): the worker's name
   * (`decode-0`, `decode-1`) or the router's (`router`, `router-1`), given by discovery to every service of every
   * deployment, a 1P1D host's included. Optional only because recordings of older minors lack it (they are
   * resaved); read it with `serviceId()`.
   */
  id?: string;
  /** The worker's URL exactly as the router lists it (fleets; DP-aware `{base}@{rank}` included). */
  workerUrl?: string;
  /** Every unit of a multi-node worker, node rank 0 first serves HTTP (`unit`/`hostId` are rank 0's). */
  units?: { hostId: string; unit: string; nodeRank: number }[];
  hostId: string;
  /** systemd unit, e.g. sglang-decode.service */
  unit: string;
  /** Base URL of the HTTP API as seen from the host, e.g. http://127.0.0.1:30200 */
  apiUrl: string;
  /** Prometheus endpoint as seen from the host; absent when metrics are known to be disabled. */
  metricsUrl?: string;
  /** Health endpoint; for the router this is /readiness-aware via apiUrl. */
  healthUrl?: string;
  /** GPU indices this service runs on (from CUDA_VISIBLE_DEVICES / --base-gpu-id / --tp-size). */
  gpus?: number[];
}

export interface DeploymentConfig {
  id: string;
  name: string;
  services: ServiceConfig[];
}

/** The link to a host. Never optimistic: `connected` only while keepalives and commands succeed. */
export type ConnectionStatus =
  | { state: 'idle' }
  /** `lostSince`: set on a retry after the link was lost — when it was (the outage goes on while it connects). */
  | { state: 'connecting'; since: number; attempt: number; lostSince?: number }
  | { state: 'connected'; since: number }
  | { state: 'stale'; since: number; reason: string }
  | { state: 'reconnecting'; attempt: number; nextAttemptAt: number; lastError: string; since: number }
  | { state: 'failed'; reason: string; at: number; hint?: string };

/** What the unit's journal said, kept by the core from the lines it reads anyway. */
export interface UnitJournalEvidence {
  /** systemd's last "Main process exited, code=…, status=…" about the unit. */
  lastExit?: { ts: number; code: 'exited' | 'killed' | 'dumped'; status: string; text: string };
  /** The last error the unit printed: a traceback's final line, "CUDA error…", "Killed", an OOM. */
  lastError?: { ts: number; text: string };
  /** When systemd last started it ("Started …"). */
  startedAt?: number;
  /** When the server last said it was ready ("The server is fired up and ready to roll!"). */
  readyAt?: number;
  /** Its previous complete loads, start to ready, newest first. */
  loadsMs: number[];
  /** When systemd last refused to start it for its start limit ("Start request repeated too quickly."). */
  startLimitAt?: number;
  /** Why the unit's journal could not be read (then nothing above is known from it). */
  unreadable?: string;
}

export interface UnitState {
  unit: string;
  loadState: string;
  activeState: string;
  subState: string;
  mainPid: number;
  nRestarts: number;
  /** When the unit last entered the active state (ms), or null if never. */
  activeEnterTimestamp: number | null;
  result: string;
  execStart?: string;
  memoryCurrentBytes?: number | null;
  description?: string;
  /** How the main process last ended: 0 still running or never ran, 1 exited, 2 killed, 3 dumped core. */
  execMainCode?: number;
  /** Its exit status (code 1) or signal number (codes 2, 3). */
  execMainStatus?: number;
  /** Restart= of the unit (no, on-failure, always, …). */
  restartPolicy?: string;
  /** When the unit last changed state (ms), or null. */
  stateChangeTimestamp?: number | null;
  /** When the current (or last) main process started (ms), or null. */
  execMainStartTimestamp?: number | null;
  /** When the unit last left the active state (ms), or null. */
  inactiveEnterTimestamp?: number | null;
}

export interface HealthResult {
  ok: boolean;
  status?: number;
  /** Short human text: "200 OK", "503 while loading", "connection refused". */
  detail: string;
  checkedAt: number;
  /**
   * The unit's MainPID this answer belongs to, when the monitor knows it: whether the process running now has
   * answered is then told by its pid, not by comparing this console's clock with the host's.
   */
  mainPid?: number;
}

export type KvSource = 'kv_tokens' | 'full_token_usage' | 'num_used_tokens' | 'token_usage' | 'none';

export interface KvUsage {
  usedTokens: number;
  capacityTokens: number;
  /** used / capacity, 0..1 (summed over dp ranks, so it always agrees with the token counts) */
  ratio: number;
  /** Each dp rank's own pool, sorted by rank; present only with 2 or more dp ranks. */
  ranks?: { rank: string; used: number; capacity: number; ratio: number }[];
  /** The rank with the highest ratio (it refuses requests first); present with `ranks`. */
  fullestRank?: { rank: string; ratio: number };
  evictableTokens?: number;
  availableTokens?: number;
  source: KvSource;
  /** Which metric names the figure came from, for the UI's "source" line. */
  sourceMetrics: string[];
  caveat?: string;
}

export type MetricsStatus =
  | { ok: true; scrapedAt: number; durationMs: number; families: number; samples: number }
  | {
      ok: false;
      at: number;
      error: string;
      hint?: string;
      /** The last successful scrape (a poll's time), when one was made: how old the figures shown are. */
      lastOkAt?: number;
    }
  | { ok: false; at: number; disabled: true; error: string; hint?: string };

/** What one poll saw for one service. */
export interface ServiceObservation {
  role: Role;
  /** The service's `id` when its config has one (fleets); see `serviceId()`. */
  id?: string;
  /** The host it was observed on (fleets: every service may be on another host than the observation's). */
  hostId?: string;
  unit: string;
  systemd?: UnitState;
  systemdError?: string;
  health?: HealthResult;
  metrics?: MetricsStatus;
  kv?: KvUsage;
  /** Why there is no KV figure although metrics were scraped (an older server version, a missing gauge). */
  kvMissing?: { reason: string; expected: string[] };
  /** What the unit's journal says: its last exit and error, its loads (shared/unit-condition.ts reads it). */
  evidence?: UnitJournalEvidence;
  /**
   * A multi-node worker's every unit with its systemd state, node rank 0 first (fleets only; `systemd` above is
   * rank 0's). A rank ≥ 1 unit serves no HTTP, so systemd is all there is to read of it.
   */
  units?: { hostId: string; unit: string; nodeRank: number; systemd?: UnitState; systemdError?: string }[];
  /**
   * Present when this reading's systemd state could not be made (no link, systemctl unanswered, the host
   * unreachable): the last reading that was, and when. It says what the service did then, not what it does now.
   */
  lastSeen?: ServiceLastSeen;
  /**
   * Fleets only: the ts of the host poll this service was read in (its scrape's). A fleet's observation merges
   * several hosts' polls under the newest one's ts; a worker's own values belong at its own poll's.
   */
  polledAt?: number;
}

/** A service's last reading whose systemd state was read: its state, /health and journal evidence then. */
export interface ServiceLastSeen {
  ts: number;
  systemd: UnitState;
  health?: HealthResult;
  evidence?: UnitJournalEvidence;
}

export interface Observation {
  deploymentId: string;
  hostId: string;
  ts: number;
  services: ServiceObservation[];
}

export type AppEventKind =
  'connection' | 'state-change' | 'health' | 'alert' | 'action' | 'restart-step' | 'annotation' | 'info';

export interface AppEvent {
  id: string;
  ts: number;
  kind: AppEventKind;
  severity: 'info' | 'warning' | 'error';
  deploymentId?: string;
  hostId?: string;
  role?: Role;
  /** The fleet worker it is about (its service id, `decode-3`); absent for a one-host pair's role-named events. */
  worker?: string;
  title: string;
  detail?: string;
  /** An alert's change (kind 'alert'): which alert, what happened to it, and whether it is worth a notification. */
  alert?: AlertEventInfo;
}

/**
 * What an alert event says about its alert. `key` is the alert's identity (ActiveAlert.key), so a review and the
 * charts pair an alert's start with its end whatever its text became in between. `notify` is false for what
 * needs no one's attention: an alert expected during a restart by this console, its end, a change of its workers.
 */
export interface AlertEventInfo {
  key: string;
  ruleId: string;
  /** fired: it began (or, after a quiet start, fires normally); resolved: fresh data showed it clear; ended: its
   * rule was switched off or deleted; updated: the workers it is about changed. */
  change: 'fired' | 'resolved' | 'ended' | 'updated';
  notify: boolean;
  /** The restart by this console that made it expected (a quiet start): "restart of decode by alice (…)". */
  expected?: string;
}

export interface DeploymentSummary {
  deployment: DeploymentConfig;
  /** The host the deployment was opened from (a fleet's origin). */
  host: HostConfig;
  connection: ConnectionStatus;
  /** A fleet's every host with its own link state, origin first; absent for a one-host deployment. */
  hosts?: { host: HostConfig; connection: ConnectionStatus }[];
  /** What fleet discovery found (routers' lists, unplaced workers with their fix, unrouted units); fleets only. */
  fleet?: Fleet;
  latest?: Observation;
  /** Set when this is a recorded session opened for review: read-only, replayed from a file. */
  review?: ReviewSource;
}

/** Where a review deployment comes from and the span it covers. */
export interface ReviewSource {
  /** Session id in the recordings folder; null for a file opened from elsewhere. */
  sessionId: string | null;
  path: string;
  name: string;
  /** The host the session was recorded on. */
  recordedHost: { id: string; label: string; kind: string; hostname?: string };
  startedAt: number;
  /** First and last recorded time (epoch ms). */
  firstTs: number;
  lastTs: number;
  /** The review cursor when the summary was made. */
  cursor: number;
  /** False when the app was killed or crashed while recording (the end may be missing). */
  closedCleanly: boolean;
  /** What could not be read, in words (damaged, truncated, newer minor version…). */
  warnings: string[];
  /**
   * Computed from the recording now, read from the review cache made at an earlier open, or drawn from the
   * recording's overview (format 1.2) while the full detail is read in the background.
   */
  loadedFrom: 'recording' | 'cache' | 'overview';
  /** How long opening took in the core (ms). */
  openMs: number;
}

/** A service's identity within its deployment: its id, else (a service of an older recording) its role. */
export function serviceId(s: { id?: string; role: Role }): string {
  return s.id ?? s.role;
}
