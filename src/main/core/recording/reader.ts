// Opening recordings: decompresses the gzip'd JSON lines as a stream (inflate runs in zlib's thread pool while
// lines are decoded here), rebuilds series as columns, and reads a damaged file up to the damage, saying which
// time range was lost.
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { constants as zc, createGunzip, gunzipSync } from 'node:zlib';
import type { AppEvent } from '@shared/domain';
import {
  DEFAULT_FLUSH_INTERVAL_MS,
  FILE_EXTENSION,
  FORMAT_ID,
  FORMAT_VERSION,
  RecordingOpenError,
  type WireRecord,
} from './format';
import { isRowLine, ParsedRow, rowTime, RowParser } from './row-parser';
import { RecordDamageError, ScrapeDecoder } from './scrape-codec';
import { OVERVIEW_KIND_PREFIX } from './overview-stream';
import { BLOCK_CHECKSUMS, BlockChecker, MAX_BLOCK_BYTES, SUM_PREFIX } from './block-sum';
import { DerivedFilter, readTailIndex, type TailIndex } from './layout';
import { integrityOf } from './derived-damage';
import type {
  JournalLine,
  ReadOptions,
  RecordedSeries,
  Recording,
  SeriesInfo,
  StoredHeader,
  StreamEnd,
  TimedHealth,
  TimedUnitState,
} from './types';

/** A header line longer than this is not ours (it guards against slurping a huge foreign gzip file). */
const MAX_HEADER_CHARS = 1024 * 1024;
/** Any other single record longer than this is damage. */
const MAX_RECORD_CHARS = 64 * 1024 * 1024;
const BLOCK_ROWS = 4096;

export const iso = (ms: number): string =>
  Number.isFinite(ms) ? new Date(ms).toISOString() : 'an unknown time';

/** A complete line: bytes [start, end) of buf, without the newline. */
type LineHandler = (buf: Buffer, start: number, end: number) => void;

const NL = 10;
const NL_BUF = Buffer.from('\n');
const SUM_PREFIX_BUF = Buffer.from(SUM_PREFIX);
/** Decompressed bytes allowed to wait for parsing before zlib is paused, and resumed. */
const QUEUE_HIGH = 8 * 1024 * 1024;
const QUEUE_LOW = 2 * 1024 * 1024;
/**
 * Deflate can inflate 1 KiB into 1 MiB (a "gzip bomb"). PD Console's recordings inflate about 3–15× (JSON lines of
 * integer deltas and journal text; an idle deployment ~20×), so a file that inflates more than MAX_INFLATE_RATIO
 * times what has been read of it is refused once RATIO_CHECK_AFTER bytes came out, before it can fill the memory.
 */
export const MAX_INFLATE_RATIO = 100;
const RATIO_CHECK_AFTER = 16 * 1024 * 1024;

/**
 * True when the line buf[start, end) is longer than `prefix` and starts with it. A loop, not Buffer.compare: the
 * prefixes differ from a scrape row within 8 bytes, and a native call per test cost ~0.1 s of a day's read.
 */
function startsWith(buf: Uint8Array, start: number, end: number, prefix: Uint8Array): boolean {
  if (end - start <= prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[start + i] !== prefix[i]) return false;
  return true;
}

function isSumLine(buf: Buffer, start: number, end: number): boolean {
  return startsWith(buf, start, end, SUM_PREFIX_BUF);
}

function sealsBlocks(headerLine: string): boolean {
  try {
    return (JSON.parse(headerLine) as { blockChecksums?: unknown }).blockChecksums === BLOCK_CHECKSUMS;
  } catch {
    return false;
  }
}

/**
 * Streams the decompressed lines of `path` into `onHeader` (line 1) and `onLine` (the rest). A zlib error or an
 * exception thrown by a handler ends the stream and is reported as damage; a RecordingOpenError thrown by
 * onHeader is rethrown. A handler may throw StopReading to end early without damage. In a file that seals its
 * blocks (block-sum.ts) a line reaches onLine only once the checksum of its block matched; `sum` lines are
 * consumed here.
 */
export async function streamLines(
  path: string,
  onHeader: (line: string) => void,
  onLine: LineHandler,
  /** Called after each decompressed chunk; a returned promise pauses decompression until it settles. */
  throttle?: () => Promise<void> | undefined,
): Promise<StreamEnd> {
  let st;
  try {
    st = await stat(path);
  } catch (err) {
    throw new RecordingOpenError(
      `Cannot open recording ${path}: ${(err as Error).message}`,
      'unreadable',
      path,
    );
  }
  if (!st.isFile())
    throw new RecordingOpenError(
      `${path} is not a PD Console recording: it is not a file`,
      'not-a-recording',
      path,
    );
  if (st.size === 0)
    throw new RecordingOpenError(
      `${path} is not a PD Console recording: the file is empty`,
      'not-a-recording',
      path,
    );
  const fh = await open(path, 'r');
  const magic = Buffer.alloc(2);
  let tailIndex: TailIndex | null;
  try {
    await fh.read(magic, 0, 2, 0);
    tailIndex = (await readTailIndex(fh, st.size)).found;
  } finally {
    await fh.close();
  }
  if (magic[0] !== 0x1f || magic[1] !== 0x8b)
    throw new RecordingOpenError(
      `${path} is not a PD Console recording: it is not gzip-compressed (recordings are ${FILE_EXTENSION} files)`,
      'not-a-recording',
      path,
    );

  return new Promise<StreamEnd>((resolve, reject) => {
    // Small chunks: when zlib hits damage it drops the output of the step that failed, so this bounds what is
    // lost before the damage point.
    const input = createReadStream(path, { highWaterMark: 64 * 1024 });
    // Only the data members reach zlib: a derived member is checked on its own, so its damage stops nothing.
    const filter = new DerivedFilter(st.size, tailIndex);
    // Z_SYNC_FLUSH as the final flush: a stream cut after a sync flush point ends without an error.
    const gunzip = createGunzip({ finishFlush: zc.Z_SYNC_FLUSH, chunkSize: 64 * 1024 });
    // An incomplete last line, in pieces (joined once it completes: appending chunk by chunk would be quadratic).
    let carry: Buffer[] | null = null;
    let carryBytes = 0;
    let lineNo = 0;
    let decodedBytes = 0;
    let inflated = 0;
    let settled = false;
    // Set after the header when the file seals its blocks: lines wait in `held` until their block checks out.
    let checker: BlockChecker | null = null;
    let held: [Buffer, number, number][] = [];
    let heldBytes = 0;
    // Decompressed chunks wait here and are parsed in separate macrotasks: zlib's 'data' callback returns at
    // once, so the thread pool inflates the next chunk while this thread parses (two cores, not one).
    const queue: Buffer[] = [];
    let queuedBytes = 0;
    let scheduled = false;
    let paused = false;
    let waiting = false;
    let zlibEnded = false;
    let zlibError: Error | null = null;
    let damageAt: number | null = null;
    const finish = (damage: string | null, partialTail: boolean): void => {
      if (settled) return;
      settled = true;
      input.destroy();
      filter.destroy();
      gunzip.destroy();
      resolve({
        damage,
        partialTail,
        unsealedLines: damage ? 0 : held.length,
        sealed: checker !== null,
        decodedBytes,
        fileBytes: st.size,
        damageAt,
        derived: filter.members,
        tailIndex,
      });
    };
    const fatal = (err: unknown): void => {
      if (settled) return;
      settled = true;
      input.destroy();
      filter.destroy();
      gunzip.destroy();
      reject(err);
    };
    const notOurs = (): RecordingOpenError =>
      new RecordingOpenError(
        `${path} is not a PD Console recording: it does not start with a recording header line`,
        'not-a-recording',
        path,
      );
    /** False once reading must stop. */
    const deliver = (buf: Buffer, start: number, end: number, no: number): boolean => {
      try {
        onLine(buf, start, end);
        return true;
      } catch (err) {
        if (err instanceof RecordingOpenError) fatal(err);
        else if (err === STOP) finish(null, false);
        else finish(`line ${no}: ${(err as Error).message}`, false);
        return false;
      }
    };
    /** One complete line; `whole` when buf holds just this line (a carried one), not yet fed to the checker. */
    const handle = (buf: Buffer, start: number, end: number, whole: boolean): boolean => {
      lineNo++;
      if (lineNo === 1) {
        const text = buf.toString('utf8', start, end);
        try {
          onHeader(text);
        } catch (err) {
          if (err instanceof RecordingOpenError) fatal(err);
          else if (err === STOP) finish(null, false);
          else finish(`line 1: ${(err as Error).message}`, false);
          return false;
        }
        if (sealsBlocks(text)) {
          checker = new BlockChecker();
          if (whole) {
            checker.add(buf, start, end);
            checker.add(NL_BUF, 0, 1);
          }
        }
        return true;
      }
      if (checker === null) return deliver(buf, start, end, lineNo);
      if (isSumLine(buf, start, end)) {
        const why = checker.verify(buf.toString('utf8', start, end));
        if (why && lineNo === 2) {
          // The first block is the header alone: without it nothing else can be trusted either.
          fatal(
            new RecordingOpenError(
              `${path} is damaged: its header line fails its checksum (${why}), so nothing in the file can be trusted`,
              'unreadable',
              path,
            ),
          );
          return false;
        }
        if (why) {
          finish(
            `the block of lines ${lineNo - held.length}–${lineNo - 1} fails its checksum: ${why}; the file was changed or damaged on disk`,
            false,
          );
          return false;
        }
        const lines = held;
        const first = lineNo - lines.length;
        held = [];
        heldBytes = 0;
        for (let i = 0; i < lines.length; i++)
          if (!deliver(lines[i][0], lines[i][1], lines[i][2], first + i)) return false;
        return true;
      }
      if (whole) {
        checker.add(buf, start, end);
        checker.add(NL_BUF, 0, 1);
      }
      held.push([buf, start, end]);
      heldBytes += end - start + 1;
      if (heldBytes > MAX_BLOCK_BYTES) {
        finish(
          `no block checksum record for more than ${MAX_BLOCK_BYTES} bytes after line ${lineNo - held.length}`,
          false,
        );
        return false;
      }
      return true;
    };
    /** Splits one decompressed chunk into lines; false once reading must stop. */
    const processChunk = (chunk: Buffer): boolean => {
      decodedBytes += chunk.length;
      let pos = 0;
      // chunk bytes from `span` on are not yet fed to the checker (a sum line is never fed).
      let span = 0;
      if (carry !== null) {
        const nl = chunk.indexOf(NL);
        if (nl < 0) {
          carry.push(chunk);
          carryBytes += chunk.length;
          pos = span = chunk.length;
        } else {
          const line = Buffer.concat([...carry, chunk.subarray(0, nl)]);
          carry = null;
          carryBytes = 0;
          pos = span = nl + 1;
          if (!handle(line, 0, line.length, true)) return false;
        }
      }
      for (;;) {
        const nl = chunk.indexOf(NL, pos);
        if (nl < 0) break;
        if (checker !== null && lineNo > 0 && isSumLine(chunk, pos, nl)) {
          checker.add(chunk, span, pos);
          span = nl + 1;
        }
        if (!handle(chunk, pos, nl, false)) return false;
        pos = nl + 1;
      }
      // Complete lines up to `pos`; the incomplete rest is fed once its line completes.
      if (checker !== null) (checker as BlockChecker).add(chunk, span, pos);
      if (pos < chunk.length && carry === null) {
        carry = [Buffer.from(chunk.subarray(pos))];
        carryBytes = chunk.length - pos;
      }
      const limit = lineNo === 0 ? MAX_HEADER_CHARS : MAX_RECORD_CHARS;
      if (carry !== null && carryBytes > limit) {
        if (lineNo === 0) fatal(notOurs());
        else finish(`line ${lineNo + 1} is longer than ${limit} bytes`, false);
        return false;
      }
      return true;
    };
    const onZlibEnd = (): void => {
      if (lineNo === 0) {
        // Not even one full line: either a foreign gzip file or a recording cut inside its header.
        const text = carry ? Buffer.concat(carry).toString('utf8') : '';
        if (text.startsWith(`{"format":"${FORMAT_ID}"`))
          fatal(
            new RecordingOpenError(
              `${path} is damaged: it ends inside the recording header, so nothing can be read`,
              'unreadable',
              path,
            ),
          );
        else fatal(notOurs());
        return;
      }
      finish(null, carry !== null && carryBytes > 0);
    };
    const onZlibError = (err: Error): void => {
      // zlib consumed the data up to here in steps that succeeded; the step that failed is dropped whole.
      damageAt = filter.toFileOffset(gunzip.bytesWritten);
      if (lineNo === 0) {
        // That step held the start of the file: decode the start again, as far as it goes, so a header that is
        // intact is read and the blocks before the damage are shown.
        carry = null;
        carryBytes = 0;
        decodedBytes = 0;
        const start = decodablePrefix(Buffer.concat(early));
        if (start.length && !processChunk(start)) return;
      }
      if (lineNo === 0) {
        const ours = (carry ? Buffer.concat(carry).toString('utf8') : '').startsWith(
          `{"format":"${FORMAT_ID}"`,
        );
        fatal(
          new RecordingOpenError(
            ours
              ? `${path} is damaged: its compressed data cannot be decompressed past byte ${damageAt} (${err.message}), which is inside the recording header, so nothing can be read`
              : `${path} is not a PD Console recording: its gzip data cannot be decompressed (${err.message})`,
            ours ? 'unreadable' : 'not-a-recording',
            path,
          ),
        );
        return;
      }
      finish(
        `the compressed data cannot be decompressed past byte ${damageAt} of the file (${err.message})`,
        carry !== null && carryBytes > 0,
      );
    };
    const drain = (): void => {
      scheduled = false;
      if (settled || waiting) return;
      // A few chunks per macrotask, so zlib's completions get the thread in between.
      for (let i = 0; i < 4 && queue.length; i++) {
        const chunk = queue.shift() as Buffer;
        queuedBytes -= chunk.length;
        if (!processChunk(chunk)) return;
        const wait = throttle?.();
        if (wait) {
          waiting = true;
          wait.then(
            () => {
              waiting = false;
              schedule();
            },
            (err: unknown) => fatal(err),
          );
          return;
        }
      }
      if (paused && queuedBytes < QUEUE_LOW) {
        paused = false;
        gunzip.resume();
      }
      if (queue.length) schedule();
      // Everything decompressed before an error or the end is parsed first.
      else if (zlibError) onZlibError(zlibError);
      else if (zlibEnded) onZlibEnd();
    };
    const schedule = (): void => {
      if (!scheduled && !settled) {
        scheduled = true;
        setImmediate(drain);
      }
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (settled) return;
      inflated += chunk.length;
      if (inflated > RATIO_CHECK_AFTER && inflated > MAX_INFLATE_RATIO * gunzip.bytesWritten) {
        const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;
        fatal(
          new RecordingOpenError(
            `${path} is not a PD Console recording: ${mib(gunzip.bytesWritten)} of it inflated to more than ${mib(inflated)}, ` +
              `over ${MAX_INFLATE_RATIO}× (recordings inflate about 3–20×), so reading stopped there. It may be a ` +
              `"gzip bomb" meant to fill the memory. Check where the file came from; if you trust it, look inside ` +
              `with \`zcat FILE | head\` instead of opening it.`,
            'not-a-recording',
            path,
          ),
        );
        return;
      }
      queue.push(chunk);
      queuedBytes += chunk.length;
      if (queuedBytes > QUEUE_HIGH && !paused) {
        paused = true;
        gunzip.pause();
      }
      schedule();
    });
    gunzip.on('end', () => {
      zlibEnded = true;
      schedule();
    });
    gunzip.on('error', (err: Error) => {
      zlibError = err;
      schedule();
    });
    input.on('error', (err) =>
      fatal(new RecordingOpenError(`Cannot read recording ${path}: ${err.message}`, 'unreadable', path)),
    );
    // What reached zlib before the first line was read: decoded again if zlib fails on it (onZlibError).
    const early: Buffer[] = [];
    let earlyBytes = 0;
    filter.on('data', (b: Buffer) => {
      if (lineNo !== 0 || earlyBytes > EARLY_BYTES) return;
      early.push(b);
      earlyBytes += b.length;
    });
    input.pipe(filter).pipe(gunzip);
  });
}

/** Compressed bytes kept to decode the header again: more than any header (MAX_HEADER_CHARS) compresses to. */
const EARLY_BYTES = MAX_HEADER_CHARS + 64 * 1024;

/**
 * The text zlib decodes from the start of `data` (gzip members) before it fails, found by bisection: a prefix
 * cut before the damage decodes (Z_SYNC_FLUSH as the final flush), one reaching it fails.
 */
function decodablePrefix(data: Buffer): Buffer {
  let best = Buffer.alloc(0);
  let lo = 0;
  let hi = data.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    try {
      best = gunzipSync(data.subarray(0, mid), {
        finishFlush: zc.Z_SYNC_FLUSH,
        maxOutputLength: 4 * MAX_HEADER_CHARS,
      });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return best;
}

/** Thrown by a line handler to stop reading early (not damage). */
const STOP = new Error('stop reading');

export function parseHeader(path: string, line: string): StoredHeader {
  const notOurs = (why: string): RecordingOpenError =>
    new RecordingOpenError(`${path} is not a PD Console recording: ${why}`, 'not-a-recording', path);
  let h: unknown;
  try {
    h = JSON.parse(line);
  } catch {
    throw notOurs('its first line is not a JSON recording header');
  }
  if (!isObject(h) || h.format !== FORMAT_ID)
    throw notOurs(`its header does not say "format":"${FORMAT_ID}"`);
  if (typeof h.version !== 'number' || !Number.isInteger(h.version) || h.version < 1)
    throw notOurs('its header has no valid format version');
  if (h.version > FORMAT_VERSION)
    throw new RecordingOpenError(
      `${path} was written by a newer PD Console (format v${h.version}; this app reads v${FORMAT_VERSION}); update the app to open it`,
      'newer-version',
      path,
    );
  const missing = ['sessionId', 'name', 'appVersion'].filter((k) => typeof h[k] !== 'string');
  if (!Number.isFinite(h.startedAt)) missing.push('startedAt');
  if (!isObject(h.host)) missing.push('host');
  if (!isObject(h.deployment)) missing.push('deployment');
  if (missing.length)
    throw new RecordingOpenError(
      `${path} is damaged: its header lacks ${missing.join(', ')}`,
      'unreadable',
      path,
    );
  return h as unknown as StoredHeader;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

export function parseRecord(line: string): WireRecord & Record<string, unknown> {
  let r: unknown;
  try {
    r = JSON.parse(line);
  } catch {
    throw new RecordDamageError(`not valid JSON (${line.length > 60 ? line.slice(0, 60) + '…' : line})`);
  }
  if (!isObject(r) || typeof r.k !== 'string') throw new RecordDamageError('not a record object');
  return r as WireRecord & Record<string, unknown>;
}

function need(cond: boolean, what: string): void {
  if (!cond) throw new RecordDamageError(what);
}

interface Chunk {
  /** Index of the chunk's first row among its target's stored rows. */
  row0: number;
  n: number;
  data: Float64Array;
}

interface SeriesAcc {
  info: SeriesInfo;
  keep: boolean;
  chunks: Chunk[];
}

/**
 * Rows of one target are decoded into blocks of BLOCK_ROWS rows: one Float64Array per block, column-major (kept
 * slot c at offset c·BLOCK_ROWS), so the hot loop writes one typed array. A block is sealed when full or when
 * the target's layout changes; its columns become chunks (views) of their series.
 */
class TargetBlocks {
  times: Float64Array[] = [];
  storedRows = 0;
  lastTs = -Infinity;
  private blockTimes = new Float64Array(BLOCK_ROWS);
  private n = 0;
  private ids: Int32Array | null = null;
  private flat: Float64Array | null = null;
  private outIdx = new Int32Array(0);

  constructor(private readonly acc: SeriesAcc[]) {}

  /** Where to decode the next stored row of layout `ids`: out[outIdx[slot] + row]. */
  prepare(ids: Int32Array): { out: Float64Array | null; outIdx: Int32Array; row: number } {
    if (ids !== this.ids || this.n === BLOCK_ROWS) {
      this.seal();
      this.ids = ids;
      this.outIdx = new Int32Array(ids.length).fill(-1);
      let cols = 0;
      for (let slot = 0; slot < ids.length; slot++)
        if (this.acc[ids[slot]].keep) this.outIdx[slot] = BLOCK_ROWS * cols++;
      this.flat = cols ? new Float64Array(cols * BLOCK_ROWS) : null;
    }
    return { out: this.flat, outIdx: this.outIdx, row: this.n };
  }

  commit(ts: number): void {
    this.blockTimes[this.n++] = ts;
  }

  seal(): void {
    if (this.n === 0 || this.ids === null) return;
    const n = this.n;
    const row0 = this.storedRows;
    this.times.push(this.blockTimes.slice(0, n));
    if (this.flat !== null)
      for (let slot = 0; slot < this.ids.length; slot++) {
        const o = this.outIdx[slot];
        if (o >= 0) this.acc[this.ids[slot]].chunks.push({ row0, n, data: this.flat.subarray(o, o + n) });
      }
    this.storedRows += n;
    this.n = 0;
    this.ids = null;
    this.flat = null;
  }
}

function concat(parts: { data: Float64Array; n: number }[], total: number): Float64Array {
  const out = new Float64Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p.n === p.data.length ? p.data : p.data.subarray(0, p.n), o);
    o += p.n;
  }
  return out;
}

/** Opens a recording. Throws RecordingOpenError for a file that is not a recording or is too new; reads a damaged one up to the damage. */
export async function readRecording(path: string, opts: ReadOptions = {}): Promise<Recording> {
  const asm = recordAssembler(path, opts);
  const end = await streamLines(path, asm.onHeader, asm.onLine);
  return asm.finish(end);
}

/** Lines of a recording's full stream in, a Recording out: shared by the full read and the overview read. */
export interface RecordAssembler {
  onHeader(line: string): void;
  onLine(buf: Buffer, start: number, end: number): void;
  finish(end: StreamEnd): Recording;
}

const OVERVIEW_LINE = Buffer.from('{"k":"o.');
const INDEX_LINE = Buffer.from('{"k":"index",');

/** Records of the overview stream and its index (format 1.2): not part of the full stream. */
function isOverviewKind(k: string): boolean {
  return k === 'index' || k.startsWith(OVERVIEW_KIND_PREFIX);
}

function isIndexLine(buf: Buffer, start: number, end: number): boolean {
  return startsWith(buf, start, end, INDEX_LINE);
}

/** True for a line of the overview stream (format 1.2), which the full stream's readers skip. */
export function isOverviewLine(buf: Buffer, start: number, end: number): boolean {
  return startsWith(buf, start, end, OVERVIEW_LINE);
}

export function recordAssembler(path: string, opts: ReadOptions = {}): RecordAssembler {
  const fromMs = opts.fromMs ?? -Infinity;
  const toMs = opts.toMs ?? Infinity;
  const inRange = (t: number): boolean => t >= fromMs && t <= toMs;
  let header!: StoredHeader;
  const dec = new ScrapeDecoder((id) => acc[id].keep);
  const acc: SeriesAcc[] = [];
  const targets = new Map<string, TargetBlocks>();
  const events: AppEvent[] = [];
  const unitStates: TimedUnitState[] = [];
  const health: TimedHealth[] = [];
  const journal: JournalLine[] = [];
  const unknownKinds = new Map<string, number>();
  let firstTs = Infinity;
  let lastTs = -Infinity;
  let records = 0;
  let scrapes = 0;
  let samples = 0;
  let outOfOrder = 0;
  let ended = false;
  let indexLine = false;
  let afterEnd = 0;
  const seen = (t: number): void => {
    if (t < firstTs) firstTs = t;
    if (t > lastTs) lastTs = t;
  };

  const parser = new RowParser();
  const pr = new ParsedRow();
  const onRow = (): void => {
    let tg = targets.get(pr.g);
    if (!tg) {
      tg = new TargetBlocks(acc);
      targets.set(pr.g, tg);
    }
    const ordered = pr.t > tg.lastTs;
    if (ordered) tg.lastTs = pr.t;
    else outOfOrder++;
    const ids = dec.layoutOf(pr.g);
    if (ordered && inRange(pr.t) && ids) {
      const { out, outIdx, row } = tg.prepare(ids);
      dec.row(pr, out, outIdx, row);
      tg.commit(pr.t);
    } else dec.row(pr, null, null, 0);
    scrapes++;
    samples += ids ? ids.length : 0;
    seen(pr.t);
  };

  const onHeader = (line: string): void => {
    header = parseHeader(path, line);
  };
  const onLine = (buf: Buffer, a: number, b: number): void => {
    records++;
    // The overview (format 1.2) is for other readers, and the last overview member and the index follow the
    // end record of a closed file.
    const row = isRowLine(buf, a, b);
    if (!row && isOverviewLine(buf, a, b)) return;
    if (!row && isIndexLine(buf, a, b)) {
      indexLine = true;
      return;
    }
    if (ended) {
      // (A tool that re-serialised the lines may have spaced them differently.)
      const k = parseRecord(buf.toString('utf8', a, b)).k;
      if (k === 'index') indexLine = true;
      else if (!isOverviewKind(k)) afterEnd++;
      return;
    }
    if (row && parser.parse(buf, a, b, pr)) {
      onRow();
      return;
    }
    const r = parseRecord(buf.toString('utf8', a, b));
    switch (r.k) {
      case 's': {
        need(
          typeof r.t === 'number' && typeof r.g === 'string' && Array.isArray(r.v),
          'malformed scrape record',
        );
        pr.fromRecord(r);
        onRow();
        break;
      }
      case 'series': {
        need(
          Number.isInteger(r.id) &&
            typeof r.g === 'string' &&
            typeof r.n === 'string' &&
            typeof r.f === 'string' &&
            isObject(r.l),
          'malformed series record',
        );
        const meta = dec.addSeries(r);
        const info: SeriesInfo = {
          id: meta.id,
          target: meta.target,
          name: meta.name,
          labels: meta.labels,
          family: meta.family,
          type: meta.type,
        };
        acc.push({ info, keep: opts.series ? opts.series(info) : true, chunks: [] });
        break;
      }
      case 'family':
        need(
          typeof r.g === 'string' && typeof r.f === 'string' && typeof r.ty === 'string',
          'malformed family record',
        );
        dec.family(r);
        break;
      case 'layout':
        need(typeof r.g === 'string' && Array.isArray(r.ids), 'malformed layout record');
        targets.get(r.g)?.seal();
        dec.layout(r);
        break;
      case 'unit':
        need(
          typeof r.t === 'number' &&
            typeof r.r === 'string' &&
            isObject(r.s) &&
            typeof r.s.activeState === 'string',
          'malformed unit record',
        );
        seen(r.t);
        if (inRange(r.t)) unitStates.push({ ts: r.t, source: r.r, state: r.s });
        break;
      case 'health':
        need(
          typeof r.t === 'number' && typeof r.r === 'string' && isObject(r.h) && typeof r.h.ok === 'boolean',
          'malformed health record',
        );
        seen(r.t);
        if (inRange(r.t)) health.push({ ts: r.t, source: r.r, health: r.h });
        break;
      case 'event':
        need(
          typeof r.t === 'number' &&
            isObject(r.e) &&
            typeof r.e.kind === 'string' &&
            typeof r.e.title === 'string',
          'malformed event record',
        );
        seen(r.t);
        if (inRange(r.t)) events.push(r.e);
        break;
      case 'journal':
        need(
          typeof r.t === 'number' &&
            typeof r.r === 'string' &&
            typeof r.u === 'string' &&
            typeof r.p === 'number' &&
            typeof r.m === 'string',
          'malformed journal record',
        );
        seen(r.t);
        if (inRange(r.t)) journal.push({ ts: r.t, role: r.r, unit: r.u, priority: r.p, message: r.m });
        break;
      case 'end':
        ended = true;
        break;
      case 'sum':
        // A block seal in a file whose header does not announce them (rewritten by another tool): unchecked.
        break;
      default: {
        const kind = (r as { k: string }).k;
        if (isOverviewKind(kind)) break;
        unknownKinds.set(kind, (unknownKinds.get(kind) ?? 0) + 1);
      }
    }
  };

  const finish = (end: StreamEnd): Recording => {
    // Columns out. A series present in every stored row of its target since it first appeared shares the
    // target's time array (a view); one with gaps gets its own.
    const series: RecordedSeries[] = [];
    const times = new Map<string, Float64Array>();
    for (const [g, tg] of targets) {
      tg.seal();
      times.set(
        g,
        concat(
          tg.times.map((data) => ({ data, n: data.length })),
          tg.storedRows,
        ),
      );
    }
    for (const a of acc) {
      if (!a.keep || a.chunks.length === 0) continue;
      const tAll = times.get(a.info.target) as Float64Array;
      let total = 0;
      let contiguous = true;
      for (let i = 0; i < a.chunks.length; i++) {
        total += a.chunks[i].n;
        if (i > 0 && a.chunks[i].row0 !== a.chunks[i - 1].row0 + a.chunks[i - 1].n) contiguous = false;
      }
      const first = a.chunks[0].row0;
      const t = contiguous
        ? tAll.subarray(first, first + total)
        : concat(
            a.chunks.map((c) => ({ data: tAll.subarray(c.row0, c.row0 + c.n), n: c.n })),
            total,
          );
      const v = concat(a.chunks, total);
      a.chunks = [];
      const fam = dec.families.get(a.info.target + '\u0000' + a.info.family);
      series.push({ ...a.info, help: fam?.h, unit: fam?.u, t, v });
    }
    const byTs = <T extends { ts: number }>(x: T[]): T[] => x.sort((a, b) => a.ts - b.ts);

    const warnings: string[] = [];
    if (!Number.isFinite(firstTs)) firstTs = lastTs = header.startedAt;
    const lostAfter = `after ${iso(lastTs)} (the last intact record)`;
    // From the file's own content, never from its modification time (a copy has the time it was copied): the
    // writer pushes records into the file every flushIntervalMs, so a crash loses at most that much.
    const flushMs = Number.isFinite(header.flushIntervalMs)
      ? header.flushIntervalMs
      : DEFAULT_FLUSH_INTERVAL_MS;
    const lostUntil = `; it was written to disk every ${describeMs(flushMs)}, so a crash lost at most the ${describeMs(flushMs)} after it (a file cut short, e.g. an incomplete copy, lost everything after it)`;
    const integrity = integrityOf(end, { ended, indexLine, hasOverview: header.overview !== undefined });
    if (end.damage && !end.sealed && /incorrect (data|length) check/.test(end.damage))
      warnings.push(
        `The recording's checksum does not match its contents (${end.damage}): the file was changed or damaged on disk after it was written, so values anywhere in it may be wrong.`,
      );
    else if (end.damage && !integrity.afterEnd)
      warnings.push(
        `The recording is damaged (${end.damage}): nothing ${lostAfter} could be read` +
          (end.sealed ? '; every block before it matched its checksum.' : '.'),
      );
    else if (!ended)
      warnings.push(
        `The recording was not closed (the app was killed, crashed or lost power): it ends ${lostAfter}` +
          droppedTail(end) +
          `${lostUntil}.`,
      );
    if (integrity.warning) warnings.push(integrity.warning);
    if (outOfOrder) warnings.push(`${outOfOrder} scrape rows out of time order were skipped.`);
    if (afterEnd) warnings.push(`${afterEnd} records after the end record were ignored.`);
    if (unknownKinds.size)
      warnings.push(
        `Skipped ${[...unknownKinds.values()].reduce((a, b) => a + b, 0)} records of kinds this version does not know (${[...unknownKinds.keys()].join(', ')}); a newer PD Console wrote them.`,
      );

    return {
      path,
      header,
      firstTs,
      lastTs,
      closedCleanly: integrity.dataComplete,
      series,
      events: byTs(events),
      unitStates: byTs(unitStates),
      health: byTs(health),
      journal: byTs(journal),
      warnings,
      derivedDamage: integrity.damage,
      stats: { fileBytes: end.fileBytes, decodedBytes: end.decodedBytes, records, scrapes, samples },
    };
  };
  return { onHeader, onLine, finish };
}

/** Header, time span and integrity of a recording, without building series (for session lists). */
export interface RecordingSummary {
  header: StoredHeader;
  firstTs: number;
  lastTs: number;
  closedCleanly: boolean;
  warnings: string[];
}

/** Reads only the header line. */
export async function readHeader(path: string): Promise<StoredHeader> {
  let header: StoredHeader | null = null;
  await streamLines(
    path,
    (line) => {
      header = parseHeader(path, line);
    },
    () => {
      throw STOP;
    },
  );
  if (!header) throw new RecordingOpenError(`${path} is damaged: it has no header`, 'unreadable', path);
  return header;
}

/** Scans a whole file for its time span without decoding values (several times faster than readRecording). */
export async function summarizeRecording(path: string): Promise<RecordingSummary> {
  let header!: StoredHeader;
  let firstTs = Infinity;
  let lastTs = -Infinity;
  let ended = false;
  let indexLine = false;
  const end = await streamLines(
    path,
    (line) => {
      header = parseHeader(path, line);
    },
    (buf, a, b) => {
      let t = rowTime(buf, a, b);
      if (t !== t) {
        const r = parseRecord(buf.toString('utf8', a, b));
        if (r.k === 'end') {
          ended = true;
          return;
        }
        if (r.k === 'index') indexLine = true;
        if (typeof r.t !== 'number' || !Number.isFinite(r.t)) return;
        t = r.t;
      }
      if (t < firstTs) firstTs = t;
      if (t > lastTs) lastTs = t;
    },
  );
  if (!Number.isFinite(firstTs)) firstTs = lastTs = header.startedAt;
  const warnings: string[] = [];
  const integrity = integrityOf(end, { ended, indexLine, hasOverview: header.overview !== undefined });
  if (end.damage && !integrity.afterEnd) warnings.push(`damaged after ${iso(lastTs)}: ${end.damage}`);
  else if (!ended) warnings.push(`not closed: ends after ${iso(lastTs)}`);
  if (integrity.warning) warnings.push(integrity.warning);
  return { header, firstTs, lastTs, closedCleanly: integrity.dataComplete, warnings };
}

/** What was dropped after the last intact record of an unclosed file, in words (empty when nothing was). */
function droppedTail(end: StreamEnd): string {
  const what =
    end.unsealedLines && end.partialTail
      ? `${end.unsealedLines + 1} records after it (the last incomplete) were`
      : end.unsealedLines
        ? `${end.unsealedLines} records after it were`
        : end.partialTail
          ? 'an incomplete record after it was'
          : '';
  if (!what) return '';
  return end.sealed
    ? `; ${what} dropped: nothing vouches for them (no block checksum followed: a crash while writing, a copy cut short, or damage on disk)`
    : `, ${what.replace(/ were$| was$/, '')} dropped`;
}

export function describeMs(ms: number): string {
  if (ms < 1500) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
