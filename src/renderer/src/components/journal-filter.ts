// Which journal lines the journal view shows: a search, a priority threshold, or "problems" — what SGLang,
// Python, CUDA and the kernel print when something fails, whatever journald priority it came at
// (shared/journal-problems.ts: a scheduler's traceback is logged at info, so "err and worse" finds nothing).
// A traceback's frames are kept with it: its "Traceback (most recent call last)" line, the frames of the same
// process, through the exception line that ends it.
import type { JournalEntry } from '@shared/contract';
import { isProblemLine } from '@shared/journal-problems';

const TRACEBACK = /Traceback \(most recent call last\)/;
/** The last line of a traceback: the exception, unindented. */
const EXCEPTION_LINE = /^\w+(?:\.\w+)*(?:Error|Exception|Interrupt|Exit)\b/;
/** Bounds one traceback: a frame list longer than this is not one any more. */
const MAX_TRACEBACK_LINES = 400;

/** Indexes of the problem lines, with every traceback's frames. */
export function problemIndexes(lines: readonly JournalEntry[]): Set<number> {
  const keep = new Set<number>();
  let open: { pid?: number; identifier?: string; unit?: string; host?: string; n: number } | null = null;
  const sameProcess = (l: JournalEntry): boolean =>
    open !== null &&
    l.pid === open.pid &&
    l.identifier === open.identifier &&
    l.unit === open.unit &&
    l.host === open.host;
  lines.forEach((l, i) => {
    if (open && sameProcess(l)) {
      keep.add(i);
      open.n++;
      if (EXCEPTION_LINE.test(l.message) || l.message.trim() === '' || open.n > MAX_TRACEBACK_LINES)
        open = null;
      if (open === null || !TRACEBACK.test(l.message)) return;
    }
    if (isProblemLine(l.message, l.priority)) keep.add(i);
    if (TRACEBACK.test(l.message))
      open = { pid: l.pid, identifier: l.identifier, unit: l.unit, host: l.host, n: 0 };
  });
  return keep;
}

export interface JournalFilter {
  query: string;
  /** Highest syslog priority number shown (7: all); ignored while `problems` is on. */
  maxPrio: number;
  problems: boolean;
}

export function filterJournal(lines: readonly JournalEntry[], f: JournalFilter): JournalEntry[] {
  const q = f.query.trim().toLowerCase();
  const problems = f.problems ? problemIndexes(lines) : null;
  return lines.filter(
    (l, i) =>
      (problems ? problems.has(i) : l.priority <= f.maxPrio) && (!q || l.message.toLowerCase().includes(q)),
  );
}
