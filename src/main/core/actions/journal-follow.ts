// Follows a unit's journal during a restart by polling `journalctl -o json` after the last cursor seen.
// Polling (rather than one long `journalctl -f` exec) survives SSH reconnects without losing or repeating
// lines: the cursor says exactly where to pick up.
import type { JournalLine } from '@shared/contract';
import type { SshConnection } from '../ssh/connection';
import { assertUnitName, shellCommand } from '../ssh/shell';

/** Output cap per poll; a unit that logs more than this between two polls loses the middle, not the end. */
const MAX_POLL_BYTES = 1024 * 1024;
const CATCH_UP_LINES = 200;

export function journalTailCommand(unit: string, lines: number): string {
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    '-u',
    assertUnitName(unit),
    '-n',
    String(Math.max(0, Math.floor(lines))),
  ]);
}

export function journalAfterCommand(unit: string, cursor: string): string {
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    '-u',
    assertUnitName(unit),
    `--after-cursor=${cursor}`,
  ]);
}

export interface ParsedJournal {
  lines: JournalLine[];
  lastCursor?: string;
  /** Lines that were not JSON objects (a journalctl warning, a truncated last line). */
  skipped: number;
}

/** journald prints MESSAGE as a string, as a byte array when not UTF-8, or null when over 4096 bytes. */
function messageText(m: unknown): string | null {
  if (typeof m === 'string') return m;
  if (Array.isArray(m) && m.every((b) => typeof b === 'number'))
    return Buffer.from(m as number[]).toString('utf8');
  return null;
}

export function parseJournalJson(stdout: string): ParsedJournal {
  const out: ParsedJournal = { lines: [], skipped: 0 };
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    let entry: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(line);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        out.skipped++;
        continue;
      }
      entry = parsed as Record<string, unknown>;
    } catch {
      // journalctl prints "-- No entries --" or a warning on stdout on some versions: not an entry.
      out.skipped++;
      continue;
    }
    if (typeof entry.__CURSOR === 'string') out.lastCursor = entry.__CURSOR;
    const text = messageText(entry.MESSAGE);
    const us = Number(entry.__REALTIME_TIMESTAMP);
    const priority = Number(entry.PRIORITY);
    // A message may hold several lines (a traceback logged at once): show each.
    for (const part of (text ?? '[message over 4096 bytes not shown; use journalctl --all]').split('\n')) {
      if (part === '' && text !== '') continue;
      out.lines.push({
        ts: Number.isFinite(us) ? Math.floor(us / 1000) : 0,
        text: part,
        ...(Number.isFinite(priority) ? { priority } : {}),
      });
    }
  }
  return out;
}

/**
 * Reads new journal lines of one unit each time `poll` is called. `prime` must run before the restart
 * command, so the first lines shown are the ones the restart caused.
 */
export class JournalFollower {
  private cursor: string | undefined;
  private primed = false;

  constructor(
    private readonly conn: SshConnection,
    readonly unit: string,
  ) {}

  /** Remembers where the journal ends now. Returns false when the unit has no entries yet. */
  async prime(): Promise<boolean> {
    const res = await this.conn.exec(journalTailCommand(this.unit, 1), {
      timeoutMs: 15_000,
      maxBytes: MAX_POLL_BYTES,
    });
    const parsed = parseJournalJson(res.stdout);
    this.cursor = parsed.lastCursor;
    this.primed = true;
    return this.cursor !== undefined;
  }

  /** Lines logged since the previous call (or since `prime`). */
  async poll(): Promise<JournalLine[]> {
    let cmd: string;
    if (this.cursor) cmd = journalAfterCommand(this.unit, this.cursor);
    else cmd = journalTailCommand(this.unit, this.primed ? CATCH_UP_LINES : 0);
    let stdout: string;
    try {
      stdout = (await this.conn.exec(cmd, { timeoutMs: 15_000, maxBytes: MAX_POLL_BYTES })).stdout;
    } catch (err) {
      if ((err as { explained?: { code?: string } }).explained?.code !== 'output-too-large') throw err;
      // More than a megabyte since the last poll: skip to the newest lines rather than never catching up.
      stdout = (
        await this.conn.exec(journalTailCommand(this.unit, CATCH_UP_LINES), {
          timeoutMs: 15_000,
          maxBytes: MAX_POLL_BYTES,
        })
      ).stdout;
    }
    const parsed = parseJournalJson(stdout);
    if (parsed.lastCursor) this.cursor = parsed.lastCursor;
    return parsed.lines;
  }

  /** The unit's last `n` journal lines, whatever was seen before: for failure reports. */
  async tail(n: number): Promise<JournalLine[]> {
    const res = await this.conn.exec(journalTailCommand(this.unit, n), {
      timeoutMs: 15_000,
      maxBytes: MAX_POLL_BYTES,
    });
    return parseJournalJson(res.stdout).lines;
  }
}
