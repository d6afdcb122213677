// Marked gzip members (format 1.2, docs/recording-format.md §1.2). A 1.2 file is a sequence of gzip members —
// any gzip tool reads it as one stream — and the overview and index members carry a gzip "extra field" (RFC 1952
// FEXTRA) that names their kind and their length, so a reader finds them by offset (from the index) or by a scan
// of the raw bytes, and decompresses them without inflating the data members around them.
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

export type MarkedKind = 'overview' | 'index';

const KIND_BYTE: Record<MarkedKind, number> = { overview: 0x4f /* O */, index: 0x49 /* I */ };
/** gzip magic, CM=deflate, FLG=FEXTRA, MTIME 0, XFL 0, OS 255, XLEN 12, subfield id 'P' … */
const PREFIX = Buffer.from([0x1f, 0x8b, 0x08, 0x04, 0, 0, 0, 0, 0, 0xff, 12, 0, 0x50]);
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
  const text = inflateRawSync(raw, { maxOutputLength: MAX_MARKED_TEXT });
  const crc = member.readUInt32LE(m.length - 8);
  const size = member.readUInt32LE(m.length - 4);
  if (crc32(text) >>> 0 !== crc || text.length >>> 0 !== size)
    throw new Error('the member fails its gzip checksum');
  return text;
}
