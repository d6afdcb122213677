// Follows a unit's journal during a restart by polling `journalctl -o json` after the last cursor seen.
// Polling (rather than one long `journalctl -f` exec) survives SSH reconnects without losing or repeating
// lines: the cursor says exactly where to pick up. Commands and parsing are the journal module's; what is
// the restart's own is when it reads (on demand, paced by the restart) and the catch-up after a burst.
import type { JournalEntry, JournalLine } from '@shared/contract';
import { journalAfterCursorCommand, journalTailCommand } from '../journal/commands';
import { parseJournalJson } from '../journal/journal-json';
import type { SshConnection } from '../ssh/connection';

/** Output cap per poll; a unit that logs more than this between two polls loses the middle, not the end. */
const MAX_POLL_BYTES = 1024 * 1024;
/**
 * Line cap per poll, the journal module's largest. Real journal JSON entries run to a kilobyte or more, so
 * the byte cap above is what a burst meets first; this bounds a flood of tiny entries too.
 */
const MAX_POLL_LINES = 5000;
const CATCH_UP_LINES = 200;

/** One journal entry as restart lines: a message holding several lines (a traceback logged at once) shows each. */
export function restartJournalLines(entries: readonly JournalEntry[]): JournalLine[] {
  const out: JournalLine[] = [];
  for (const e of entries) {
    for (const part of e.message.split('\n')) {
      if (part === '' && e.message !== '') continue;
      out.push({ ts: e.ts, text: part, priority: e.priority });
    }
  }
  return out;
}

/**
 * Reads new journal lines of one unit each time `poll` is called. `prime` must run before the restart
 * command, so the first lines shown are the ones the restart caused.
 */
export class RestartJournal {
  private cursor: string | undefined;
  private primed = false;

  constructor(
    private readonly conn: SshConnection,
    readonly unit: string,
  ) {}

  /** Remembers where the journal ends now. Returns false when the unit has no entries yet. */
  async prime(): Promise<boolean> {
    this.cursor = lastCursor(await this.read(journalTailCommand(this.unit, 1)));
    this.primed = true;
    return this.cursor !== undefined;
  }

  /** Lines logged since the previous call (or since `prime`). */
  async poll(): Promise<JournalLine[]> {
    let cmd: string;
    if (this.cursor) cmd = journalAfterCursorCommand(this.unit, this.cursor, MAX_POLL_LINES);
    else cmd = journalTailCommand(this.unit, this.primed ? CATCH_UP_LINES : 0);
    let entries: JournalEntry[];
    try {
      entries = await this.read(cmd);
    } catch (err) {
      if ((err as { explained?: { code?: string } }).explained?.code !== 'output-too-large') throw err;
      // More than a megabyte since the last poll: skip to the newest lines rather than never catching up.
      entries = await this.read(journalTailCommand(this.unit, CATCH_UP_LINES));
    }
    this.cursor = lastCursor(entries) ?? this.cursor;
    return restartJournalLines(entries);
  }

  /** The unit's last `n` journal lines, whatever was seen before: for failure reports. */
  async tail(n: number): Promise<JournalLine[]> {
    return restartJournalLines(await this.read(journalTailCommand(this.unit, n)));
  }

  private async read(command: string): Promise<JournalEntry[]> {
    const res = await this.conn.exec(command, { timeoutMs: 15_000, maxBytes: MAX_POLL_BYTES });
    return parseJournalJson(res.stdout).lines;
  }
}

function lastCursor(entries: readonly JournalEntry[]): string | undefined {
  return entries.length > 0 ? entries[entries.length - 1].cursor : undefined;
}
