// Where the derived sections of a recording are (formats 1.2 and later, docs/recording-format.md §1.2, §6): the
// overview members and the index are copies of what the data members say, written so that a review opens at once.
// Readers of the data pass the file through DerivedFilter, which hands on the data members only and checks every
// derived member on its own. So a damaged overview or index costs what it is — the fast first screen — and never
// the data after it, and it is named with its byte offset. The index that ends a closed file says where each
// overview member is even when a member's own header is damaged; without one, members are found by their marker.
import type { FileHandle } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import type { IndexRecord } from './format';
import {
  MARKED_HEADER_BYTES,
  looseMarkedAt,
  markedAt,
  markerCandidate,
  sealedMemberLines,
  type MarkedKind,
} from './members';

/** The index of a closed file is in its last bytes (a day's index is ~10 KiB). */
export const TAIL_BYTES = 64 * 1024;
/** Largest derived member a reader holds to check it (an overview member is tens of KiB; at most 4 MiB of text). */
export const MAX_DERIVED_BYTES = 16 * 1024 * 1024;

/** A derived member of the file as a reader met it, and what is wrong with it. */
export interface DerivedMember {
  kind: MarkedKind;
  /** Byte offset in the file. */
  at: number;
  /** Bytes, as the index or the member's own header says. */
  length: number;
  /** First and last recorded time of an overview member, when the index says. */
  span: [number, number] | null;
  /** Null when it checked out; otherwise what is wrong, in words. */
  problem: string | null;
}

/** The index member at the end of the file. */
export interface TailIndex {
  at: number;
  length: number;
  /** Null when it is damaged (`problem` says how). */
  index: IndexRecord | null;
  problem: string | null;
}

/**
 * The index member that ends the file, if one does (read from its last TAIL_BYTES), with the tail itself. A
 * damaged index is returned with its problem; its entries are then not used.
 */
export async function readTailIndex(
  fh: FileHandle,
  size: number,
): Promise<{ tail: Buffer; tailAt: number; found: TailIndex | null }> {
  const tailLen = Math.min(size, TAIL_BYTES);
  const tail = Buffer.alloc(tailLen);
  await fh.read(tail, 0, tailLen, size - tailLen);
  const tailAt = size - tailLen;
  // The last member that ends the file, its header allowed one damaged byte: an index member, or one whose kind
  // byte is the damaged one.
  let last: { at: number; length: number; exact: boolean } | null = null;
  for (let i = markerCandidate(tail, 0); i >= 0; i = markerCandidate(tail, i + 1)) {
    const m = looseMarkedAt(tail, i);
    if (m && m.kind !== 'overview' && i + m.length === tailLen) last = { at: i, ...m };
  }
  if (!last) return { tail, tailAt, found: null };
  const at = tailAt + last.at;
  const found = { at, length: last.length, index: null, problem: DAMAGED_HEADER };
  if (!last.exact) return { tail, tailAt, found };
  try {
    const index = parseIndex(tail.subarray(last.at), at);
    return { tail, tailAt, found: { ...found, index, problem: null } };
  } catch (err) {
    return { tail, tailAt, found: { ...found, problem: (err as Error).message } };
  }
}

const DAMAGED_HEADER = 'its gzip header is damaged';

/** The index record of the index member `member` at byte `at`, checked; throws with what is wrong. */
export function parseIndex(member: Buffer, at: number): IndexRecord {
  const { text, lines } = sealedMemberLines(member, 'index');
  if (lines.length !== 1) throw new Error(`it holds ${lines.length} lines where an index has one`);
  const r = JSON.parse(text.toString('utf8', lines[0][0], lines[0][1])) as Partial<IndexRecord>;
  if (r.k !== 'index' || !Array.isArray(r.o) || typeof r.t !== 'number')
    throw new Error('the index record is malformed');
  let prevEnd = 0;
  for (const e of r.o) {
    if (
      !Array.isArray(e) ||
      e.length < 4 ||
      !Number.isSafeInteger(e[0]) ||
      !Number.isSafeInteger(e[1]) ||
      !Number.isFinite(e[2]) ||
      !Number.isFinite(e[3])
    )
      throw new Error('an index entry is malformed');
    if (e[0] < prevEnd || e[1] <= 0 || e[1] > MAX_DERIVED_BYTES || e[0] + e[1] > at)
      throw new Error('an index entry is out of place');
    prevEnd = e[0] + e[1];
  }
  return r as IndexRecord;
}

/** One derived member's bytes opened and checked: its lines (see sealedMemberLines), or what is wrong with it. */
export function openDerived(
  bytes: Buffer,
  kind: MarkedKind,
  length: number,
): { text: Buffer; lines: [number, number][] } | { problem: string } {
  const m = markedAt(bytes, 0);
  if (!m || m.kind !== kind || m.length !== length)
    return { problem: `no ${kind} member starts there: ${DAMAGED_HEADER}` };
  try {
    return sealedMemberLines(bytes, kind);
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

interface Collecting {
  member: DerivedMember;
  /** Bytes of the member still to come (its end or the file's, whichever is first). */
  remaining: number;
  parts: Buffer[];
}

/**
 * Raw file bytes in (in order, from offset 0), data members out: the derived members are held back, checked and
 * listed in `members`. With the file's checked index the members are where it says; otherwise they are found by
 * their marker. `toFileOffset` maps a position in the data it handed on back to the file.
 */
export class DerivedFilter extends Transform {
  readonly members: DerivedMember[] = [];
  /** [file offset, length] of every stretch held back, in file order. */
  private readonly skipped: [number, number][] = [];
  /** File offset of the next byte to come in. */
  private offset = 0;
  private collecting: Collecting | null = null;
  /** Bytes that may start a marker, held until the next chunk says. */
  private carry: Buffer | null = null;
  /** From the index: the derived members still ahead, in file order. */
  private readonly known: DerivedMember[] | null;

  constructor(
    private readonly size: number,
    tail: TailIndex | null,
  ) {
    super();
    if (tail?.index) {
      this.known = tail.index.o.map(([at, length, t0, t1]) => ({
        kind: 'overview' as const,
        at,
        length,
        span: [t0, t1] as [number, number],
        problem: null,
      }));
      this.known.push({ kind: 'index', at: tail.at, length: tail.length, span: null, problem: null });
    } else this.known = null;
  }

  /** Where byte `pos` of the data handed on is in the file. */
  toFileOffset(pos: number): number {
    let at = pos;
    for (const [from, length] of this.skipped) {
      if (from > at) break;
      at += length;
    }
    return at;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let buf = chunk;
    let base = this.offset;
    this.offset += chunk.length;
    if (this.carry) {
      buf = Buffer.concat([this.carry, chunk]);
      base -= this.carry.length;
      this.carry = null;
    }
    let pos = 0;
    while (pos < buf.length) {
      if (this.collecting) {
        pos = this.collect(buf, pos);
        continue;
      }
      const next = this.nextMember(buf, base, pos);
      if (next === null) {
        this.pushData(buf, pos, buf.length);
        break;
      }
      if ('carryFrom' in next) {
        this.pushData(buf, pos, next.carryFrom);
        this.carry = Buffer.from(buf.subarray(next.carryFrom));
        break;
      }
      this.pushData(buf, pos, next.member.at - base);
      pos = next.member.at - base;
      this.start(next.member);
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    // Bytes that began like a marker at the very end: data as far as this filter can tell (a trailer may end in
    // 0x1f). A closed file cut there lacks its index, which the reader says.
    if (this.carry) this.push(this.carry);
    this.carry = null;
    if (this.collecting) this.finishMember();
    if (this.known)
      for (const m of this.known)
        this.members.push({ ...m, problem: 'the file ends before it: it was cut short' });
    done();
  }

  private pushData(buf: Buffer, from: number, to: number): void {
    if (to > from) this.push(buf.subarray(from, to));
  }

  /**
   * The next derived member starting in buf at or after `pos`, or where to hold bytes back (a marker that may
   * continue in the next chunk), or null when buf holds none.
   */
  private nextMember(
    buf: Buffer,
    base: number,
    pos: number,
  ): { member: DerivedMember } | { carryFrom: number } | null {
    if (this.known) {
      const m = this.known[0];
      if (!m || m.at >= base + buf.length) return null;
      this.known.shift();
      // (An entry before `pos` would overlap the previous one: parseIndex refused that.)
      return { member: m };
    }
    let from = pos;
    for (;;) {
      const i = markerCandidate(buf, from);
      // A header may begin in the last bytes and continue in the next chunk: they wait for it.
      if (i < 0 || i + MARKED_HEADER_BYTES > buf.length) {
        const keep = Math.max(pos, Math.min(i < 0 ? buf.length : i, buf.length - MARKED_HEADER_BYTES + 1));
        return keep < buf.length ? { carryFrom: keep } : null;
      }
      const m = looseMarkedAt(buf, i);
      if (m) {
        const at = base + i;
        // A damaged kind byte: the index is the member that ends the file.
        const kind = m.kind ?? (at + m.length === this.size ? 'index' : 'overview');
        if (m.length <= MAX_DERIVED_BYTES && at + m.length <= this.size)
          return {
            member: { kind, at, length: m.length, span: null, problem: m.exact ? null : DAMAGED_HEADER },
          };
        // Its length runs past the file: cut short, or the length is the damaged byte. Not held back (where it
        // ends is not known, and zlib reads it as the gzip member it still is), but named.
        this.members.push({
          kind,
          at,
          length: m.length,
          span: null,
          problem: `its header gives it ${m.length} bytes, but the file ends ${this.size - at} bytes after its start: it was cut short, or that length is damaged`,
        });
      }
      from = i + 1;
    }
  }

  private start(member: DerivedMember): void {
    const remaining = Math.min(member.length, this.size - member.at);
    this.skipped.push([member.at, remaining]);
    this.collecting = { member, remaining, parts: [] };
    if (remaining < member.length)
      member.problem = `it is cut short: the file ends ${remaining} of its ${member.length} bytes into it`;
    if (remaining === 0) this.finishMember();
  }

  /** Takes the collected member's bytes from buf[pos…]; returns the position after them. */
  private collect(buf: Buffer, pos: number): number {
    const c = this.collecting as Collecting;
    const n = Math.min(c.remaining, buf.length - pos);
    c.parts.push(buf.subarray(pos, pos + n));
    c.remaining -= n;
    if (c.remaining === 0) this.finishMember();
    return pos + n;
  }

  private finishMember(): void {
    const c = this.collecting as Collecting;
    this.collecting = null;
    const m = c.member;
    if (m.problem === null && c.remaining === 0) {
      const opened = openDerived(Buffer.concat(c.parts), m.kind, m.length);
      if ('problem' in opened) m.problem = opened.problem;
    }
    this.members.push(m);
  }
}
