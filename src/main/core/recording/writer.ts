// RecordingWriter: appends one session to a gzip'd JSON-lines file (format in docs/recording-format.md).
// Appends are synchronous and cheap (encode to a string, queue it); compression runs in zlib's thread pool and the
// file is written by an fs stream, so the event loop never waits on either. A Z_SYNC_FLUSH at least every
// flushIntervalMs puts everything appended so far into the file as complete deflate blocks: a kill -9 loses
// only what was appended since the last flush. Each flush also seals the block it ends with a checksum record
// (block-sum.ts), so damage in a file that was never closed is found, not decoded into other values. Every
// string that goes in passes the redactor first: a recording never holds a secret, whoever the caller is.
// With an overview the file is a sequence of gzip members: every OVERVIEW_SEGMENT_MS the data member is ended
// and a small marked member with the overview of that segment follows (overview-stream.ts), and at close an
// index member lists where the overview members are, so a reader draws the whole span from a fraction of the file.
import { createWriteStream, type WriteStream } from 'node:fs';
import { constants as zc, createGzip, type Gzip } from 'node:zlib';
import type { AppEvent, HealthResult, UnitState } from '@shared/domain';
import type { Exposition } from '../probes/exposition/types';
import { systemClock, type Clock, type ClockTimer } from '../clock';
import {
  DEFAULT_FLUSH_INTERVAL_MS,
  FORMAT_ID,
  FORMAT_MINOR_VERSION,
  FORMAT_VERSION,
  MAX_FLUSH_INTERVAL_MS,
  type EndRecord,
  type EventRecord,
  type HealthRecord,
  type IndexRecord,
  type JournalRecord,
  type UnitRecord,
} from './format';
import { ScrapeEncoder } from './scrape-codec';
import { BLOCK_CHECKSUMS, BlockSealer, SEAL_BYTES } from './block-sum';
import { LineRedactor, redactJson, redactSecrets } from './redact';
import { markedMember } from './members';
import {
  DEFAULT_OVERVIEW_STEP_MS,
  OVERVIEW_SEGMENT_CHARS,
  OVERVIEW_SEGMENT_MS,
  OverviewStream,
  type OverviewTable,
} from './overview-stream';
import type { JournalLine, RecordingHeader, SourceKey, StoredHeader, WriterStats } from './types';

/** An empty write on the file stream: its callback says every write before it is done. */
const EMPTY = Buffer.alloc(0);

export interface WriterOptions {
  /** How often buffered records are pushed into the file (Z_SYNC_FLUSH). 100…4000 ms; default 2000. */
  flushIntervalMs?: number;
  clock?: Clock;
  /** zlib level 1…9; default 6. */
  level?: number;
  /** Compressed-but-unwritten plus uncompressed-queued bytes above which the recording stops (slow disk). */
  maxQueuedBytes?: number;
  /**
   * The overview written as the session goes: review's signals (`table`) at one row per target every `stepMs`
   * (default 30 s). Absent or `false`: one gzip member and no overview (a reader then reads the data).
   */
  overview?:
    | {
        stepMs?: number;
        table: (header: StoredHeader, stepMs: number) => OverviewTable;
      }
    | false;
}

/** One gzip member on its way to the file, in file order. */
interface MemberSlot {
  chunks: Buffer[];
  done: boolean;
  /** An overview member: its place goes into the index once it is written. */
  overview?: { t0: number; t1: number };
  /** Built when its turn comes (the index, which needs every earlier member's offset). */
  build?: () => Buffer;
}

/** A unit state whose only change is its memory figure is stored at most this often. */
const MEMORY_ONLY_CHANGE_MIN_MS = 60_000;
/** Queue records as one string until this size, then hand them to zlib (fewer, larger thread-pool jobs). */
const PENDING_CHUNK_CHARS = 256 * 1024;
const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;

export class RecordingWriter {
  private readonly encoder = new ScrapeEncoder();
  private readonly sealer = new BlockSealer();
  private readonly journalRedactor = new LineRedactor();
  private readonly flushIntervalMs: number;
  private readonly clock: Clock;
  private readonly maxQueuedBytes: number;
  private readonly level: number;
  private readonly overview: OverviewStream | null;
  private gzip!: Gzip;
  private readonly members: MemberSlot[] = [];
  private memberBytesQueued = 0;
  /** Bytes handed to the file so far: the offset of the next member. */
  private offset = 0;
  private readonly overviewIndex: [number, number, number, number][] = [];
  private drained: (() => void) | null = null;
  private pending = '';
  private dirty = false;
  private lastFlushAt: number;
  private timer: ClockTimer | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;
  private failure: Error | null = null;
  private readonly errorListeners = new Set<(err: Error) => void>();
  private readonly lastUnit = new Map<
    string,
    { key: string; memory: number | null | undefined; at: number }
  >();
  private readonly lastHealth = new Map<string, string>();
  private readonly counters = { records: 0, scrapes: 0, samples: 0, outOfOrderDropped: 0 };
  private lastTs: number | null = null;

  private constructor(
    readonly path: string,
    readonly header: StoredHeader,
    private readonly file: WriteStream,
    opts: Required<Pick<WriterOptions, 'flushIntervalMs' | 'clock' | 'maxQueuedBytes' | 'level'>> & {
      overview: OverviewStream | null;
    },
  ) {
    this.flushIntervalMs = opts.flushIntervalMs;
    this.clock = opts.clock;
    this.maxQueuedBytes = opts.maxQueuedBytes;
    this.level = opts.level;
    this.overview = opts.overview;
    this.lastFlushAt = this.clock.now();
    file.on('error', (err: Error) => this.fail(err));
    this.startDataMember();
    this.armTimer();
  }

  /**
   * Creates `path` (it must not exist) and writes the header. Resolves once the header is in the file, so a
   * recording that crashes right away is still recognisable.
   */
  static async open(
    path: string,
    header: RecordingHeader,
    opts: WriterOptions = {},
  ): Promise<RecordingWriter> {
    const flushIntervalMs = opts.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    if (!(flushIntervalMs >= 100 && flushIntervalMs <= MAX_FLUSH_INTERVAL_MS))
      throw new RangeError(
        `flushIntervalMs must be 100…${MAX_FLUSH_INTERVAL_MS} ms (a crash loses up to that much), got ${flushIntervalMs}`,
      );
    validateHeader(header);
    // Host and deployment hold URLs, which may carry credentials (http://user:pass@…).
    const counter = { count: 0 };
    const ov = opts.overview || null;
    const stepMs = ov ? (ov.stepMs ?? DEFAULT_OVERVIEW_STEP_MS) : 0;
    if (ov && !(stepMs >= 1000 && stepMs <= 600_000))
      throw new RangeError(`overview.stepMs must be 1000…600000 ms, got ${stepMs}`);
    const stored: StoredHeader = {
      format: FORMAT_ID,
      version: FORMAT_VERSION,
      minorVersion: FORMAT_MINOR_VERSION,
      ...header,
      host: redactJson(header.host, counter),
      deployment: redactJson(header.deployment, counter),
      ...(header.fleet ? { fleet: redactJson(header.fleet, counter) } : {}),
      flushIntervalMs,
      blockChecksums: BLOCK_CHECKSUMS,
      ...(ov ? { overview: { stepMs, signals: true as const } } : {}),
    };
    // The file holds journal lines and unit command lines: keep it private to the user.
    const file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    await new Promise<void>((resolve, reject) => {
      file.once('open', () => resolve());
      file.once('error', (err) =>
        reject(
          new Error(
            `Cannot create recording ${path}: ${err.message}. Check the folder exists and is writable.`,
          ),
        ),
      );
    });
    const w = new RecordingWriter(path, stored, file, {
      flushIntervalMs,
      clock: opts.clock ?? systemClock,
      maxQueuedBytes: opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES,
      level: opts.level ?? 6,
      overview: ov ? new OverviewStream(stepMs, ov.table(stored, stepMs)) : null,
    });
    w.push(JSON.stringify(stored) + '\n', header.startedAt);
    await w.flush();
    if (w.failure) throw w.failure;
    return w;
  }

  /** Appends one scrape of `target`. Synchronous; stores parsed values (exactly), new series inline. */
  appendScrape(ts: number, target: SourceKey, exp: Exposition): void {
    if (!this.accepting(ts)) return;
    const r = this.encoder.encode(ts, target, exp);
    if (r.dropped) {
      this.counters.outOfOrderDropped++;
      return;
    }
    this.counters.scrapes++;
    this.counters.samples += r.samples;
    this.overview?.scrape(ts, target, exp);
    this.push(r.text, ts);
  }

  /** Stores the unit state only when it differs from the last one stored for `source`. */
  appendUnitState(ts: number, source: SourceKey, s: UnitState): void {
    if (!this.accepting(ts)) return;
    const { memoryCurrentBytes, ...rest } = s;
    const key = JSON.stringify(rest);
    const last = this.lastUnit.get(source);
    if (last && last.key === key) {
      if (last.memory === memoryCurrentBytes || ts - last.at < MEMORY_ONLY_CHANGE_MIN_MS) return;
    }
    this.lastUnit.set(source, { key, memory: memoryCurrentBytes, at: ts });
    this.overview?.unit(ts, source, s);
    // ExecStart may carry --api-key and friends.
    const rec: UnitRecord = {
      k: 'unit',
      t: ts,
      r: source,
      s: s.execStart ? { ...s, execStart: redactSecrets(s.execStart) } : s,
    };
    this.push(JSON.stringify(rec) + '\n', ts, true);
  }

  /** Stores the health result only when ok/status/detail differ from the last one stored for `source`. */
  appendHealth(ts: number, source: SourceKey, h: HealthResult): void {
    if (!this.accepting(ts)) return;
    const key = JSON.stringify([h.ok, h.status ?? null, h.detail]);
    if (this.lastHealth.get(source) === key) return;
    this.lastHealth.set(source, key);
    this.overview?.health(ts, source, h);
    const rec: HealthRecord = { k: 'health', t: ts, r: source, h };
    this.push(JSON.stringify(rec) + '\n', ts, true);
  }

  /** Alerts, operator actions, restart steps, annotations… every event is stored, every string redacted. */
  appendEvent(e: AppEvent): void {
    if (!this.accepting(e.ts)) return;
    const rec: EventRecord = { k: 'event', t: e.ts, e: redactJson(e, { count: 0 }) };
    this.push(JSON.stringify(rec) + '\n', e.ts, true);
  }

  appendJournal(line: JournalLine): void {
    if (!this.accepting(line.ts)) return;
    const rec: JournalRecord = {
      k: 'journal',
      t: line.ts,
      r: line.role,
      u: line.unit,
      p: line.priority,
      // Per unit: a private key printed over several lines is removed up to its END line.
      m: this.journalRedactor.line(`${line.role}\u0000${line.unit}`, line.message),
    };
    this.push(JSON.stringify(rec) + '\n', line.ts);
  }

  /** Pushes everything appended so far into the file. */
  flush(): Promise<void> {
    if (this.failure || this.closed) return Promise.resolve();
    return this.flushNow();
  }

  /** Writes the end record and closes the file. Errors after a failure already reported via onError are not rethrown. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = this.doClose();
    return this.closing;
  }

  /** Called once if the recording stops (disk full, I/O error…). Monitoring should carry on. Returns an unsubscribe. */
  onError(cb: (err: Error) => void): () => void {
    this.errorListeners.add(cb);
    if (this.failure) queueMicrotask(() => cb(this.failure as Error));
    return () => this.errorListeners.delete(cb);
  }

  /** The error that stopped the recording, if any. */
  get error(): Error | null {
    return this.failure;
  }

  get isOpen(): boolean {
    return !this.closed && !this.failure;
  }

  get stats(): WriterStats {
    return {
      bytesWritten: this.file.bytesWritten,
      records: this.counters.records,
      scrapes: this.counters.scrapes,
      samples: this.counters.samples,
      series: this.encoder.seriesCount,
      outOfOrderDropped: this.counters.outOfOrderDropped,
      lastTs: this.lastTs,
      queuedBytes:
        this.pending.length + this.gzip.writableLength + this.memberBytesQueued + this.file.writableLength,
    };
  }

  // ---- internals ----

  private accepting(ts: number): boolean {
    if (this.closed || this.closing)
      throw new Error(`Recording ${this.path} is closed; start a new recording.`);
    if (!Number.isFinite(ts))
      throw new RangeError(`Recording ${this.path}: timestamp must be epoch ms, got ${ts}`);
    return this.failure === null;
  }

  /** `overview`: a small, rare record (unit, health, event) that the overview carries in full. */
  private push(text: string, ts: number, overview = false): void {
    if (!text) return;
    this.write(text);
    this.dirty = true;
    this.counters.records++;
    if (this.lastTs === null || ts > this.lastTs) this.lastTs = ts;
    const ov = this.overview;
    if (ov) {
      if (overview) ov.record(text, ts);
      if (this.lastTs - ov.firstTs >= OVERVIEW_SEGMENT_MS || ov.pendingChars >= OVERVIEW_SEGMENT_CHARS) {
        this.rotate();
        return;
      }
    }
    if (this.sealer.pendingBytes >= SEAL_BYTES) this.pending += this.sealer.seal(this.lastTs);
    if (this.pending.length >= PENDING_CHUNK_CHARS) this.drainPending();
    if (this.clock.now() - this.lastFlushAt >= this.flushIntervalMs) void this.flushNow();
  }

  // ---- gzip members, in file order ----

  private startDataMember(): void {
    const slot: MemberSlot = { chunks: [], done: false };
    this.members.push(slot);
    const gz = createGzip({ level: this.level, memLevel: 9 });
    gz.on('data', (chunk: Buffer) => this.emit(slot, chunk));
    gz.on('end', () => {
      slot.done = true;
      this.pump();
    });
    gz.on('error', (err: Error) => this.fail(err));
    this.gzip = gz;
  }

  private emit(slot: MemberSlot, chunk: Buffer): void {
    if (this.failure) return;
    slot.chunks.push(chunk);
    this.memberBytesQueued += chunk.length;
    if (this.members[0] === slot) this.pump();
  }

  /** Writes the head member's output; moves on once it is complete. */
  private pump(): void {
    for (;;) {
      const head = this.members[0];
      if (!head || this.failure) break;
      if (head.build) {
        head.chunks.push(head.build());
        head.build = undefined;
      }
      for (const c of head.chunks) {
        if (head.overview)
          this.overviewIndex.push([this.offset, c.length, head.overview.t0, head.overview.t1]);
        this.file.write(c);
        this.offset += c.length;
      }
      for (const c of head.chunks) this.memberBytesQueued -= c.length;
      head.chunks.length = 0;
      if (!head.done) return;
      this.members.shift();
    }
    if (this.members.length === 0) this.drained?.();
  }

  /** Ends the data member, puts the overview of the segment after it, and starts the next data member. */
  private rotate(): void {
    const seg = this.overview?.take();
    if (!seg) return;
    this.pending += this.sealer.seal(this.lastTs ?? this.header.startedAt);
    this.drainPending();
    if (this.failure) return;
    this.dirty = false;
    this.lastFlushAt = this.clock.now();
    this.gzip.end();
    this.members.push({
      chunks: [markedMember('overview', seg.body)],
      done: true,
      overview: { t0: seg.t0, t1: seg.t1 },
    });
    this.startDataMember();
    this.pump();
  }

  private write(text: string): void {
    this.pending += text;
    this.sealer.add(text);
  }

  private drainPending(): void {
    if (!this.pending) return;
    this.gzip.write(this.pending);
    this.pending = '';
    const queued = this.gzip.writableLength + this.file.writableLength;
    if (queued > this.maxQueuedBytes)
      this.fail(
        new Error(
          `${Math.round(queued / 1048576)} MB waiting to be written: the disk cannot keep up with the recording`,
        ),
      );
  }

  private flushNow(): Promise<void> {
    this.lastFlushAt = this.clock.now();
    if (!this.dirty || this.failure) return Promise.resolve();
    this.dirty = false;
    this.pending += this.sealer.seal(this.lastTs ?? this.header.startedAt);
    this.drainPending();
    if (this.failure) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.gzip.flush(zc.Z_SYNC_FLUSH, () => {
        // The flushed bytes are on the file stream's queue now (pump), not yet in the file: under load a copy of
        // the file taken right after flush() lacked them. An empty write completes after every write before it.
        if (this.failure || this.file.writableLength === 0) return resolve();
        this.file.write(EMPTY, () => resolve());
      });
    });
  }

  private armTimer(): void {
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      if (this.closed || this.failure) return;
      if (this.dirty && this.clock.now() - this.lastFlushAt >= this.flushIntervalMs / 2) void this.flushNow();
      this.armTimer();
    }, this.flushIntervalMs / 2);
  }

  private async doClose(): Promise<void> {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    if (!this.failure) {
      const end: EndRecord = { k: 'end', t: this.lastTs ?? this.header.startedAt };
      this.write(JSON.stringify(end) + '\n');
      this.pending += this.sealer.seal(end.t);
      this.counters.records++;
      this.drainPending();
    }
    if (!this.failure) {
      await new Promise<void>((resolve) => {
        this.file.once('close', () => resolve());
        this.file.once('error', () => resolve());
        this.drained = () => {
          this.drained = null;
          this.file.end();
        };
        this.gzip.end();
        const seg = this.overview?.take(true);
        if (seg)
          this.members.push({
            chunks: [markedMember('overview', seg.body)],
            done: true,
            overview: { t0: seg.t0, t1: seg.t1 },
          });
        if (this.overview) this.members.push({ chunks: [], done: true, build: () => this.indexMember() });
        this.pump();
      });
    }
    this.closed = true;
    if (this.failure && this.errorListeners.size === 0) throw this.failure;
  }

  /** The index member: where every overview member is, so a reader needs only the file's tail to find them. */
  private indexMember(): Buffer {
    const rec: IndexRecord = { k: 'index', t: this.lastTs ?? this.header.startedAt, o: this.overviewIndex };
    const line = JSON.stringify(rec) + '\n';
    const sealer = new BlockSealer();
    sealer.add(line);
    return markedMember('index', Buffer.from(line + sealer.seal(rec.t)));
  }

  private fail(err: Error): void {
    if (this.failure) return;
    const hint =
      (err as NodeJS.ErrnoException).code === 'ENOSPC'
        ? 'the disk is full; free space or choose another recordings folder'
        : 'check the recordings folder and the disk';
    this.failure = new Error(
      `Recording ${this.path} stopped: ${err.message}. Monitoring continues without recording; ${hint}, then start a new recording. The file stays readable up to the last flush.`,
      { cause: err },
    );
    this.pending = '';
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.gzip.destroy();
    this.members.length = 0;
    this.file.destroy();
    for (const cb of this.errorListeners) cb(this.failure);
  }
}

function validateHeader(h: RecordingHeader): void {
  const problems: string[] = [];
  if (typeof h.sessionId !== 'string' || !h.sessionId) problems.push('sessionId');
  if (typeof h.name !== 'string') problems.push('name');
  if (!Number.isFinite(h.startedAt)) problems.push('startedAt');
  if (!h.host || typeof h.host.id !== 'string') problems.push('host.id');
  if (!h.deployment || typeof h.deployment.id !== 'string') problems.push('deployment.id');
  if (typeof h.appVersion !== 'string') problems.push('appVersion');
  if (problems.length)
    throw new TypeError(`Recording header is missing or has invalid: ${problems.join(', ')}`);
}
