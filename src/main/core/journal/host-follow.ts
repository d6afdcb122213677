// One `journalctl --follow` per host for every unit someone listens to, instead of one poll per unit every
// second or two: the units' tails attach to it, it runs `journalctl -o json --follow -u A -u B …` on one channel
// and hands each entry to the tails of the units it belongs to. Nothing is lost or repeated across a restart of
// the follow (a unit attached or detached, the link dropped, journalctl exited): it remembers the cursor of the
// last entry it received and starts again with --after-cursor. The first start needs a position too: the newest
// entry of the whole journal, read before any tail reads its backlog (see attach), so an entry is always either
// in a backlog or after the position, and the tails drop the few that are both.
import { StringDecoder } from 'node:string_decoder';
import type { JournalEntry } from '@shared/contract';
import type { Clock, ClockTimer } from '../clock';
import type { CommandStream, StreamHandlers } from '../ssh/connection';
import { journalFollowUnitsCommand, journalPositionCommand } from './commands';
import { JOURNAL_FIELDS, parseJournalJson, parseJournalRecord } from './journal-json';
import type { Exec, FollowSink, JournalFeed } from './types';

export interface HostFollowOptions {
  /** The host's name in messages. */
  label: string;
  exec: Exec;
  open: (command: string, handlers: StreamHandlers) => Promise<CommandStream>;
  isConnected: () => boolean;
  clock: Clock;
}

export interface HostFollowStats {
  /** Follow channels opened. */
  follows: number;
  /** Position reads (journalctl -n 1) run. */
  positionReads: number;
  /** Entries received over the follow. */
  entries: number;
}

/** A journal line longer than this is not an entry we can use; it is dropped rather than buffered without end. */
const MAX_LINE_CHARS = 4 * 1024 * 1024;
const RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;

export class HostJournalFollow implements JournalFeed {
  /** This host's journalctl refused --output-fields: every field is read. */
  private allFields = false;
  private readonly sinks = new Map<string, FollowSink>();
  /** The same sinks by the name journalctl reports (unit names given without a type get .service). */
  private readonly route = new Map<string, FollowSink>();
  /** Cursor of the last entry received (or the position read): where the next follow starts after. */
  private resume: string | null = null;
  /** A position is known: `resume`, or null because the journal was empty when read. */
  private positioned = false;
  private positioning: Promise<void> | null = null;
  private stream: CommandStream | null = null;
  /** Bumped whenever the follow is dropped: output of an older channel belongs to nobody. */
  private streamId = 0;
  private decoder = new StringDecoder('utf8');
  private partial = '';
  private stderr = '';
  private timer: ClockTimer | null = null;
  private failures = 0;
  private closed = false;
  private readonly counters: HostFollowStats = { follows: 0, positionReads: 0, entries: 0 };

  constructor(private readonly opts: HostFollowOptions) {}

  get stats(): HostFollowStats {
    return { ...this.counters };
  }

  /** Units followed now. */
  get units(): string[] {
    return [...this.sinks.keys()];
  }

  command(unit: string): string {
    const units = this.sinks.has(unit) ? this.units : [...this.units, unit];
    return journalFollowUnitsCommand(units, null).replace(' --lines=all', '');
  }

  attach(unit: string, sink: FollowSink): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the journal follow of ${this.opts.label} has stopped`));
    const had = this.sinks.has(unit);
    this.sinks.set(unit, sink);
    this.route.set(mangled(unit), sink);
    if (!had) this.restart();
    return this.position();
  }

  detach(unit: string): void {
    if (!this.sinks.delete(unit)) return;
    this.route.delete(mangled(unit));
    if (this.sinks.size > 0) return this.restart();
    // Nobody listens: stop, and forget the position, so a later listener does not replay the time in between.
    this.drop();
    this.cancelTimer();
    this.resume = null;
    this.positioned = false;
    this.failures = 0;
  }

  /** The monitor stopped: end the follow for good. */
  close(): void {
    this.closed = true;
    this.sinks.clear();
    this.route.clear();
    this.drop();
    this.cancelTimer();
  }

  private position(): Promise<void> {
    if (this.positioned) return Promise.resolve();
    this.positioning ??= this.readPosition().finally(() => (this.positioning = null));
    return this.positioning;
  }

  private async readPosition(): Promise<void> {
    this.counters.positionReads++;
    const res = await this.opts.exec(journalPositionCommand(), { timeoutMs: 10_000, maxBytes: 1024 * 1024 });
    if (res.exitCode !== 0 && !res.stdout.trim()) throw journalctlError(res.stderr, res.exitCode, null);
    if (this.positioned) return;
    const newest = parseJournalJson(res.stdout).lines.at(-1);
    this.resume = newest?.cursor ?? null;
    this.positioned = true;
  }

  /** The set of units changed: end the follow now (its position stays) and start the new one at once. */
  private restart(): void {
    this.drop();
    this.failures = 0;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.cancelTimer();
    if (this.closed || this.sinks.size === 0) return;
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = null;
      void this.start();
    }, ms);
  }

  private cancelTimer(): void {
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private async start(): Promise<void> {
    if (this.closed || this.sinks.size === 0 || this.stream) return;
    if (!this.opts.isConnected()) {
      // Not a failure of the journal: the connection banner says what is wrong; pick up where we were.
      this.schedule(RETRY_MS);
      return;
    }
    const id = ++this.streamId;
    try {
      await this.position();
      if (id !== this.streamId || this.closed) return;
      const fields = this.allFields ? null : JOURNAL_FIELDS;
      const stream = await this.opts.open(journalFollowUnitsCommand(this.units, this.resume, fields), {
        stdout: (d) => {
          if (id === this.streamId) this.onStdout(d);
        },
        stderr: (d) => {
          if (id === this.streamId) this.onStderr(d);
        },
        closed: (code, signal) => {
          if (id === this.streamId) this.onClosed(code, signal);
        },
      });
      this.counters.follows++;
      if (id !== this.streamId || this.closed) return stream.close();
      this.stream = stream;
    } catch (err) {
      if (id !== this.streamId || this.closed) return;
      this.fail(err as Error);
    }
  }

  private onStdout(chunk: Buffer): void {
    const text = this.partial + this.decoder.write(chunk);
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MAX_LINE_CHARS) this.partial = '';
    const batches = new Map<FollowSink, JournalEntry[]>();
    for (const line of lines) {
      const record = parseJournalRecord(line.trim());
      // "-- Boot … --" separators and warnings are not entries.
      if (!record) continue;
      this.resume = record.entry.cursor;
      this.counters.entries++;
      this.failures = 0;
      for (const unit of record.units) {
        const sink = this.route.get(unit);
        if (!sink) continue;
        const batch = batches.get(sink);
        if (batch) batch.push(record.entry);
        else batches.set(sink, [record.entry]);
      }
    }
    for (const [sink, entries] of batches) {
      try {
        sink.entries(entries);
      } catch {
        // One tail's listener bug must not starve the other units; the tail reports its own failures.
      }
    }
  }

  private onStderr(chunk: Buffer): void {
    const before = this.stderr;
    this.stderr = (this.stderr + chunk.toString('utf8')).slice(-2000);
    // journalctl keeps following, but shows only the SSH user's own entries: say why the units stay silent.
    if (!/not seeing messages/i.test(before) && /not seeing messages/i.test(this.stderr))
      this.tell(journalctlError(this.stderr, 0, null));
  }

  private onClosed(code: number | null, signal: string | null): void {
    const stderr = this.stderr;
    this.drop();
    if (this.closed || this.sinks.size === 0) return;
    if (!this.opts.isConnected()) {
      // The link went; the follow starts again after the last entry once it is back.
      this.schedule(RETRY_MS);
      return;
    }
    if (!this.allFields && /output-fields/.test(stderr)) {
      // systemd before 236 does not know the option: follow with every field from now on, at once.
      this.allFields = true;
      this.schedule(0);
      return;
    }
    this.fail(journalctlError(stderr, code, signal));
  }

  private fail(error: Error): void {
    this.failures++;
    this.tell(error);
    this.schedule(Math.min(MAX_RETRY_MS, RETRY_MS * 2 ** Math.min(5, this.failures - 1)));
  }

  private tell(error: Error): void {
    for (const sink of [...this.sinks.values()]) {
      try {
        sink.failed(error);
      } catch {
        // As above: a listener's failure is its own.
      }
    }
  }

  /** Ends the current follow channel, if any; its late output is ignored. */
  private drop(): void {
    this.streamId++;
    const s = this.stream;
    this.stream = null;
    this.decoder = new StringDecoder('utf8');
    this.partial = '';
    this.stderr = '';
    s?.close();
  }
}

/** journalctl's own complaint, with what the operator can do about the usual one. */
function journalctlError(stderr: string, code: number | null, signal: string | null): Error {
  const why =
    stderr
      .trim()
      .split('\n')
      .find((l) => l.trim())
      ?.slice(0, 200) ||
    (signal ? `journalctl ended by signal ${signal}` : `journalctl exited with code ${code}`);
  return new Error(
    /permission|not seeing messages/i.test(why)
      ? `${why} (add the SSH user to the systemd-journal or adm group)`
      : why,
  );
}

/** The name journalctl -u matches for a unit given without its type (it appends .service). */
function mangled(unit: string): string {
  return /\.[a-z]+$/.test(unit) ? unit : `${unit}.service`;
}
