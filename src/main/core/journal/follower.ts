// Follows one unit's journal over the deployment's SSH connection. The connection offers bounded,
// request/response `exec` channels, so following is done as journalctl -f would see it from outside:
// a backlog (`-n N`), then every interval the entries after the last cursor. Each call is bounded in
// lines, bytes and time; a failure is reported to the listener with what to do and retried with backoff.
import type { JournalEntry } from '@shared/contract';
import type { Clock, ClockTimer } from '../clock';
import type { ExecResult } from '../ssh/connection';
import { journalAfterCursorCommand, journalTailCommand } from './commands';
import { parseJournalJson } from './journal-json';

export type Exec = (command: string, opts: { timeoutMs: number; maxBytes: number }) => Promise<ExecResult>;

export interface FollowerOptions {
  exec: Exec;
  unit: string;
  clock: Clock;
  intervalMs?: number;
  /** Most lines fetched per poll; more than this in one interval means a burst, fetched over several polls. */
  batchLines?: number;
  onLines: (lines: JournalEntry[]) => void;
  onError: (error: string, hint?: string) => void;
}

const MAX_BYTES = 4 * 1024 * 1024;

export class JournalFollower {
  private cursor: string | null = null;
  private timer: ClockTimer | null = null;
  private stopped = false;
  private failures = 0;

  constructor(private readonly opts: FollowerOptions) {}

  /** Reads the backlog and starts following; resolves with the backlog. */
  async start(backlog: number): Promise<{ command: string; lines: JournalEntry[] }> {
    const command = journalTailCommand(this.opts.unit, backlog);
    const lines = await this.run(command);
    if (lines.length > 0) this.cursor = lines[lines.length - 1].cursor;
    this.schedule(this.opts.intervalMs ?? 1000);
    return { command, lines };
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.opts.clock.setTimeout(() => void this.poll(), ms);
  }

  private async poll(): Promise<void> {
    if (this.stopped) return;
    const interval = this.opts.intervalMs ?? 1000;
    const batch = this.opts.batchLines ?? 1000;
    try {
      const command = this.cursor
        ? journalAfterCursorCommand(this.opts.unit, this.cursor, batch)
        : journalTailCommand(this.opts.unit, batch);
      const lines = await this.run(command);
      if (this.stopped) return;
      this.failures = 0;
      if (lines.length > 0) {
        this.cursor = lines[lines.length - 1].cursor;
        this.opts.onLines(lines);
      }
      // A full batch means more are waiting: fetch again at once instead of falling behind.
      this.schedule(lines.length >= batch ? 0 : interval);
    } catch (err) {
      if (this.stopped) return;
      this.failures++;
      this.opts.onError(
        `following the journal of ${this.opts.unit} failed: ${(err as Error).message}`,
        this.failures > 1 ? 'Retrying with backoff; check the connection banner.' : 'Retrying.',
      );
      this.schedule(Math.min(30_000, interval * 2 ** Math.min(5, this.failures)));
    }
  }

  private async run(command: string): Promise<JournalEntry[]> {
    const res = await this.opts.exec(command, { timeoutMs: 10_000, maxBytes: MAX_BYTES });
    if (res.exitCode !== 0 && !res.stdout.trim()) {
      const why = res.stderr.trim().split('\n')[0]?.slice(0, 200) || `exit code ${res.exitCode}`;
      throw new Error(
        /permission|not seeing messages/i.test(why)
          ? `${why} (add the SSH user to the systemd-journal or adm group)`
          : why,
      );
    }
    return parseJournalJson(res.stdout).lines;
  }
}
