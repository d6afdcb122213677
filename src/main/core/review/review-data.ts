// Everything review mode shows of one recording, built once when it is opened: the signal table (one group per
// role, a row per recorded scrape plus a row per poll interval while a service was not scraped, as the live
// store writes one per poll), the KV source per row, what the servers never exposed, and the recorded events,
// unit states, health results and journal.
import type { SignalMissing } from '@shared/contract';
import { ROLES, type AppEvent, type Role } from '@shared/domain';
import type {
  JournalLine,
  Recording,
  RecordingStats,
  StoredHeader,
  TimedHealth,
  TimedUnitState,
} from '../store/recording/types';
import { alignTargets, rowAt, type TargetColumns } from './target-columns';
import { MONITOR_FAMILIES, MONITOR_TARGET } from '../store/recording/host-series';
import {
  evaluateTarget,
  notExposed as notExposedIn,
  type KvMeta,
  type TargetSignals,
} from '../signals/evaluate';
import { KV_SOURCE_METRICS } from '../signals/evaluate/kv';
import { timeToFull } from '../signals/evaluate/time-to-full';
import { SignalTable, type GroupColumns } from './signal-table';
import { GPU_GROUP, gpuGroup } from './host-columns';

export interface RoleInfo {
  /** Distinct metric families the role's /metrics served during the session. */
  families: number;
  /** Distinct series recorded for it. */
  series: number;
  /** Typical time between two scrapes (ms). */
  stepMs: number;
}

export interface ReviewData {
  header: StoredHeader;
  firstTs: number;
  lastTs: number;
  /** Time of the last recorded scrape (events and journal lines may reach further). */
  lastScrapeTs: number;
  closedCleanly: boolean;
  warnings: string[];
  stats: RecordingStats;
  roles: Role[];
  table: SignalTable;
  /** Per role, aligned with its table group's rows: index into metas of the KV source, −1 = none. */
  kv: Map<Role, { source: Int8Array; metas: KvMeta[] }>;
  notExposed: Record<string, SignalMissing>;
  roleInfo: Map<Role, RoleInfo>;
  /** Recorded events, oldest first (later annotations from the sidecar are added by the caller). */
  events: AppEvent[];
  unitStates: TimedUnitState[];
  health: TimedHealth[];
}

/** Counts of every series seen while reading (the reader decodes only the ones review mode needs). */
export interface SeenSeries {
  families: Set<string>;
  series: number;
}

/** A recorded source or target ('decode', or 'hostId/decode' on multi-host deployments) → its role. */
export function roleOf(source: string): Role | null {
  const r = source.includes('/') ? source.slice(source.lastIndexOf('/') + 1) : source;
  return (ROLES as readonly string[]).includes(r) ? (r as Role) : null;
}

/** Hard bound on rows per role group (filler rows of a long outage at a coarse step count too). */
const MAX_ROWS = 400_000;

export function buildReviewData(
  rec: Recording,
  seen: Map<string, SeenSeries> = new Map(),
  opts: { rateWindowMs?: number } = {},
): ReviewData {
  const targets = alignTargets(rec.series);
  const services = rec.header.deployment.services;
  const roles: Role[] = services.length
    ? [...new Set(services.map((s) => s.role))]
    : [...new Set([...targets.keys()].map(roleOf).filter((r): r is Role => r !== null))];
  const groups = new Map<string, GroupColumns>();
  const kv = new Map<Role, { source: Int8Array; metas: KvMeta[] }>();
  const notExposed: Record<string, SignalMissing> = {};
  const roleInfo = new Map<Role, RoleInfo>();
  const warnings = [...rec.warnings];
  for (const role of roles) {
    const matching = [...targets.values()].filter((c) => roleOf(c.target) === role);
    if (matching.length > 1)
      warnings.push(
        `${matching.length} ${role} targets were recorded (${matching.map((c) => c.target).join(', ')}); review shows ${matching[0].target} only.`,
      );
    const cols = matching[0];
    const signals: TargetSignals | null = cols
      ? evaluateTarget(cols, role, {
          ...opts,
          rankTokens: true,
          capacityFromServerInfo: recordedCapacity(targets, role, cols.t),
        })
      : null;
    const scrapeT = cols?.t ?? new Float64Array(0);
    const stepMs = medianStep(scrapeT);
    const g = buildGroup(role, scrapeT, signals, stepMs, rec);
    groups.set(role, g.group);
    if (signals) {
      kv.set(role, { source: g.kvSource, metas: signals.kvMetas });
      Object.assign(
        notExposed,
        notExposedIn(
          role,
          (name) => cols.has(name),
          'not in this recording: the server did not expose it while the session was recorded',
        ),
      );
      if (role !== 'router' && signals.kvMetas.length === 0)
        notExposed[`${role}.kv_ratio`] = {
          expected: KV_SOURCE_METRICS,
          why: 'no KV-cache figure in this recording: the server exposed none of these with a known capacity (and no /server_info capacity was recorded for it)',
        };
      else delete notExposed[`${role}.kv_ratio`];
    }
    const s = cols ? seen.get(cols.target) : undefined;
    roleInfo.set(role, {
      families: s?.families.size ?? 0,
      series: s?.series ?? 0,
      stepMs,
    });
  }
  const gpu = gpuGroup(targets);
  if (gpu) groups.set(GPU_GROUP, gpu);
  let lastScrapeTs = -Infinity;
  // The servers' scrapes only: the monitor's own rows (GPU readings, each poll's scrape health) go on when they fail.
  for (const c of targets.values())
    if (c.rows && roleOf(c.target)) lastScrapeTs = Math.max(lastScrapeTs, c.t[c.rows - 1]);
  return reviewDataOf(rec, { lastScrapeTs, warnings, roles, groups, kv, notExposed, roleInfo });
}

/** What a review holds: the recording's own span, events and states, and the signals computed from it. */
export function reviewDataOf(
  rec: Recording,
  computed: Pick<ReviewData, 'lastScrapeTs' | 'warnings' | 'roles' | 'kv' | 'notExposed' | 'roleInfo'> & {
    groups: Map<string, GroupColumns>;
  },
): ReviewData {
  const { lastScrapeTs, groups, ...signals } = computed;
  return {
    header: rec.header,
    firstTs: rec.firstTs,
    lastTs: rec.lastTs,
    // No scrape at all (a session that never reached a server): the span's end stands in.
    lastScrapeTs: Number.isFinite(lastScrapeTs) ? lastScrapeTs : rec.lastTs,
    closedCleanly: rec.closedCleanly,
    stats: rec.stats,
    table: new SignalTable(groups),
    ...signals,
    events: rec.events,
    unitStates: rec.unitStates,
    health: rec.health,
  };
}

export function medianStep(t: Float64Array): number {
  if (t.length < 2) return 1000;
  const steps: number[] = [];
  const every = Math.max(1, Math.floor((t.length - 1) / 512));
  for (let k = 1; k < t.length; k += every) steps.push(t[k] - t[k - 1]);
  steps.sort((a, b) => a - b);
  return Math.min(60_000, Math.max(250, steps[steps.length >> 1]));
}

/** Row times: every scrape, plus one per step wherever scrapes stop for longer than 2.5 steps. */
function rowTimes(
  scrapeT: Float64Array,
  stepMs: number,
  fromMs: number,
  toMs: number,
): { t: Float64Array; scrapeRow: Int32Array } {
  let step = stepMs;
  const span = Math.max(0, toMs - fromMs);
  if (span / step + scrapeT.length > MAX_ROWS) step = Math.ceil(span / (MAX_ROWS - scrapeT.length || 1));
  const times: number[] = [];
  const scrapeRow = new Int32Array(scrapeT.length);
  const fill = (a: number, b: number): void => {
    // Filler rows strictly between a and b, one step apart, the last at least half a step before b.
    if (!(b - a > 2.5 * step)) return;
    for (let x = a + step; x <= b - step / 2; x += step) times.push(x);
  };
  let prev = fromMs - step;
  for (let k = 0; k < scrapeT.length; k++) {
    fill(prev, scrapeT[k]);
    scrapeRow[k] = times.length;
    times.push(scrapeT[k]);
    prev = scrapeT[k];
  }
  fill(prev, toMs + step);
  return { t: Float64Array.from(times), scrapeRow };
}

function buildGroup(
  role: Role,
  scrapeT: Float64Array,
  signals: TargetSignals | null,
  stepMs: number,
  rec: Recording,
): { group: GroupColumns; kvSource: Int8Array } {
  const { t, scrapeRow } = rowTimes(scrapeT, stepMs, rec.firstTs, rec.lastTs);
  const n = t.length;
  const cols = new Map<string, Float32Array>();
  const col = (key: string): Float32Array => {
    let c = cols.get(`${role}.${key}`);
    if (!c) cols.set(`${role}.${key}`, (c = new Float32Array(n).fill(NaN)));
    return c;
  };
  const kvSource = new Int8Array(n).fill(-1);
  const metricsOk = col('metrics_ok');
  metricsOk.fill(0);
  for (let k = 0; k < scrapeRow.length; k++) metricsOk[scrapeRow[k]] = 1;
  if (signals) {
    for (const [key, values] of signals.values) {
      const c = col(key);
      for (let k = 0; k < scrapeRow.length; k++) c[scrapeRow[k]] = values[k];
    }
    for (let k = 0; k < scrapeRow.length; k++) kvSource[scrapeRow[k]] = signals.kvSource[k];
  }
  // systemd and health as step functions: each row shows the last state recorded at or before it.
  const active = col('active');
  const restarts = col('restarts');
  stepFill(
    t,
    rec.unitStates.filter((u) => roleOf(u.source) === role),
    (u) => [u.state.activeState === 'active' ? 1 : 0, u.state.nRestarts],
    [active, restarts],
  );
  stepFill(
    t,
    rec.health.filter((h) => roleOf(h.source) === role),
    (h) => [h.health.ok ? 1 : 0],
    [col('health_ok')],
  );
  if (role !== 'router') col('kv_ttf_s').set(timeToFull(t, col('kv_ratio')));
  return { group: { t, cols }, kvSource };
}

/**
 * The KV capacity the monitor read from /server_info for `role`, at each of the role's scrape rows (the last
 * reading at or before the row; NaN before the first): recorded only for servers without the capacity gauge.
 */
function recordedCapacity(
  targets: ReadonlyMap<string, TargetColumns>,
  role: Role,
  t: Float64Array,
): Float64Array | undefined {
  const monitor = targets.get(MONITOR_TARGET);
  const s = monitor?.series(MONITOR_FAMILIES.capacity).find((x) => x.labels.role === role);
  if (!monitor || !s) return undefined;
  const out = new Float64Array(t.length).fill(NaN);
  let k = -1;
  for (let i = 0; i < t.length; i++) {
    while (k + 1 < s.v.length && monitor.t[rowAt(s, k + 1)] <= t[i]) k++;
    if (k >= 0) out[i] = s.v[k];
  }
  return out;
}

function stepFill<T extends { ts: number }>(
  t: Float64Array,
  records: readonly T[],
  values: (r: T) => number[],
  into: Float32Array[],
): void {
  let j = -1;
  for (let i = 0; i < t.length; i++) {
    while (j + 1 < records.length && records[j + 1].ts <= t[i]) j++;
    if (j < 0) continue;
    const v = values(records[j]);
    for (let c = 0; c < into.length; c++) into[c][i] = v[c];
  }
}

/** Journal lines of a recording, sorted by time (the reader sorts them already). */
export type ReviewJournal = JournalLine[];
