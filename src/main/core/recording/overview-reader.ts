// Reading the overview of a recording (docs/recording-format.md §1.2) without inflating its data: the index
// member at the end of a closed file says where the overview members are; in a file that was never closed (or
// whose index is damaged) they are found by scanning the raw bytes for their gzip extra field. Each member is
// checked (gzip CRC-32, then the block seal of its lines) and its records go through the same assembler as the
// full stream, so the result is an ordinary Recording — only coarser: one row per target every stepMs.
import { open, readFile, stat } from 'node:fs/promises';
import { isCurrentFormat, type IndexRecord } from './format';
import { scanMarked } from './members';
import { openDerived, readTailIndex } from './layout';
import { iso, readHeader, recordAssembler } from './reader';
import { OVERVIEW_KIND_PREFIX } from './overview-stream';
import type { DerivedDamage, ReadOptions, Recording } from './types';

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
  /** The signal rows of each overview member (`o.tbl` records, parsed), in file order. */
  tables: unknown[];
  /** The first damaged overview member: the overview ends before it (null when none is). */
  damage: DerivedDamage | null;
}

/** The signal rows of an overview: read by review (core/review/overview-table.ts), not by the assembler. */
const TABLE_LINE = Buffer.from('{"k":"o.tbl"');
const PLAIN_START = Buffer.from('{"k":"');

interface Member {
  at: number;
  bytes: Buffer;
  span: [number, number] | null;
}

/**
 * The overview of `path`, or null when the file has none or is of an older format (an older minor, or services
 * named by role: its overview, if any, holds something else): the caller reads its data. Throws RecordingOpenError for what readRecording
 * refuses (not a recording, newer version).
 */
export async function readOverview(path: string, opts: ReadOptions = {}): Promise<OverviewRead | null> {
  const header = await readHeader(path);
  if (!header.overview || !isCurrentFormat(header)) return null;
  const size = (await stat(path)).size;
  const fh = await open(path, 'r');
  const notes: string[] = [];
  let bytesRead = 0;
  let members: Member[] = [];
  let uncovered = 0;
  let index: IndexRecord | null;
  // An index member ends the file (even a damaged one): it was closed, and not cut short after that.
  let indexed: boolean;
  try {
    const { tail, found } = await readTailIndex(fh, size);
    bytesRead += tail.length;
    index = found?.index ?? null;
    indexed = found !== null;
    if (found?.problem)
      notes.push(
        `The recording's index at byte ${found.at} is damaged (${found.problem}); the overview was found by scanning the file instead.`,
      );
    if (index)
      // All at once: the reads queue in the thread pool instead of taking turns with this thread.
      members = await Promise.all(
        index.o.map(async ([at, length, t0, t1]) => {
          const bytes = Buffer.alloc(length);
          const { bytesRead: n } = await fh.read(bytes, 0, length, at);
          bytesRead += n;
          return { at, bytes: bytes.subarray(0, n), span: [t0, t1] as [number, number] };
        }),
      );
  } finally {
    await fh.close();
  }
  if (!index) {
    const all = await readFile(path);
    bytesRead += all.length;
    const found = scanMarked(all).filter((m) => m.kind === 'overview');
    members = found.map((m) => ({ at: m.at, bytes: all.subarray(m.at, m.at + m.length), span: null }));
    const last = found[found.length - 1];
    uncovered = last ? size - (last.at + last.length) : size;
  }

  const asm = recordAssembler(path, opts);
  asm.onHeader(JSON.stringify(header));
  let damage: DerivedDamage | null = null;
  let decodedBytes = 0;
  let reach = -Infinity;
  const tables: unknown[] = [];
  const onTable = (text: Buffer, a: number, b: number): void => {
    const table = JSON.parse(text.toString('utf8', a, b)) as { t?: unknown };
    if (typeof table.t === 'number' && table.t > reach) reach = table.t;
    tables.push(table);
  };
  for (let i = 0; i < members.length && !damage; i++) {
    const { at, bytes, span } = members[i];
    const opened = openDerived(bytes, 'overview', index ? index.o[i][1] : bytes.length);
    if ('problem' in opened) {
      damage = {
        section: 'overview',
        at,
        span,
        what: `overview at byte ${at}${span ? ` (${iso(span[0])} to ${iso(span[1])})` : ''} is damaged (${opened.problem})`,
      };
      break;
    }
    decodedBytes += opened.text.length;
    deliverMember(opened.text, opened.lines, asm.onLine, onTable);
  }
  // The index is written at close, after the end record: a file that ends with one was closed.
  if (indexed && !damage) {
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
    damageAt: null,
    derived: [],
    tailIndex: null,
  });
  // The assembler's words are about the full stream; the overview says what it covers itself. The full read
  // that follows brings the exact account of a damaged, unclosed or cut file.
  recording.warnings = [];
  recording.derivedDamage = damage ? [damage] : [];
  if (index && !damage) recording.lastTs = Math.max(recording.lastTs, index.t);
  else if (reach > recording.lastTs) recording.lastTs = reach;
  if (damage)
    notes.push(
      `The recording's ${damage.what}: the overview ends at ${iso(recording.lastTs)}; the full detail is read from the recording.`,
    );
  else if (!indexed)
    notes.push(
      `The recording has no index at its end (it was not closed, or it was cut short): its overview reaches ${iso(recording.lastTs)}; the full detail, up to its last intact record, is read from the recording.`,
    );
  recording.warnings.push(...notes);
  return {
    recording,
    foundBy: index ? 'index' : 'scan',
    members: members.length,
    bytesRead,
    uncoveredBytes: uncovered,
    tables,
    damage,
  };
}

/** Hands each line of a checked overview member to onLine as the record it copies (signal rows to onTable). */
function deliverMember(
  text: Buffer,
  lines: [number, number][],
  onLine: (buf: Buffer, start: number, end: number) => void,
  onTable: (buf: Buffer, start: number, end: number) => void,
): void {
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
