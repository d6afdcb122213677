// Everything review mode shows of one recording, built once when it is opened: the signal table (one group per
// role, a row per recorded scrape plus a row per poll interval while a service was not scraped, as the live
// store writes one per poll), the KV source per row, what the servers never exposed, and the recorded events,
// unit states, health results and journal.
import type { SignalMissing } from '@shared/contract';
import { ROLES, type Role } from '@shared/domain';
import type { JournalLine, Recording } from '../recording/types';
import { alignTargets } from './target-columns';
import {
  evaluateTarget,
  notExposed as notExposedIn,
  type KvMeta,
  type TargetSignals,
} from '../signals/evaluate';
import { KV_SOURCE_METRICS } from '../signals/evaluate/kv';
import { SignalTable, type GroupColumns } from './signal-table';
import { GPU_GROUP, gpuGroup } from './host-columns';
import { parseSource } from '../recording/fleet-targets';
import {
  buildGroup,
  medianStep,
  recordedCapacity,
  routerWorkerTimeline,
  type RouterWorkerTimeline,
} from './group-columns';
import { buildFleetReviewData } from './fleet-data';

export { medianStep };
export type { RouterWorkerTimeline };

export type { ReviewData, RoleInfo, SeenSeries } from './types';
import type { ReviewData, RoleInfo, SeenSeries } from './types';

/**
 * A recorded source or target ('decode', 'hostId/decode' on multi-host deployments of format 1.0, or a fleet's
 * 'decode@decode-1' and 'decode@decode-2#1' of format 1.4) → its role.
 */
export function roleOf(source: string): Role | null {
  const r = source.includes('@')
    ? parseSource(source).group
    : source.includes('/')
      ? source.slice(source.lastIndexOf('/') + 1)
      : source;
  return (ROLES as readonly string[]).includes(r) ? (r as Role) : null;
}

export function buildReviewData(
  rec: Recording,
  seen: Map<string, SeenSeries> = new Map(),
  opts: { rateWindowMs?: number } = {},
): ReviewData {
  const targets = alignTargets(rec.series);
  if (rec.header.fleet) return reviewDataOf(rec, buildFleetReviewData(rec, targets, seen, opts));
  const services = rec.header.deployment.services;
  const roles: Role[] = services.length
    ? [...new Set(services.map((s) => s.role))]
    : [...new Set([...targets.keys()].map(roleOf).filter((r): r is Role => r !== null))];
  const groups = new Map<string, GroupColumns>();
  const kv = new Map<string, { source: Int8Array; metas: KvMeta[] }>();
  const notExposed: Record<string, SignalMissing> = {};
  const roleInfo = new Map<string, RoleInfo>();
  let routerWorkers: RouterWorkerTimeline | undefined;
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
    const g = buildGroup(role, scrapeT, signals, stepMs, rec, undefined, (src) => roleOf(src) === role);
    groups.set(role, g.group);
    if (role === 'router') routerWorkers = routerWorkerTimeline(scrapeT, signals);
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
  return reviewDataOf(rec, {
    lastScrapeTs,
    warnings,
    roles,
    groups,
    kv,
    notExposed,
    roleInfo,
    routerWorkers,
  });
}

/** What a review holds: the recording's own span, events and states, and the signals computed from it. */
export function reviewDataOf(
  rec: Recording,
  computed: Pick<
    ReviewData,
    'lastScrapeTs' | 'warnings' | 'roles' | 'kv' | 'notExposed' | 'roleInfo' | 'routerWorkers'
  > & {
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

/** Journal lines of a recording, sorted by time (the reader sorts them already). */
export type ReviewJournal = JournalLine[];
