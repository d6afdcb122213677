// The recording file format, version 1: constants, the JSON shape of every record, and the exact value codec.
// docs/recording-format.md is the normative description; this file and that document must agree.
import type { AppEvent, HealthResult, UnitState } from '@shared/domain';
import type { MetricType } from '../probes/exposition/types';
// Relative: the crash fixtures run this file with plain tsx, which does not know the @shared alias.
import { OLD_FORMAT_NOTE } from '../../../shared/api/review';

export const FORMAT_ID = 'pd-console-recording';
/** Major version: a reader refuses files with a higher one. */
export const FORMAT_VERSION = 1;
/**
 * Minor version, the one written (§1.4): block checksums, overview members of review's signals and an index,
 * a fleet's header and its targets named per worker and per host. The data records of older minors are the
 * same, so a file of one is read by its data and says OLD_FORMAT_NOTE; re-saving (resave.ts) makes it this one.
 */
export const FORMAT_MINOR_VERSION = 4;
export { OLD_FORMAT_NOTE };

/**
 * Whether every service of a header carries its id, as every deployment's does now (a 1P1D host is a fleet of
 * one: `router`, `prefill-0`, `decode-0`). A file whose services have none names them by role (fleet-of-one.ts),
 * whatever its minor: it is of an older format too, and re-saving names them.
 */
export function servicesNamed(h: { deployment: { services: readonly { id?: string }[] } }): boolean {
  return h.deployment.services.every((s) => s.id !== undefined);
}

/** Whether a file is of the format written now: its overview is the one review reads. */
export function isCurrentFormat(h: {
  minorVersion: number;
  deployment: { services: readonly { id?: string }[] };
}): boolean {
  return h.minorVersion >= FORMAT_MINOR_VERSION && servicesNamed(h);
}

/**
 * The note the sessions list and review show for a file of this minor version (and whether its services are
 * named), or null when it opens at once; nothing when the version is not known.
 */
export function formatNote(minorVersion: number | undefined, named = true): string | null {
  return minorVersion === undefined || (minorVersion >= FORMAT_MINOR_VERSION && named)
    ? null
    : OLD_FORMAT_NOTE;
}
export const FILE_EXTENSION = '.pdrec.jsonl.gz';

/** Upper bound for the writer's sync-flush interval: a kill -9 may lose at most this plus the write latency. */
export const MAX_FLUSH_INTERVAL_MS = 4000;
export const DEFAULT_FLUSH_INTERVAL_MS = 2000;

// ---- Records (one JSON object per line; `k` is the kind) --------------------------------------------------------

export interface FamilyRecord {
  k: 'family';
  g: string;
  f: string;
  ty: MetricType;
  h?: string;
  u?: string;
}

export interface SeriesRecord {
  k: 'series';
  id: number;
  g: string;
  f: string;
  n: string;
  l: Record<string, string>;
}

export interface LayoutRecord {
  k: 'layout';
  g: string;
  /** Series id for each slot of the following scrape rows of this target. */
  ids: number[];
  /** [slot, predecessorSlot] pairs: the slot's value delta is stored relative to its predecessor's delta. */
  pred?: [number, number][];
}

export interface ScrapeRecord {
  k: 's';
  t: number;
  g: string;
  /** Sparse tokens: [slotGap, token, slotGap, token, …]; omitted slots have token 0. */
  v: (number | string)[];
}

export interface UnitRecord {
  k: 'unit';
  t: number;
  r: string;
  s: UnitState;
}

export interface HealthRecord {
  k: 'health';
  t: number;
  r: string;
  h: HealthResult;
}

export interface EventRecord {
  k: 'event';
  t: number;
  e: AppEvent;
}

export interface JournalRecord {
  k: 'journal';
  t: number;
  r: string;
  u: string;
  p: number;
  m: string;
}

export interface EndRecord {
  k: 'end';
  t: number;
}

/** Seals the block of lines before it (block-sum.ts; format 1.1). */
export interface SumRecord {
  k: 'sum';
  /** Time of the last record of the block (epoch ms), or the header's start for the header's block. */
  t: number;
  /** Decompressed bytes of the block: every line since the previous sum record (or the file start), newlines included. */
  b: number;
  /** CRC-32 (as zlib and Python's zlib.crc32 compute it) of those bytes. */
  c: number;
}

/** Where the overview members are (format 1.2): the only record of the last member of a closed file. */
export interface IndexRecord {
  k: 'index';
  t: number;
  /** [byte offset, byte length, first time, last time] of every overview member, in file order. */
  o: [number, number, number, number][];
}

export type WireRecord =
  | FamilyRecord
  | SeriesRecord
  | LayoutRecord
  | ScrapeRecord
  | UnitRecord
  | HealthRecord
  | EventRecord
  | JournalRecord
  | EndRecord
  | SumRecord
  | IndexRecord;

// ---- Exact value codec ---------------------------------------------------------------------------------------
// A value is a decimal mantissa m (a safe integer) and a per-series scale d: value = m / 10^d. Successive values
// of a series are stored as integer deltas of m, which general-purpose compression shrinks far better than
// digits of floats. A value is written in full (a JSON string, exact for every double) when a series first
// appears and whenever its value is not a decimal at its current scale; the text of that token sets the new
// scale: the number of digits after its decimal point, if it is a plain decimal with a safe-integer mantissa.

export const MAX_SCALE = 20;
/** Powers of ten up to 1e22 are exact doubles; decoding divides by them, so both sides compute the same double. */
export const POW10: readonly number[] = Array.from({ length: MAX_SCALE + 1 }, (_, i) => Number(`1e${i}`));

/** The absolute (string) form of a value: the shortest round-trip decimal, or NaN, +Inf, -Inf, -0. */
export function absoluteToken(v: number): string {
  if (v !== v) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Object.is(v, -0)) return '-0';
  return String(v);
}

/** Inverse of absoluteToken; NaN for text that is not a number token (the caller checks). */
export function parseAbsoluteToken(s: string): number {
  if (s === 'NaN') return NaN;
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === '' || s.trim() !== s) return NaN;
  return Number(s);
}

/**
 * Mantissa and scale of an absolute token written as a plain decimal (`-?digits[.digits]`) whose digits form a
 * safe integer: "0.53" → m 53, d 2. Null for anything else (exponent form, too many digits, specials, -0):
 * such a series is "raw" until its next absolute token, and stores only unchanged (0) or absolute values.
 */
export function decimalToken(tok: string): { m: number; d: number } | null {
  let i = 0;
  const n = tok.length;
  let neg = false;
  if (n > 0 && tok.charCodeAt(0) === 45) {
    neg = true;
    i = 1;
  }
  let m = 0;
  let d = -1;
  let digits = 0;
  for (; i < n; i++) {
    const c = tok.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
      if (d >= 0) d++;
    } else if (c === 46 && d < 0 && digits > 0) d = 0;
    else return null;
  }
  if (digits === 0 || d === 0 || m > Number.MAX_SAFE_INTEGER || (neg && m === 0)) return null;
  if (d < 0) d = 0;
  if (d > MAX_SCALE) return null;
  return { m: neg ? -m : m, d };
}

/** Canonical identity of a series within a target: name plus labels sorted by name. */
export function canonicalSeriesKey(name: string, labels: Record<string, string>): string {
  return seriesKeyIn(name, labels, Object.keys(labels).sort());
}

/**
 * A series' name and its labels in the order of `keys`, as one flat string: NUL before each label, SOH between
 * its name and value. Joined rather than built with `+=`: V8 keeps a concatenation as a tree of cons strings
 * holding every piece, and a key kept in a map for the session would keep one object per piece alive for every
 * major GC to walk — and, through the first scrape's label values, that scrape's whole text.
 */
export function seriesKeyIn(name: string, labels: Record<string, string>, keys: string[]): string {
  const parts = [name];
  for (const key of keys) parts.push(key + '\u0001' + labels[key]);
  return parts.join('\u0000');
}

/** Errors that say a file cannot be opened at all. `code` lets callers tell the cases apart. */
export class RecordingOpenError extends Error {
  constructor(
    message: string,
    readonly code: 'not-a-recording' | 'newer-version' | 'unreadable',
    readonly path: string,
  ) {
    super(message);
    this.name = 'RecordingOpenError';
  }
}
