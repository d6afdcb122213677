// What a unit's journal says about its health, kept from the lines its tail reads anyway: systemd's last exit line
// for it, the last error it printed (by what SGLang, Python and CUDA print, not by priority), and its loads —
// systemd's "Started …" to the server's "The server is fired up and ready to roll!" — so "model loading for
// 3 min" can be told against "the last load took 4 min". Conditions (shared/unit-condition.ts) read it.
import type { JournalEntry } from '@shared/contract';
import { problemRank } from '@shared/journal-problems';
import type { UnitJournalEvidence } from '@shared/domain';
import type { JournalListener } from './unit-tail';

/** Loads remembered per unit. */
const LOADS_KEPT = 5;
/** A worse-ranked error this soon after a better one does not replace it (a traceback's trailing lines). */
const SAME_FAILURE_MS = 10_000;

const EXIT = /Main process exited, code=(exited|killed|dumped), status=(\S+)/;
const READY = /fired up and ready to roll/i;
/**
 * systemd refusing a start because the unit started StartLimitBurst times within StartLimitIntervalSec. systemd
 * 252 leaves the unit failed with its last run's Result (exit-code), so this line is the only sign of it.
 */
export const START_LIMIT_HIT = /Start request repeated too quickly/;

export class UnitEvidenceTracker implements JournalListener {
  private ev: UnitJournalEvidence = { loadsMs: [] };
  private errorRank = Number.POSITIVE_INFINITY;
  /** The backlog has been read (or could not be): before that the evidence says nothing yet. */
  private read = false;

  constructor(private readonly unit: string) {}

  /** A copy (observations are kept and compared, the tracker goes on changing); undefined until the backlog is in. */
  get evidence(): UnitJournalEvidence | undefined {
    return this.read ? { ...this.ev, loadsMs: [...this.ev.loadsMs] } : undefined;
  }

  /** The lines the journal held before the tracker started: read first, then every new line. */
  backlog(lines: JournalEntry[]): void {
    this.onLines(lines);
    this.read = true;
    delete this.ev.unreadable;
  }

  onLines(lines: JournalEntry[]): void {
    for (const line of lines) this.take(line);
  }

  /** The tail could not read the journal (permissions, the link): said, never taken for a quiet journal. */
  onError(error: string): void {
    if (!this.read || this.ev.unreadable !== undefined) {
      this.read = true;
      this.ev.unreadable = error;
    }
  }

  private take(e: JournalEntry): void {
    const text = e.message;
    if (fromSystemd(e)) {
      const exit = EXIT.exec(text);
      if (exit)
        this.ev.lastExit = {
          ts: e.ts,
          code: exit[1] as 'exited' | 'killed' | 'dumped',
          status: exit[2],
          text,
        };
      // "Started dsv4-decode.service - …" (systemd ≥ 250) or "Started Description." (older): either way a start.
      else if (/^Started /.test(text)) this.ev.startedAt = e.ts;
      else if (START_LIMIT_HIT.test(text)) this.ev.startLimitAt = e.ts;
      return;
    }
    if (READY.test(text)) {
      this.ev.readyAt = e.ts;
      const started = this.ev.startedAt;
      if (started !== undefined && e.ts >= started) {
        this.ev.loadsMs = [e.ts - started, ...this.ev.loadsMs].slice(0, LOADS_KEPT);
        this.ev.startedAt = undefined;
      }
      return;
    }
    const rank = problemRank(text, e.priority);
    if (rank === null) return;
    const last = this.ev.lastError;
    const sameFailure = last !== undefined && e.ts - last.ts < SAME_FAILURE_MS;
    if (sameFailure && rank > this.errorRank) return;
    this.ev.lastError = { ts: e.ts, text: text.trim().slice(0, 300) };
    this.errorRank = rank;
  }

  toString(): string {
    return `evidence of ${this.unit}`;
  }
}

/** PID 1's lines about the unit (journalctl -u shows them beside the unit's own). */
function fromSystemd(e: JournalEntry): boolean {
  return e.pid === 1 || e.identifier === 'systemd';
}
