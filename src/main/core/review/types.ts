// The shapes review mode builds of a recording (review-data.ts), apart from it so the modules it uses can name
// them without importing it.
import type { SignalMissing } from '@shared/contract';
import type { AppEvent, Role } from '@shared/domain';
import type { RecordingStats, StoredHeader, TimedHealth, TimedUnitState } from '../recording/types';
import type { KvMeta } from '../signals/evaluate';
import type { SignalTable } from './signal-table';
import type { RouterWorkerTimeline } from './group-columns';

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
  /**
   * Per group (a role, and each worker's `decode@decode-1`), aligned with its table group's rows:
   * index into metas of the KV source, −1 = none.
   */
  kv: Map<string, { source: Int8Array; metas: KvMeta[] }>;
  notExposed: Record<string, SignalMissing>;
  /** Per role and per worker group. */
  roleInfo: Map<string, RoleInfo>;
  /** The deployment's router's own list of its workers at each of its scrapes (not read by the quick open). */
  routerWorkers?: RouterWorkerTimeline;
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
