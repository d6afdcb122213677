// Parsing `journalctl -o json --all` output (one JSON object per line) into JournalLines, as journald gives it:
// MESSAGE is an array of bytes when it is not printable UTF-8 (a `\r`, invalid bytes) and null when larger than
// 4096 bytes without --all; a progress bar arrives as one entry of `\r`-joined redraws (journald splits a stream
// only on newlines), shown as its last redraw; systemd's own lines about a unit carry UNIT= rather than
// _SYSTEMD_UNIT=; numbers arrive as strings. Secrets (API keys, tokens) are removed here, so no screen, CLI or
// file downstream ever holds them.
import type { JournalEntry } from '@shared/contract';
import { redactSecrets } from '../recording/redact';

/** Longest message kept per line: the UI shows a log, not a core dump. */
export const MAX_MESSAGE_CHARS = 8192;

export interface ParsedJournal {
  lines: JournalEntry[];
  /** Lines that were not a journal JSON object (e.g. "-- No entries --" or a warning), for diagnosis. */
  rejected: string[];
}

export function parseJournalJson(text: string): ParsedJournal {
  const lines: JournalEntry[] = [];
  const rejected: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const parsed = parseJournalEntry(line);
    if (parsed) lines.push(parsed);
    else if (rejected.length < 20) rejected.push(line.slice(0, 200));
  }
  return { lines, rejected };
}

export function parseJournalEntry(line: string): JournalEntry | null {
  return parseJournalRecord(line)?.entry ?? null;
}

export interface JournalRecord {
  entry: JournalEntry;
  /** The units `journalctl -u` would show this entry for (see unitsOfRecord). */
  units: string[];
}

/** One line of `journalctl -o json`, with the units it belongs to (to share one follow among several units). */
/**
 * The fields the reader below uses, for `--output-fields` (journalctl prints __CURSOR and the timestamps anyway):
 * a real entry carries some thirty more (_CMDLINE alone is a server's whole command line), which would cross the
 * SSH channel and go through JSON.parse for every line a host's follow brings.
 */
export const JOURNAL_FIELDS = [
  'MESSAGE',
  'PRIORITY',
  '_PID',
  '_UID',
  '_COMM',
  'SYSLOG_IDENTIFIER',
  'UNIT',
  '_SYSTEMD_UNIT',
  'MESSAGE_ID',
  'COREDUMP_UNIT',
  'OBJECT_SYSTEMD_UNIT',
] as const;

export function parseJournalRecord(line: string): JournalRecord | null {
  if (!line.startsWith('{')) return null;
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    // A line cut by the output cap or a non-JSON warning: the caller counts it as rejected.
    return null;
  }
  if (!obj || typeof obj !== 'object') return null;
  const entry = entryOf(obj as Record<string, unknown>);
  return entry ? { entry, units: unitsOfRecord(obj as Record<string, unknown>) } : null;
}

const COREDUMP_MESSAGE_ID = 'fc2e22bc6ee647b6b90729ab34a250b1';

/**
 * The units whose `journalctl -u` shows this entry, by systemd's own rule (add_matches_for_unit): the service's
 * messages (_SYSTEMD_UNIT), PID 1's messages about it (UNIT with _PID=1), its coredumps (COREDUMP_UNIT from
 * root with the coredump MESSAGE_ID), and root daemons' messages about it (OBJECT_SYSTEMD_UNIT with _UID=0).
 */
function unitsOfRecord(o: Record<string, unknown>): string[] {
  const out: string[] = [];
  const add = (v: unknown): void => {
    if (typeof v === 'string' && !out.includes(v)) out.push(v);
  };
  const root = String(o._UID) === '0';
  add(o._SYSTEMD_UNIT);
  if (String(o._PID) === '1') add(o.UNIT);
  if (root && o.MESSAGE_ID === COREDUMP_MESSAGE_ID) add(o.COREDUMP_UNIT);
  if (root) add(o.OBJECT_SYSTEMD_UNIT);
  return out;
}

function entryOf(o: Record<string, unknown>): JournalEntry | null {
  const cursor = typeof o.__CURSOR === 'string' ? o.__CURSOR : null;
  const us = Number(o.__REALTIME_TIMESTAMP);
  if (!cursor || !Number.isFinite(us)) return null;
  const p = Number(o.PRIORITY);
  const priority = Number.isInteger(p) && p >= 0 && p <= 7 ? p : 6;
  const ts = Math.floor(us / 1000);
  const message = messageOf(o.MESSAGE);
  const pid = Number(o._PID);
  const ident = o.SYSLOG_IDENTIFIER ?? o._COMM;
  const unit = o.UNIT ?? o._SYSTEMD_UNIT;
  const hasPid = Number.isInteger(pid) && pid > 0;
  // A service's own line has every field: made in one literal, as properties added later go to a backing
  // store of their own, one more object per entry for as long as a backlog keeps it.
  if (typeof ident === 'string' && hasPid && typeof unit === 'string')
    return { cursor, ts, priority, message, identifier: shared(ident), pid, unit: shared(unit) };
  const out: JournalEntry = { cursor, ts, priority, message };
  if (typeof ident === 'string') out.identifier = shared(ident);
  if (hasPid) out.pid = pid;
  if (typeof unit === 'string') out.unit = shared(unit);
  return out;
}

/**
 * Unit and identifier names, one string each: JSON.parse makes a new copy of them for every line, and the
 * backlogs keep a thousand lines a unit (on the 32-worker fleet, 23,000 copies of 33 unit names). Bounded, as a
 * host could log under any number of names.
 */
const names = new Map<string, string>();
const MAX_NAMES = 4096;

function shared(name: string): string {
  const known = names.get(name);
  if (known !== undefined) return known;
  if (names.size >= MAX_NAMES) names.clear();
  names.set(name, name);
  return name;
}

function messageOf(m: unknown): string {
  let s: string;
  if (typeof m === 'string') s = m;
  else if (Array.isArray(m) && m.every((b) => typeof b === 'number'))
    s = new TextDecoder('utf-8').decode(Uint8Array.from(m as number[]));
  else if (m === null) s = '[message larger than 4096 bytes; journalctl --all shows it]';
  else s = '';
  s = lastRedraw(s);
  const kept =
    s.length > MAX_MESSAGE_CHARS
      ? `${s.slice(0, MAX_MESSAGE_CHARS)}… [cut at ${MAX_MESSAGE_CHARS} of ${s.length} characters]`
      : s;
  return redactSecrets(kept);
}

/** A line redrawn with carriage returns (tqdm) as a terminal would leave it: its last non-empty redraw. */
export function lastRedraw(s: string): string {
  if (!s.includes('\r')) return s;
  const parts = s.split('\r');
  for (let i = parts.length - 1; i >= 0; i--) if (parts[i].trim() !== '') return parts[i];
  return '';
}
