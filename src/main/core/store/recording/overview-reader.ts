// Reading the overview of a 1.2 recording (docs/recording-format.md §1.2) without inflating its data: the index
// member at the end of a closed file says where the overview members are; in a file that was never closed (or
// whose index is damaged) they are found by scanning the raw bytes for their gzip extra field. Each member is
// checked (gzip CRC-32, then the block seal of its lines) and its records go through the same assembler as the
// full stream, so the result is an ordinary Recording — only coarser: one row per target every stepMs.
import { open, readFile, stat } from 'node:fs/promises';
import type { IndexRecord } from './format';
import { BlockChecker, SUM_PREFIX } from './block-sum';
import { markedAt, openMarked, scanMarked } from './members';
import { iso, readHeader, recordAssembler } from './reader';
import { OVERVIEW_KIND_PREFIX } from './overview-stream';
import type { ReadOptions, Recording } from './types';

/** The index of a closed file is in its last bytes; an index larger than this is looked for by a scan. */
const TAIL_BYTES = 64 * 1024;

export interface OverviewRead {
  /** The session at overview resolution (header, events, unit states and health complete). */
  recording: Recording;
  /** Where the overview members were found. */
  foundBy: 'index' | 'scan';
  /** Overview members read. */
  members: number;
  /** Bytes of the file read to find and decode them. */
  bytesRead: number;
  /** Bytes of the file after the last overview member that are not the index: what the overview does not cover. */
  uncoveredBytes: number;
  /** Format 1.3: the signal rows of each overview member (`o.tbl` records, parsed), in file order. */
  tables: unknown[];
}

const OVERVIEW_LINE = Buffer.from('{"k":"' + OVERVIEW_KIND_PREFIX);
/** The signal rows of a 1.3 overview: read by review (core/review/overview-table.ts), not by the assembler. */
const TABLE_LINE = Buffer.from('{"k":"o.tbl"');
const PLAIN_START = Buffer.from('{"k":"');

/**
 * The overview of `path`, or null when the file has none (format 1.1 and older): the caller reads it the slow
 * way. Throws RecordingOpenError for what readRecording refuses (not a recording, newer version).
 */
export async function readOverview(path: string, opts: ReadOptions = {}): Promise<OverviewRead | null> {
  const header = await readHeader(path);
  if (!header.overview) return null;
  const size = (await stat(path)).size;
  const fh = await open(path, 'r');
  const notes: string[] = [];
  let bytesRead = 0;
  let members: Buffer[] = [];
  let foundBy: OverviewRead['foundBy'] = 'index';
  let uncovered = 0;
  let index: IndexRecord | null = null;
  // The index is written at close, after the end record: a file that has one (even damaged) was closed.
  let closed = false;
  try {
    const tailLen = Math.min(size, TAIL_BYTES);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    bytesRead += tailLen;
    const last = scanMarked(tail)
      .filter((m) => m.kind === 'index' && m.at + m.length === tailLen)
      .pop();
    if (last) {
      closed = true;
      try {
        index = parseIndex(openMarked(tail.subarray(last.at)), size - tailLen + last.at);
        // All at once: the reads queue in the thread pool instead of taking turns with this thread.
        members = await Promise.all(
          index.o.map(async ([offset, length]) => {
            const buf = Buffer.alloc(length);
            await fh.read(buf, 0, length, offset);
            const m = markedAt(buf, 0);
            if (!m || m.kind !== 'overview' || m.length !== length)
              throw new Error(`it points at byte ${offset}, where no overview member starts`);
            return buf;
          }),
        );
        for (const b of members) bytesRead += b.length;
      } catch (err) {
        notes.push(
          `The recording's overview index is damaged (${(err as Error).message}); the overview was found by scanning the file instead.`,
        );
        index = null;
        members = [];
      }
    }
  } finally {
    await fh.close();
  }
  if (!index) {
    foundBy = 'scan';
    const all = await readFile(path);
    bytesRead += all.length;
    const found = scanMarked(all).filter((m) => m.kind === 'overview');
    members = found.map((m) => all.subarray(m.at, m.at + m.length));
    const last = found[found.length - 1];
    uncovered = last ? size - (last.at + last.length) : size;
  }

  const asm = recordAssembler(path, opts);
  asm.onHeader(JSON.stringify(header));
  let damage: string | null = null;
  let decodedBytes = 0;
  const tables: unknown[] = [];
  const onTable = (text: Buffer, a: number, b: number): void => {
    tables.push(JSON.parse(text.toString('utf8', a, b)));
  };
  for (let i = 0; i < members.length && !damage; i++) {
    try {
      const text = openMarked(members[i]);
      decodedBytes += text.length;
      deliverMember(text, asm.onLine, onTable);
    } catch (err) {
      damage = `overview block ${i + 1} of ${members.length}: ${(err as Error).message}`;
    }
  }
  if (closed && !damage) {
    const end = Buffer.from(`{"k":"end","t":${index?.t ?? 0}}`);
    asm.onLine(end, 0, end.length);
  }
  const recording = asm.finish({
    damage: null,
    partialTail: false,
    unsealedLines: 0,
    sealed: true,
    decodedBytes,
    fileBytes: size,
  });
  // The assembler's words are about the full stream; the overview says what it covers itself. The full read
  // that follows brings the exact account of a damaged or unclosed file.
  recording.warnings = recording.warnings.filter((w) => !w.startsWith('The recording was not closed'));
  if (index) recording.lastTs = Math.max(recording.lastTs, index.t);
  if (damage)
    notes.push(
      `Part of the recording's overview is damaged (${damage}): the overview ends at ${iso(recording.lastTs)}; the full detail is read from the recording.`,
    );
  else if (!closed)
    notes.push(
      `The recording was not closed: its overview reaches ${iso(recording.lastTs)}; the full detail, up to its last intact record, is read from the recording.`,
    );
  recording.warnings.push(...notes);
  return { recording, foundBy, members: members.length, bytesRead, uncoveredBytes: uncovered, tables };
}

function parseIndex(text: Buffer, at: number): IndexRecord {
  const nl = text.indexOf(10);
  const sumStart = nl + 1;
  const sumEnd = text.indexOf(10, sumStart);
  if (nl < 0 || sumEnd < 0 || text.toString('utf8', sumStart, sumStart + SUM_PREFIX.length) !== SUM_PREFIX)
    throw new Error(`the index member at byte ${at} is not an index line and its seal`);
  const checker = new BlockChecker();
  checker.add(text, 0, nl + 1);
  const why = checker.verify(text.toString('utf8', sumStart, sumEnd));
  if (why) throw new Error(`the index fails its checksum: ${why}`);
  const r = JSON.parse(text.toString('utf8', 0, nl)) as Partial<IndexRecord>;
  if (r.k !== 'index' || !Array.isArray(r.o) || typeof r.t !== 'number')
    throw new Error('the index record is malformed');
  let prevEnd = 0;
  for (const e of r.o) {
    if (!Array.isArray(e) || e.length < 4 || !e.every((x) => typeof x === 'number'))
      throw new Error('an index entry is malformed');
    if (e[0] < prevEnd || e[1] <= 0 || e[0] + e[1] > at) throw new Error('an index entry is out of place');
    prevEnd = e[0] + e[1];
  }
  return r as IndexRecord;
}

/** Checks the member's block seal, then hands each overview line to onLine as the record it copies. */
function deliverMember(
  text: Buffer,
  onLine: (buf: Buffer, start: number, end: number) => void,
  onTable: (buf: Buffer, start: number, end: number) => void,
): void {
  const checker = new BlockChecker();
  const lines: [number, number][] = [];
  let pos = 0;
  let sealed = false;
  while (pos < text.length) {
    const nl = text.indexOf(10, pos);
    if (nl < 0) throw new Error('its last line is incomplete');
    if (text.toString('utf8', pos, Math.min(nl, pos + SUM_PREFIX.length)) === SUM_PREFIX) {
      const why = checker.verify(text.toString('utf8', pos, nl));
      if (why) throw new Error(why);
      if (nl + 1 !== text.length) throw new Error('lines follow its seal');
      sealed = true;
      break;
    }
    checker.add(text, pos, nl + 1);
    if (text.compare(OVERVIEW_LINE, 0, OVERVIEW_LINE.length, pos, pos + OVERVIEW_LINE.length) !== 0)
      throw new Error('it holds a line that is not an overview record');
    lines.push([pos, nl]);
    pos = nl + 1;
  }
  if (!sealed) throw new Error('it has no block seal');
  for (const [a, b] of lines) {
    if (text.compare(TABLE_LINE, 0, TABLE_LINE.length, a, a + TABLE_LINE.length) === 0) {
      onTable(text, a, b);
      continue;
    }
    // {"k":"o.s",… → {"k":"s",… two bytes further on: the record the overview copied, decoded in place.
    const start = a + OVERVIEW_KIND_PREFIX.length;
    PLAIN_START.copy(text, start);
    onLine(text, start, b);
  }
}
