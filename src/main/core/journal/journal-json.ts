// Parsing `journalctl -o json` output (one JSON object per line) into JournalLines.
// journald quirks handled: MESSAGE is an array of bytes when not valid UTF-8 and null when larger than
// 4096 bytes without --all; systemd's own lines about a unit carry UNIT= rather than _SYSTEMD_UNIT=;
// numbers arrive as strings.
import type { JournalEntry } from '@shared/contract';

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
  if (!line.startsWith('{')) return null;
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    // A line cut by the output cap or a non-JSON warning: the caller counts it as rejected.
    return null;
  }
  if (!obj || typeof obj !== 'object') return null;
  const o = obj as Record<string, unknown>;
  const cursor = typeof o.__CURSOR === 'string' ? o.__CURSOR : null;
  const us = Number(o.__REALTIME_TIMESTAMP);
  if (!cursor || !Number.isFinite(us)) return null;
  const priority = Number(o.PRIORITY);
  const pid = Number(o._PID);
  const out: JournalEntry = {
    cursor,
    ts: Math.floor(us / 1000),
    priority: Number.isInteger(priority) && priority >= 0 && priority <= 7 ? priority : 6,
    message: messageOf(o.MESSAGE),
  };
  const ident = o.SYSLOG_IDENTIFIER ?? o._COMM;
  if (typeof ident === 'string') out.identifier = ident;
  if (Number.isInteger(pid) && pid > 0) out.pid = pid;
  const unit = o.UNIT ?? o._SYSTEMD_UNIT;
  if (typeof unit === 'string') out.unit = unit;
  return out;
}

function messageOf(m: unknown): string {
  let s: string;
  if (typeof m === 'string') s = m;
  else if (Array.isArray(m) && m.every((b) => typeof b === 'number'))
    s = new TextDecoder('utf-8').decode(Uint8Array.from(m as number[]));
  else if (m === null) s = '[message larger than 4096 bytes; journalctl --all shows it]';
  else s = '';
  return s.length > MAX_MESSAGE_CHARS ? `${s.slice(0, MAX_MESSAGE_CHARS)}… [cut]` : s;
}
