// "Logs around this moment": the journal lines of ±span around a time, from whichever source holds them — the
// host's journal over SSH (live) or the lines a recording kept (review). The window, the cap and the answer's
// shape are the same for both; only where the lines come from differs.
import type { JournalAroundResult, JournalEntry } from '@shared/contract';

/** At most this many lines per answer; the answer says when there were more. */
export const AROUND_MAX_LINES = 2000;

export interface AroundSource {
  /** Lines with fromMs ≤ ts ≤ toMs, oldest first, at most `max` (more may be returned: they are cut here). */
  read(fromMs: number, toMs: number, max: number): Promise<{ lines: JournalEntry[]; command: string }>;
}

export async function journalAround(
  source: AroundSource,
  ts: number,
  spanMs: number,
): Promise<JournalAroundResult> {
  const fromMs = ts - spanMs;
  const toMs = ts + spanMs;
  const { lines, command } = await source.read(fromMs, toMs, AROUND_MAX_LINES + 1);
  const truncated = lines.length > AROUND_MAX_LINES;
  return { fromMs, toMs, command, lines: truncated ? lines.slice(0, AROUND_MAX_LINES) : lines, truncated };
}
