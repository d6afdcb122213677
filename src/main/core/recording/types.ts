// Public types of the session recording library (see docs/recording-format.md for the file format).
import type { AppEvent, DeploymentConfig, HealthResult, HostConfig, Role, UnitState } from '@shared/domain';
import type { MetricType } from '../probes/exposition/types';
import type { RecordedFleet } from './fleet-targets';
import type { DerivedMember, TailIndex } from './layout';

/**
 * Who produced a series or a state: a role ('prefill' | 'decode' | 'router') on a single-host deployment, or
 * 'hostId/role' when a deployment spans hosts. Opaque to the recorder; it is stored and returned as given.
 */
export type SourceKey = Role | string;

/** A line of a monitored unit's journal. */
export interface JournalLine {
  /** Epoch ms (journal __REALTIME_TIMESTAMP / 1000). */
  ts: number;
  role: SourceKey;
  unit: string;
  /** syslog priority 0 (emerg) … 7 (debug). */
  priority: number;
  message: string;
}

/** What the caller states about a session when it starts recording. */
export interface RecordingHeader {
  /** Unique id; also the file's base name when the SessionStore creates it. */
  sessionId: string;
  /** Display name; can be changed later through SessionStore.rename. */
  name: string;
  /** Epoch ms. */
  startedAt: number;
  host: Pick<HostConfig, 'id' | 'label' | 'kind'> & { hostname?: string };
  deployment: DeploymentConfig;
  /** Version of the app that wrote the file, e.g. "0.1.0". */
  appVersion: string;
  /** A fleet (format 1.4): every host and what discovery found; absent for a one-host deployment. */
  fleet?: RecordedFleet;
}

/** The header as stored: the caller's header plus format identification. */
export interface StoredHeader extends RecordingHeader {
  format: 'pd-console-recording';
  version: number;
  minorVersion: number;
  flushIntervalMs: number;
  /** 'crc32' when every block of the file is sealed by a `sum` record (format 1.1); absent in older files. */
  blockChecksums?: 'crc32';
  /**
   * Format 1.2: the file carries an overview, one row per target every stepMs (docs §1.2); `signals` (1.3): the
   * overview's rows are the evaluated signals, not scrapes (§1.3).
   */
  overview?: { stepMs: number; signals?: true };
}

/** One recorded series: columnar, time-ordered. `t` may be a view shared with other series of the same target. */
export interface RecordedSeries {
  /** Id inside this recording (stable for the file). */
  id: number;
  target: SourceKey;
  /** Sample name as scraped, e.g. sglang:e2e_request_latency_seconds_bucket. */
  name: string;
  labels: Record<string, string>;
  /** Metric family the sample belongs to, e.g. sglang:e2e_request_latency_seconds. */
  family: string;
  type: MetricType;
  help?: string;
  unit?: string;
  /** Epoch ms. */
  t: Float64Array;
  /** Exact values as scraped, including NaN and ±Infinity. */
  v: Float64Array;
}

export interface TimedUnitState {
  ts: number;
  source: SourceKey;
  state: UnitState;
}

export interface TimedHealth {
  ts: number;
  source: SourceKey;
  health: HealthResult;
}

export interface RecordingStats {
  fileBytes: number;
  /** Bytes after decompression. */
  decodedBytes: number;
  records: number;
  scrapes: number;
  /** Samples decoded (including those not returned because of a series/time filter). */
  samples: number;
}

export interface Recording {
  path: string;
  header: StoredHeader;
  /** Time of the first and last record read (epoch ms). */
  firstTs: number;
  lastTs: number;
  /** True when the file ends with the writer's end record: nothing was lost. */
  closedCleanly: boolean;
  series: RecordedSeries[];
  events: AppEvent[];
  unitStates: TimedUnitState[];
  health: TimedHealth[];
  journal: JournalLine[];
  /** What could not be read and which time range that loses; empty for an intact file. */
  warnings: string[];
  /** Damage to what the data does not need (overview, index, what follows the end record), each located. */
  derivedDamage: DerivedDamage[];
  stats: RecordingStats;
}

/** A damaged or missing part of a recording that only makes opening fast (format 1.2: overview and index). */
export interface DerivedDamage {
  section: 'overview' | 'index' | 'end';
  /** Byte offset in the file. */
  at: number;
  /** The recorded time it covered (an overview member, as the index says), when known. */
  span: [number, number] | null;
  /** What is wrong, as a clause: "overview at byte 86008 (…) is damaged (it fails its gzip checksum)". */
  what: string;
}

export interface SeriesInfo {
  id: number;
  target: SourceKey;
  name: string;
  labels: Record<string, string>;
  family: string;
  type: MetricType;
}

export interface ReadOptions {
  /** Keep only the series this returns true for (all are still decoded: values are delta-coded). */
  series?: (s: SeriesInfo) => boolean;
  /** Keep only samples, states, events and journal lines in [fromMs, toMs]. */
  fromMs?: number;
  toMs?: number;
}

export interface WriterStats {
  bytesWritten: number;
  records: number;
  scrapes: number;
  samples: number;
  series: number;
  /** Scrapes dropped because their timestamp was not after the previous scrape of the same target. */
  outOfOrderDropped: number;
  /** Last timestamp appended (epoch ms), or null before the first record. */
  lastTs: number | null;
  /** Appended but not yet written to the file (uncompressed and compressed bytes); the writer stops at 64 MiB. */
  queuedBytes: number;
}

/** How the line stream ended. */
export interface StreamEnd {
  /** zlib, checksum or record error that stopped reading, if any. */
  damage: string | null;
  /** A last line without its newline was dropped. */
  partialTail: boolean;
  /** Complete lines after the last block seal, dropped because nothing vouches for them (format 1.1). */
  unsealedLines: number;
  /** The file seals its blocks (format 1.1): every line handed out was checked. */
  sealed: boolean;
  decodedBytes: number;
  fileBytes: number;
  /** The file offset past which its data could not be decompressed (a zlib error), or null. */
  damageAt: number | null;
  /** The derived members (overview, index: format 1.2) met on the way, each checked on its own. */
  derived: DerivedMember[];
  /** The index member that ends the file, if one does. */
  tailIndex: TailIndex | null;
}
