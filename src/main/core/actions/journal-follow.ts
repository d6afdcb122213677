// The journal of a unit during its restart, heard from the monitor's tail of that unit (which keeps its cursor
// through SSH reconnects, so no line is lost or repeated): lines queue up as the tail reads them and the restart
// takes them when it is ready (paced by the restart). The subscription lasts for the restart only.
import type { JournalEntry, JournalLine } from '@shared/contract';
import type { JournalSubscription, UnitJournalTail } from '../journal/unit-tail';

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
 * New journal lines of one unit since `prime`. `prime` must run before the restart command, so the first lines
 * shown are the ones the restart caused.
 */
export class RestartJournal {
  private sub: JournalSubscription | null = null;
  private queued: JournalEntry[] = [];
  private error: Error | null = null;

  constructor(
    private readonly tail: UnitJournalTail,
    readonly unit: string,
  ) {}

  /**
   * Starts listening, asking the tail for new lines every `intervalMs` of real time; resolves once the tail has
   * read where the journal ends now (rejects if it could not).
   */
  async prime(intervalMs: number): Promise<void> {
    this.sub ??= this.tail.subscribe(
      {
        onLines: (lines) => {
          this.queued.push(...lines);
          // Bounded like the tail: a restart that is not read from (it is waiting on a step) keeps the newest.
          if (this.queued.length > MAX_QUEUED) this.queued.splice(0, this.queued.length - MAX_QUEUED);
        },
        onError: (_error, _hint, cause) => {
          this.error = cause;
        },
      },
      { intervalMs },
    );
    await this.sub.backlog;
    // The tail may have been reading for others for a while: lines logged since its last read are from
    // before the restart. Read up to now and drop them.
    await this.tail.readNow();
    this.queued = [];
    this.error = null;
  }

  /** Lines logged since the previous call (or since `prime`); throws what the tail's last read failed with. */
  poll(): JournalLine[] {
    const err = this.error;
    this.error = null;
    if (err && this.queued.length === 0) throw err;
    const entries = this.queued;
    this.queued = [];
    return restartJournalLines(entries);
  }

  /** Reads the host now, then returns what arrived: for the last lines before the end. */
  async pollNow(): Promise<JournalLine[]> {
    await this.tail.readNow();
    return this.poll();
  }

  /** The unit's last `n` journal lines, whatever was seen before: for failure reports. */
  async tailLines(n: number): Promise<JournalLine[]> {
    if (this.sub) {
      await this.tail.readNow();
      return restartJournalLines(this.tail.latest(n));
    }
    // Not primed (the restart ended before its command): listen just long enough to read the backlog.
    const once = this.tail.subscribe({ onLines: () => undefined });
    try {
      return restartJournalLines((await once.backlog).slice(-n));
    } finally {
      once.dispose();
    }
  }

  /** Stops listening (the restart of this unit is over). */
  dispose(): void {
    this.sub?.dispose();
    this.sub = null;
  }
}

const MAX_QUEUED = 5000;
