// One unit's journal, read once for everyone who listens: a backlog (`-n N`), then every new entry. New entries
// come from the host's one `journalctl --follow` (a JournalFeed, shared by the host's units) when the tail has
// one, else by polling: every interval the entries after the last cursor. The newest entries are kept in a
// bounded backlog; each listener is a subscription that first receives that backlog, then every new entry, until
// it is disposed. The tail reads only while someone listens (polling at the fastest cadence any listener asked
// for), so a unit has one reader however many views, restarts and recordings follow it.
import type { JournalEntry } from '@shared/contract';
import type { Clock, ClockTimer } from '../clock';
import type { ExecResult } from '../ssh/exec-types';
import { journalAfterCursorCommand, journalTailCommand } from './commands';
import type { Exec, FollowSink, JournalFeed } from './types';
import { parseJournalJson } from './journal-json';

export interface UnitTailOptions {
  exec: Exec;
  /** False while the host's link is down: the tail waits instead of failing channel after channel. */
  isConnected: () => boolean;
  unit: string;
  clock: Clock;
  /** Entries kept for listeners that join later (and read as the backlog when the tail starts). */
  backlogLines?: number;
  /** Most entries fetched per poll; a full batch means a burst, fetched again at once. */
  batchLines?: number;
  /** The host's journal follow: new entries come from it instead of polling (exec then reads backlogs only). */
  feed?: JournalFeed;
}

export interface JournalListener {
  onLines(lines: JournalEntry[]): void;
  /** `cause` is the failure as thrown (link errors carry `explained.code`). */
  onError?(error: string, hint: string, cause: Error): void;
}

export interface JournalSubscription {
  /**
   * The backlog at the moment the listener went live (oldest first): every entry after it reaches onLines.
   * Rejects when the tail's first read fails; the subscription stays and goes live at the next good read.
   * It can be read once: the subscription then lets go of it, since a settled promise keeps its value for as
   * long as it is held, and a recorder's subscription lasts the whole session (it would keep up to a thousand
   * entries of every unit alive that the tail itself has long dropped). A second read rejects.
   */
  readonly backlog: Promise<JournalEntry[]>;
  /** Stops listening; the tail stops reading when nobody listens. */
  dispose(): void;
}

export interface UnitTailStats {
  /** journalctl commands run by this tail since it was created. */
  reads: number;
}

interface Sub {
  listener: JournalListener;
  intervalMs: number;
  live: boolean;
  resolve: (lines: JournalEntry[]) => void;
  reject: (err: Error) => void;
}

const settled = (): void => undefined;

const MAX_BYTES = 4 * 1024 * 1024;
const DEFAULT_BACKLOG = 1000;
const DEFAULT_BATCH = 1000;
/** After output too large for one read, skip to this many newest entries rather than never catching up. */
const CATCH_UP_LINES = 200;

export class UnitJournalTail {
  private readonly subs = new Set<Sub>();
  private readonly lines: JournalEntry[] = [];
  private cursor: string | null = null;
  private timer: ClockTimer | null = null;
  private reading: Promise<void> | null = null;
  /** The backlog has been read since the tail (re)started. */
  private filled = false;
  private failures = 0;
  private closed = false;
  /** Bumped when the tail goes idle: a read begun before belongs to nobody. */
  private generation = 0;
  private readonly counters: UnitTailStats = { reads: 0 };
  /** Entries the feed delivered before the backlog was read (feed mode); null when not attached. */
  private early: JournalEntry[] | null = null;
  /**
   * Cursors recently taken in (feed mode), oldest first: the feed, the backlog and readNow overlap at their seams,
   * and each entry is let through once, by whichever brought it first.
   */
  private readonly seen = new Set<string>();
  private readonly sink: FollowSink = {
    entries: (entries) => this.fromFeed(entries),
    failed: (error) => this.tellError(error, false),
  };

  constructor(private readonly opts: UnitTailOptions) {}

  get unit(): string {
    return this.opts.unit;
  }

  get listeners(): number {
    return this.subs.size;
  }

  get stats(): UnitTailStats {
    return { ...this.counters };
  }

  /** What the tail runs on the host, as the UI shows it. */
  get command(): string {
    return this.opts.feed?.command(this.opts.unit) ?? journalTailCommand(this.opts.unit, this.capacity);
  }

  /** The newest `n` entries of the backlog (oldest first). */
  latest(n: number): JournalEntry[] {
    return n <= 0 ? [] : this.lines.slice(-n);
  }

  /**
   * Listens from now on. `intervalMs` is how often this listener wants new entries; the tail polls at the
   * smallest interval among its listeners.
   */
  subscribe(listener: JournalListener, opts: { intervalMs?: number } = {}): JournalSubscription {
    if (this.closed)
      throw new Error(`the journal of ${this.opts.unit} is no longer followed (deployment closed)`);
    let resolve!: (lines: JournalEntry[]) => void;
    let reject!: (err: Error) => void;
    const backlog = new Promise<JournalEntry[]>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A listener that never looks at its backlog must not see an unhandled rejection.
    backlog.catch(() => undefined);
    const sub: Sub = { listener, intervalMs: opts.intervalMs ?? 1000, live: false, resolve, reject };
    this.subs.add(sub);
    if (this.filled) this.goLive(sub);
    // A followed tail that is filled already hears everything new; there is nothing to read for a newcomer.
    if (this.opts.feed && this.filled) return this.subscription(sub, backlog);
    if (!this.reading && !this.timer) this.schedule(0);
    else if (this.timer && sub.intervalMs < this.interval()) this.reschedule();
    return this.subscription(sub, backlog);
  }

  private subscription(sub: Sub, backlog: Promise<JournalEntry[]>): JournalSubscription {
    let untaken: Promise<JournalEntry[]> | null = backlog;
    const unit = this.opts.unit;
    return {
      get backlog() {
        const p =
          untaken ?? Promise.reject(new Error(`the backlog of ${unit} was read already (it is read once)`));
        untaken = null;
        return p;
      },
      dispose: () => {
        if (!this.subs.delete(sub)) return;
        sub.reject(new Error('stopped listening'));
        if (this.subs.size === 0) this.idle();
      },
    };
  }

  /** Reads what arrived since the last read now (joins a read in flight), e.g. before a final report. */
  async readNow(): Promise<void> {
    if (this.closed || this.subs.size === 0 || !this.opts.isConnected()) return;
    if (this.reading) await this.reading;
    if (this.closed || this.subs.size === 0) return;
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.read();
  }

  /** The deployment closed: stop for good and drop every listener. */
  close(): void {
    this.closed = true;
    for (const s of this.subs) s.reject(new Error('deployment closed'));
    this.subs.clear();
    this.idle();
  }

  private get capacity(): number {
    return this.opts.backlogLines ?? DEFAULT_BACKLOG;
  }

  private interval(): number {
    let ms = Infinity;
    for (const s of this.subs) ms = Math.min(ms, s.intervalMs);
    return Number.isFinite(ms) ? ms : 1000;
  }

  /** Nobody listens: stop reading. The next listener starts over from a fresh backlog (nothing read meanwhile). */
  private idle(): void {
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.early) this.opts.feed?.detach(this.opts.unit);
    this.early = null;
    this.seen.clear();
    this.filled = false;
    this.cursor = null;
    this.lines.length = 0;
    this.failures = 0;
    this.generation++;
  }

  private goLive(sub: Sub): void {
    sub.live = true;
    sub.resolve(this.lines.slice());
    // Settled: the resolving functions must not keep the promise (and the backlog in it) alive with the sub.
    sub.resolve = sub.reject = settled;
  }

  private schedule(ms: number): void {
    if (this.closed || this.subs.size === 0) return;
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = null;
      void this.read();
    }, ms);
  }

  private reschedule(): void {
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    this.schedule(this.interval());
  }

  private read(): Promise<void> {
    const p = this.readOnce().finally(() => {
      if (this.reading === p) this.reading = null;
    });
    this.reading = p;
    return p;
  }

  private async readOnce(): Promise<void> {
    if (this.closed || this.subs.size === 0) return;
    const interval = this.interval();
    if (!this.opts.isConnected()) {
      // Not a failure of the journal: the connection banner says what is wrong; pick up where we were.
      this.schedule(interval);
      return;
    }
    const batch = this.opts.batchLines ?? DEFAULT_BATCH;
    const wasFilled = this.filled;
    const generation = this.generation;
    let entries: JournalEntry[];
    try {
      if (this.opts.feed && !wasFilled) {
        // Attach first: once the follow has its position, a backlog read from now on misses nothing.
        this.early ??= [];
        await this.opts.feed.attach(this.opts.unit, this.sink);
        if (this.stale(generation)) return;
      }
      entries = await this.fetch(
        wasFilled && this.cursor
          ? journalAfterCursorCommand(this.opts.unit, this.cursor, batch)
          : journalTailCommand(this.opts.unit, wasFilled ? batch : this.capacity),
      );
    } catch (err) {
      if (this.stale(generation)) return;
      this.failed(err as Error, wasFilled);
      return;
    }
    if (this.stale(generation)) return;
    this.failures = 0;
    if (this.opts.feed) return this.tookFollowed(entries, wasFilled);
    if (entries.length > 0) {
      this.cursor = entries[entries.length - 1].cursor;
      this.lines.push(...entries);
      if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
    }
    if (!wasFilled) {
      this.filled = true;
      for (const s of this.subs) if (!s.live) this.goLive(s);
    } else if (entries.length > 0) {
      for (const s of [...this.subs])
        if (s.live) {
          try {
            s.listener.onLines(entries);
          } catch {
            // One listener's bug must not starve the others; the listener's owner reports its own failures.
          }
        }
    }
    this.schedule(wasFilled && entries.length >= batch ? 0 : interval);
  }

  /**
   * Feed mode: `entries` is the backlog (first read) or what readNow found after the last cursor. The follow
   * delivers everything else, so nothing is scheduled.
   */
  private tookFollowed(entries: JournalEntry[], wasFilled: boolean): void {
    if (!wasFilled) {
      for (const e of entries) this.remember(e.cursor);
      const early = this.early ?? [];
      this.early = [];
      this.keep(entries);
      this.keep(this.fresh(early));
      this.filled = true;
      for (const s of this.subs) if (!s.live) this.goLive(s);
      return;
    }
    this.deliver(this.fresh(entries));
  }

  private fromFeed(entries: JournalEntry[]): void {
    if (this.closed || this.subs.size === 0 || !this.early) return;
    if (!this.filled) {
      this.early.push(...entries);
      if (this.early.length > this.capacity) this.early.splice(0, this.early.length - this.capacity);
      return;
    }
    this.deliver(this.fresh(entries));
  }

  /** The entries not taken in yet, now marked as taken. */
  private fresh(entries: JournalEntry[]): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (const e of entries) {
      if (this.seen.has(e.cursor)) continue;
      this.remember(e.cursor);
      out.push(e);
    }
    return out;
  }

  private remember(cursor: string): void {
    this.seen.add(cursor);
    if (this.seen.size > 2 * this.capacity) this.seen.delete(this.seen.values().next().value!);
  }

  private keep(entries: JournalEntry[]): void {
    if (entries.length === 0) return;
    this.cursor = entries[entries.length - 1].cursor;
    this.lines.push(...entries);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }

  private deliver(entries: JournalEntry[]): void {
    if (entries.length === 0) return;
    this.keep(entries);
    for (const s of [...this.subs])
      if (s.live) {
        try {
          s.listener.onLines(entries);
        } catch {
          // One listener's bug must not starve the others; the listener's owner reports its own failures.
        }
      }
  }

  /**
   * Everyone left (and maybe someone new came) while a read was in flight: its answer belongs to nobody, and a
   * newcomer who found the read running is started here.
   */
  private stale(generation: number): boolean {
    if (generation === this.generation && !this.closed && this.subs.size > 0) return false;
    if (!this.closed && this.subs.size > 0 && !this.timer) this.schedule(0);
    return true;
  }

  private failed(err: Error, wasFilled: boolean): void {
    this.failures++;
    this.tellError(err, !wasFilled);
    // A followed tail that is filled keeps hearing the follow (which retries by itself): only readNow failed.
    if (this.opts.feed && wasFilled) return;
    this.schedule(Math.min(30_000, this.interval() * 2 ** Math.min(5, this.failures)));
  }

  private tellError(err: Error, rejectWaiting: boolean): void {
    const error = `following the journal of ${this.opts.unit} failed: ${err.message}`;
    const hint = this.failures > 1 ? 'Retrying with backoff; check the connection banner.' : 'Retrying.';
    for (const s of [...this.subs]) {
      if (rejectWaiting && !s.live) s.reject(new Error(err.message));
      try {
        s.listener.onError?.(error, hint, err);
      } catch {
        // As above: a listener's failure is its own.
      }
    }
  }

  private async fetch(command: string): Promise<JournalEntry[]> {
    let res: ExecResult;
    let caughtUp = false;
    this.counters.reads++;
    try {
      res = await this.opts.exec(command, { timeoutMs: 10_000, maxBytes: MAX_BYTES });
    } catch (err) {
      if ((err as { explained?: { code?: string } }).explained?.code !== 'output-too-large') throw err;
      // More than the byte cap since the last read: skip to the newest entries; the middle stays on the host.
      this.counters.reads++;
      caughtUp = true;
      res = await this.opts.exec(journalTailCommand(this.opts.unit, CATCH_UP_LINES), {
        timeoutMs: 10_000,
        maxBytes: MAX_BYTES,
      });
    }
    if (res.exitCode !== 0 && !res.stdout.trim()) {
      const why = res.stderr.trim().split('\n')[0]?.slice(0, 200) || `exit code ${res.exitCode}`;
      throw new Error(
        /permission|not seeing messages/i.test(why)
          ? `${why} (add the SSH user to the systemd-journal or adm group)`
          : why,
      );
    }
    const lines = parseJournalJson(res.stdout).lines;
    if (!caughtUp || !this.cursor) return lines;
    // The newest entries may reach back to ones already heard (a few very large entries): keep what is new.
    const seen = lines.findIndex((l) => l.cursor === this.cursor);
    return seen >= 0 ? lines.slice(seen + 1) : lines;
  }
}
