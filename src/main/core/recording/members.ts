// Marked gzip members (format 1.2, docs/recording-format.md §1.2). A 1.2 file is a sequence of gzip members —
// any gzip tool reads it as one stream — and the overview and index members carry a gzip "extra field" (RFC 1952
// FEXTRA) that names their kind and their length, so a reader finds them by offset (from the index) or by a scan
// of the raw bytes, and decompresses them without inflating the data members around them.
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { BlockChecker, SUM_PREFIX } from './block-sum';

export type MarkedKind = 'overview' | 'index';

const KIND_BYTE: Record<MarkedKind, number> = { overview: 0x4f /* O */, index: 0x49 /* I */ };
/** gzip magic, CM=deflate, FLG=FEXTRA, MTIME 0, XFL 0, OS 255, XLEN 12, subfield id 'P' … */
export const PREFIX = Buffer.from([0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 12, 0, 0x50]);
/** … then the kind byte, subfield length 8, "pdc1", and the member's total length (uint32 LE). */
const MAGIC = Buffer.from('pdc1', 'latin1');
export const MARKED_HEADER_BYTES = 24;
const TRAILER_BYTES = 8;
/** Bounds what a reader inflates from one marked member (an overview segment is tens of KiB). */
export const MAX_MARKED_TEXT = 64 * 1024 * 1024;

/** One complete gzip member holding `text`, with the extra field that marks it as `kind`. */
export function markedMember(kind: MarkedKind, body: Buffer): Buffer {
  // deflateRaw + own header and trailer: zlib's gzip writer cannot set an extra field.
  const raw = deflateRawSync(body, { level: 6, memLevel: 9 });
  const total = MARKED_HEADER_BYTES + raw.length + TRAILER_BYTES;
  const out = Buffer.alloc(total);
  PREFIX.copy(out, 0);
  out[13] = KIND_BYTE[kind];
  out.writeUInt16LE(8, 14);
  MAGIC.copy(out, 16);
  out.writeUInt32LE(total, 20);
  raw.copy(out, MARKED_HEADER_BYTES);
  out.writeUInt32LE(crc32(body) >>> 0, total - 8);
  out.writeUInt32LE(body.length >>> 0, total - 4);
  return out;
}

/** The kind and length of a marked member starting at buf[at], or null when none starts there. */
export function markedAt(buf: Buffer, at: number): { kind: MarkedKind; length: number } | null {
  if (at < 0 || at + MARKED_HEADER_BYTES > buf.length) return null;
  if (buf.compare(PREFIX, 0, PREFIX.length, at, at + PREFIX.length) !== 0) return null;
  const k = buf[at + 13];
  const kind: MarkedKind | null =
    k === KIND_BYTE.overview ? 'overview' : k === KIND_BYTE.index ? 'index' : null;
  if (!kind || buf.readUInt16LE(at + 14) !== 8) return null;
  if (buf.compare(MAGIC, 0, 4, at + 16, at + 20) !== 0) return null;
  const length = buf.readUInt32LE(at + 20);
  if (length < MARKED_HEADER_BYTES + TRAILER_BYTES) return null;
  return { kind, length };
}

/** Bytes 14–19 of a marked member's header: the subfield length and "pdc1". */
const MARKER_TAIL = Buffer.concat([Buffer.from([8, 0]), MAGIC]);
const MARKER_TAIL_AT = 14;

/**
 * Where a marked member may start in buf at or after `from`: the earliest position where either half of its
 * header's fixed bytes (the 13 of PREFIX, or the 6 of MARKER_TAIL) is found — one damaged byte leaves one half
 * intact. -1 when there is none.
 */
export function markerCandidate(buf: Buffer, from: number): number {
  const a = buf.indexOf(PREFIX, from);
  const t = buf.indexOf(MARKER_TAIL, from + MARKER_TAIL_AT);
  const b = t < 0 ? -1 : t - MARKER_TAIL_AT;
  return a < 0 ? b : b < 0 ? a : Math.min(a, b);
}

/**
 * The marked member header at buf[at], allowing one damaged byte among its fixed bytes and kind: `kind` is null
 * when the kind byte is the damaged one, `exact` false when any is. Null when none starts there (or the length is
 * not a member's). Data members cannot match: their header differs in more than one byte and has no extra field.
 */
export function looseMarkedAt(
  buf: Buffer,
  at: number,
): { kind: MarkedKind | null; length: number; exact: boolean } | null {
  if (at < 0 || at + MARKED_HEADER_BYTES > buf.length) return null;
  let bad = 0;
  for (let k = 0; k < PREFIX.length; k++) if (buf[at + k] !== PREFIX[k]) bad++;
  for (let k = 0; k < MARKER_TAIL.length; k++) if (buf[at + MARKER_TAIL_AT + k] !== MARKER_TAIL[k]) bad++;
  const k = buf[at + 13];
  const kind: MarkedKind | null =
    k === KIND_BYTE.overview ? 'overview' : k === KIND_BYTE.index ? 'index' : null;
  if (kind === null) bad++;
  const length = buf.readUInt32LE(at + 20);
  if (bad > 1 || length < MARKED_HEADER_BYTES + TRAILER_BYTES) return null;
  return { kind, length, exact: bad === 0 };
}

/** Offsets of every marked member in `buf` (a whole file or its tail), checked for shape, not content. */
export function scanMarked(buf: Buffer, from = 0): { at: number; kind: MarkedKind; length: number }[] {
  const out: { at: number; kind: MarkedKind; length: number }[] = [];
  let at = buf.indexOf(PREFIX, from);
  while (at >= 0) {
    const m = markedAt(buf, at);
    if (m && at + m.length <= buf.length) {
      out.push({ at, ...m });
      at = buf.indexOf(PREFIX, at + m.length);
    } else at = buf.indexOf(PREFIX, at + 1);
  }
  return out;
}

/**
 * The text of the marked member at bytes [0, length) of `member`: inflated and checked against the member's
 * CRC-32 and length. Throws with what is wrong.
 */
export function openMarked(member: Buffer): Buffer {
  const m = markedAt(member, 0);
  if (!m) throw new Error('no marked gzip member there');
  if (m.length > member.length)
    throw new Error(`the member is cut short (${member.length} of ${m.length} bytes)`);
  const raw = member.subarray(MARKED_HEADER_BYTES, m.length - TRAILER_BYTES);
  let text: Buffer;
  try {
    text = inflateRawSync(raw, { maxOutputLength: MAX_MARKED_TEXT });
  } catch (err) {
    throw new Error(`it cannot be decompressed (${(err as Error).message})`, { cause: err });
  }
  const crc = member.readUInt32LE(m.length - 8);
  const size = member.readUInt32LE(m.length - 4);
  if (crc32(text) >>> 0 !== crc || text.length >>> 0 !== size)
    throw new Error('the member fails its gzip checksum');
  return text;
}

const LINE_START: Record<MarkedKind, Buffer> = {
  overview: Buffer.from('{"k":"o.'),
  index: Buffer.from('{"k":"index",'),
};

/**
 * The lines of the marked member `member` (its first `length` bytes), checked three ways: the gzip CRC-32 and
 * length, the block seal its last line carries, and every other line being a record of its kind. Returns the
 * text and each line's [start, end) (newline excluded, seal excluded). Throws with what is wrong.
 */
export function sealedMemberLines(
  member: Buffer,
  kind: MarkedKind,
): { text: Buffer; lines: [number, number][] } {
  const text = openMarked(member);
  const checker = new BlockChecker();
  const lines: [number, number][] = [];
  const start = LINE_START[kind];
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf(10, pos);
    if (nl < 0) throw new Error('its last line is incomplete');
    if (text.toString('utf8', pos, Math.min(nl, pos + SUM_PREFIX.length)) === SUM_PREFIX) {
      const why = checker.verify(text.toString('utf8', pos, nl));
      if (why) throw new Error(why);
      if (nl + 1 !== text.length) throw new Error('lines follow its seal');
      return { text, lines };
    }
    checker.add(text, pos, nl + 1);
    if (text.compare(start, 0, start.length, pos, Math.min(nl, pos + start.length)) !== 0)
      throw new Error(`it holds a line that is not an ${kind} record`);
    lines.push([pos, nl]);
    pos = nl + 1;
  }
  throw new Error('it has no block seal');
}
