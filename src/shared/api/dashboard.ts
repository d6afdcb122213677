// Contract part: the operator's dashboard — signal history, the PD pipeline verdict, GPUs, alerts, the
// journal of each service, and (demo only) fault injection.
import type { Role } from '../domain';
import type { DemoFaultName, DemoFaultState } from '../demo-faults';
import type { ScopedKey } from '../signals/scoped-key';
import type { SignalUnit } from '../signals/spec';

export type { SignalUnit } from '../signals/spec';

export interface SignalInfo {
  /** Stable key: `<role>.<signal>` (e.g. decode.kv_ratio) or `gpu.<index>.<field>`. */
  key: string;
  label: string;
  unit: SignalUnit;
  /** The metric(s) or command the figure comes from, as the operator would look it up. */
  source: string;
  /** A known way the figure misleads. */
  caveat?: string;
}

/** Why a signal has no data: which metric names were expected and why they may be absent. */
export interface SignalMissing {
  expected: string[];
  why: string;
}

export interface SeriesQuery {
  deploymentId: string;
  /** Signal keys, each optionally scoped to a fleet's worker or host (`decode.kv_ratio@decode-1`). */
  keys: ScopedKey[];
  fromMs?: number;
  toMs?: number;
  /** Decimate (min-max per time bucket, so spikes survive) to about this many points per key. */
  maxPoints: number;
}

/** One chart's part of a page's history request: its keys, decimated for its own width. */
export interface SeriesGroup {
  keys: ScopedKey[];
  maxPoints: number;
}

/** Every chart of a page on one window, asked at once (one round trip instead of one per chart). */
export interface SeriesBatchQuery {
  deploymentId: string;
  fromMs?: number;
  toMs?: number;
  groups: SeriesGroup[];
}

export interface SeriesBatchResult {
  /** One per group, in the order asked, each as getSeries would answer that group alone. */
  results: SeriesResult[];
}

export interface SeriesColumn {
  key: string;
  /** Epoch ms, ascending. */
  t: number[];
  /** null = gap (service down, scrape failed, metric absent at that time). */
  v: (number | null)[];
}

export interface SeriesResult {
  series: SeriesColumn[];
  /** Range actually covered by the stored history (null when empty). */
  firstMs: number | null;
  lastMs: number | null;
  /** Stored points in the asked range across all keys, before decimation. */
  rawPoints: number;
  decimated: boolean;
  /** Keys this deployment never reported, with the metric names that would provide them. */
  missing: Record<string, SignalMissing>;
}

export type VerdictKind =
  | 'healthy'
  | 'prefill-bound'
  | 'decode-bound'
  | 'transfer-bound'
  | 'router-bound'
  | 'service-down'
  /** A component came back (or the link did) within the last rate window; figures since then are read. */
  | 'recovering'
  /** What is wrong is a restart or roll this console runs. */
  | 'restarting'
  /** A host's SSH link is down: nothing that needs its data is asserted. */
  | 'unreachable'
  | 'idle'
  | 'unknown';

export interface Verdict {
  kind: VerdictKind;
  /** One plain sentence: where requests pile up. */
  headline: string;
  /** The figures that led to it, most telling first. */
  evidence: string[];
  /** What the operator can do next ("open the journal at the crash; …", "nothing to do"). */
  nextStep: string;
}

export interface KvDetail {
  role: Role;
  usedTokens: number | null;
  evictableTokens: number | null;
  freeTokens: number | null;
  capacityTokens: number | null;
  ratio: number | null;
  /** The fullest dp rank's own ratio (what the KV alert watches); equals `ratio` with one rank. */
  fullestRankRatio?: number | null;
  /** Seconds until the pool is full at the recent slope; null when flat, falling or unknown. */
  timeToFullS: number | null;
  source: string;
  sourceMetrics: string[];
  caveat?: string;
}

export interface GpuReading {
  index: number;
  name?: string;
  utilPct: number | null;
  memUsedMiB: number | null;
  memTotalMiB: number | null;
  tempC: number | null;
  powerW: number | null;
  powerLimitW?: number | null;
}

export interface GpuStatus {
  ts: number | null;
  gpus: GpuReading[];
  /** Why there are no readings (nvidia-smi missing, failed, timed out), with what to do. */
  error?: string;
  hint?: string;
}

/**
 * One alert as the operator sees it: a rule's firing (or pending) instances of one role, or of one host for a
 * lost link, grouped into one entry that names its workers (src/main/core/alerts/engine.ts has the states).
 */
export interface ActiveAlert {
  /** Its identity across polls, edits of its rule and changes of its text: `<rule id>|<role>` or `<rule id>|host:<id>`. */
  key: string;
  ruleId: string;
  role?: Role;
  /** The host a lost link's alert is about (its id). */
  host?: string;
  severity: 'warning' | 'error';
  title: string;
  detail: string;
  /** Firing: when it fired. Pending: when its condition began to hold. */
  since: number;
  /** Pending only: when it fires if the condition still holds then. */
  firesAt?: number;
  /** The fleet workers it is about (their service ids). */
  workers?: string[];
  /**
   * No fresh data since `since` (the host is unreachable, /metrics fails): the alert stays as last known, neither
   * resolved nor confirmed.
   */
  noData?: { since: number; reason: string };
  /** A restart this console runs covers it ("restart of decode by alice, operation r-…"): not notified. */
  expected?: string;
}

export interface DashboardSnapshot {
  deploymentId: string;
  ts: number;
  /** Latest value of every signal key (null = exposed but no value right now). */
  values: Record<string, number | null>;
  kv: KvDetail[];
  verdict: Verdict;
  /** Each host's latest nvidia-smi reading, or why there is none, by host id (hosts not read yet: absent). */
  gpu: Record<string, GpuStatus>;
  /** Firing alerts (those expected during a restart by this console and those without fresh data included). */
  alerts: ActiveAlert[];
  /** Alerts whose condition holds but not yet for their rule's hold time; absent when none. */
  pendingAlerts?: ActiveAlert[];
  /** Signals this deployment's servers do not expose, with the names expected. */
  notExposed: Record<string, SignalMissing>;
  /**
   * Per scraped service (its `serviceId`: a fleet's workers each their own, as their versions may differ), its
   * latest successful scrape's families by class; absent before the first scrape.
   */
  families?: Record<string, ScrapeFamilies>;
  /** The workers the router's latest scrape reports, with health and circuit breaker; absent without one. */
  routerWorkers?: RouterWorkerState[];
}

/** One worker as the router's metrics describe it (smg_worker_* / sgl_router_worker_health, cb_state). */
export interface RouterWorkerState {
  /** Normalised worker URL (lower-case scheme/host, no trailing slash), as the router names it. */
  url: string;
  /** prefill | decode | regular | encode, when the router says so. */
  role?: string;
  /** null when nothing reports this worker's health. */
  healthy: boolean | null;
  /** The router dropped the worker (health or circuit-breaker gauge −1). */
  removed?: boolean;
  activeRequests?: number;
  cbState?: 'closed' | 'open' | 'half_open' | 'removed';
}

/**
 * A scrape's metric families as src/shared/signals/family-classes.ts sorts them: counted, except the ones no
 * supported era lists ("not understood by this PD Console version"), which the operator may want to look up.
 */
export interface ScrapeFamilies {
  used: number;
  knownNotUsed: number;
  otherExporters: number;
  /** Sorted names. */
  unknown: string[];
}

/** One configurable alert rule; thresholds are in the units named by the field. */
export interface AlertRule {
  id: string;
  kind:
    | 'kv-high'
    | 'service-inactive'
    | 'health-failing'
    | 'restart-loop'
    | 'metrics-stale'
    | 'transfer-failures'
    | 'queue-growing';
  enabled: boolean;
  /** Roles it watches; empty = every role it applies to. */
  roles: Role[];
  severity: 'warning' | 'error';
  /** kv-high: ratio 0..1; restart-loop: restarts in the window; transfer-failures: failures in the window. */
  threshold?: number;
  /** How long the condition must hold before it fires (s). */
  forS?: number;
  /** Look-back window (s) for counting rules. */
  windowS?: number;
  /**
   * How long fresh data must show the condition clear before a firing alert resolves (s); absent: the kind's
   * default (src/main/core/alerts/rules.ts).
   */
  clearForS?: number;
  /**
   * Hysteresis, in the threshold's unit: a firing alert counts as clear only below threshold − margin (kv-high,
   * queue-growing); absent: the kind's default.
   */
  margin?: number;
}

export interface JournalEntry {
  cursor: string;
  /** Epoch ms (journal's realtime timestamp). */
  ts: number;
  /** syslog priority 0 (emerg) … 7 (debug). */
  priority: number;
  message: string;
  identifier?: string;
  pid?: number;
  unit?: string;
  /** A fleet worker's journal: the host the line was read on, and its unit's node rank (multi-node). */
  host?: string;
  nodeRank?: number;
}

export interface JournalFollowArgs {
  deploymentId: string;
  role: Role;
  /**
   * A fleet's worker or router by service id ("decode-2"): every unit of it, each on its own host (a
   * multi-node worker has one per node), lines labelled with host and node rank. Absent: the role's unit.
   */
  worker?: string;
  /** Lines of backlog to send first. */
  lines?: number;
}

export interface JournalFollowResult {
  followId: string;
  unit: string;
  command: string;
  lines: JournalEntry[];
}

export interface JournalAroundArgs {
  deploymentId: string;
  role?: Role;
  /** A fleet's worker or router by service id: its units only, each read on its own host. */
  worker?: string;
  ts: number;
  /** Half-width of the window (ms); default 20 s. */
  spanMs?: number;
}

export interface JournalAroundResult {
  fromMs: number;
  toMs: number;
  command: string;
  lines: JournalEntry[];
  truncated: boolean;
}

/**
 * A demo fault turned on or off. At most one target: a role (every worker of it), a worker ("decode-1"), or a host
 * ("gpu-b"; a host-wide fault such as link-down); none: everywhere the fault applies. `forS` turns it off again
 * after that many seconds of the demo's clock (a link dropped for 30 s).
 */
export interface DemoControlArgs {
  deploymentId: string;
  fault: DemoFaultName;
  on: boolean;
  role?: Role;
  worker?: string;
  host?: string;
  forS?: number;
}

export interface DashboardRequests {
  getSignalCatalog(args: { deploymentId: string }): Promise<SignalInfo[]>;
  getSeries(args: SeriesQuery): Promise<SeriesResult>;
  getSeriesBatch(args: SeriesBatchQuery): Promise<SeriesBatchResult>;
  getDashboard(args: { deploymentId: string }): Promise<DashboardSnapshot>;
  getAlertRules(args: Record<string, never>): Promise<AlertRule[]>;
  setAlertRules(args: { rules: AlertRule[] }): Promise<AlertRule[]>;
  followJournal(args: JournalFollowArgs): Promise<JournalFollowResult>;
  unfollowJournal(args: { followId: string }): Promise<void>;
  journalAround(args: JournalAroundArgs): Promise<JournalAroundResult>;
  /** Demo deployment only: turn a simulated fault on or off; answers every fault that is on now. */
  demoControl(args: DemoControlArgs): Promise<{ faults: DemoFaultState[] }>;
  /** Demo deployment only: the simulated faults that are on now. */
  getDemoFaults(args: { deploymentId: string }): Promise<{ faults: DemoFaultState[] }>;
}

export const DASHBOARD_REQUESTS = [
  'getSignalCatalog',
  'getSeries',
  'getSeriesBatch',
  'getDashboard',
  'getAlertRules',
  'setAlertRules',
  'followJournal',
  'unfollowJournal',
  'journalAround',
  'demoControl',
  'getDemoFaults',
] as const satisfies readonly (keyof DashboardRequests)[];

/**
 * The 'dashboard' push of a round: a whole snapshot (the first after a round nobody listened to, a review's
 * cursor), or what changed since the previous round's push, which a window lays over the snapshot it holds.
 */
export type DashboardPush = DashboardSnapshot | DashboardChanges;

/**
 * A round's snapshot laid over the previous push's: `values` holds only the keys whose value changed (a
 * deployment's keys are never dropped), and the signals not exposed and the GPUs are absent when unchanged —
 * the first change when a series first appears, the second once per reading (every few polls). In a fleet of
 * 32 workers these are most of the snapshot's JSON (values ≈ 80 kB, not exposed ≈ 100 kB).
 */
export type DashboardChanges = Omit<DashboardSnapshot, 'notExposed' | 'gpu'> &
  Partial<Pick<DashboardSnapshot, 'notExposed' | 'gpu'>> & {
    /** The round (ts) of the push this one is laid over. */
    since: number;
  };

export interface DashboardEvents {
  /** One new history row: every key that changed at `ts` (a live chart appends exactly these). */
  signals: { deploymentId: string; ts: number; values: Record<string, number | null> };
  /** The pipeline, verdict, KV detail, GPUs and active alerts after each poll. */
  dashboard: DashboardPush;
  /** New journal lines of a followed unit, or why following stopped. */
  journal: { followId: string; lines: JournalEntry[]; error?: string; hint?: string };
}

export const DASHBOARD_EVENTS = [
  'signals',
  'dashboard',
  'journal',
] as const satisfies readonly (keyof DashboardEvents)[];
