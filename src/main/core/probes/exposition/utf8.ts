// Bytes of an exposition to the string the parser reads, without losing where the bytes were not UTF-8.
// Decoding lossily first (Buffer.toString, TextDecoder) turns every invalid sequence into U+FFFD, so label
// values that differ only in invalid bytes become one series; Prometheus rejects them instead. Valid input
// takes one native check and one native decode; only invalid input walks the bytes in JavaScript.

import { Buffer, isUtf8 } from 'node:buffer';

/** The lines of a decoded text that had invalid UTF-8, and where on each line the first bad sequence starts. */
export interface InvalidUtf8 {
  /** 1-based line numbers, ascending. */
  readonly lines: readonly number[];
  /** Byte offset of the first ill-formed sequence on each of those lines. */
  readonly byteOffsets: readonly number[];
  readonly bytes: Uint8Array;
}

export interface DecodedExposition {
  text: string;
  /** Undefined when the bytes were valid UTF-8. */
  invalid: InvalidUtf8 | undefined;
}

const LF = 0x0a;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Decodes UTF-8 with Buffer.toString: a byte-order mark is kept (the parser then rejects it, as Prometheus
 * does) and each maximal ill-formed subpart becomes one U+FFFD (the WHATWG rule). Invalid input also gets
 * the lines it went wrong on; a '\n' byte is never part of a multi-byte sequence, so byte lines and text
 * lines are the same lines. One entry per bad line keeps that record small whatever the input.
 */
export function decodeExposition(bytes: Uint8Array): DecodedExposition {
  const buffer = asBuffer(bytes);
  const text = buffer.toString('utf8');
  if (isUtf8(buffer)) return { text, invalid: undefined };
  const lines: number[] = [];
  const byteOffsets: number[] = [];
  let line = 1;
  let lineFlagged = false;
  const end = buffer.length;
  let i = 0;
  while (i < end) {
    const b = buffer[i];
    if (b < 0x80) {
      if (b === LF) {
        line++;
        lineFlagged = false;
      }
      i++;
      continue;
    }
    const valid = validSequenceLength(buffer, i);
    if (valid > 0) {
      i += valid;
      continue;
    }
    if (!lineFlagged) {
      lines.push(line);
      byteOffsets.push(i);
      lineFlagged = true;
    }
    i += invalidSubpartLength(buffer, i);
  }
  return { text, invalid: { lines, byteOffsets, bytes: buffer } };
}

/** 1-based column, in UTF-16 code units of the decoded text as the parser counts them, of byte `offset`. */
export function utf16Column(bytes: Uint8Array, offset: number): number {
  let lineStart = offset;
  while (lineStart > 0 && bytes[lineStart - 1] !== LF) lineStart--;
  return asBuffer(bytes).toString('utf8', lineStart, offset).length + 1;
}

function isContinuation(b: number): boolean {
  return (b & 0xc0) === 0x80;
}

/** Allowed range of the second byte after lead byte `lead` (Unicode table 3-7), or undefined for a bad lead. */
function secondByteRange(lead: number): [number, number] | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return [0x80, 0xbf];
  if (lead === 0xe0) return [0xa0, 0xbf];
  if (lead === 0xed) return [0x80, 0x9f];
  if (lead >= 0xe1 && lead <= 0xef) return [0x80, 0xbf];
  if (lead === 0xf0) return [0x90, 0xbf];
  if (lead >= 0xf1 && lead <= 0xf3) return [0x80, 0xbf];
  if (lead === 0xf4) return [0x80, 0x8f];
  return undefined;
}

function sequenceLength(lead: number): number {
  return lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

/** Length of the well-formed sequence starting at `i` (a byte ≥ 0x80), or 0 when it is ill-formed. */
function validSequenceLength(bytes: Uint8Array, i: number): number {
  const range = secondByteRange(bytes[i]);
  if (range === undefined) return 0;
  const n = sequenceLength(bytes[i]);
  if (i + n > bytes.length) return 0;
  if (bytes[i + 1] < range[0] || bytes[i + 1] > range[1]) return 0;
  for (let k = 2; k < n; k++) if (!isContinuation(bytes[i + k])) return 0;
  return n;
}

/** Bytes one U+FFFD replaces at an ill-formed `i`: the longest prefix of a well-formed sequence, at least 1. */
function invalidSubpartLength(bytes: Uint8Array, i: number): number {
  const range = secondByteRange(bytes[i]);
  if (range === undefined || i + 1 >= bytes.length) return 1;
  if (bytes[i + 1] < range[0] || bytes[i + 1] > range[1]) return 1;
  const n = sequenceLength(bytes[i]);
  let k = 2;
  while (k < n && i + k < bytes.length && isContinuation(bytes[i + k])) k++;
  return k;
}

function hex(b: number): string {
  return `0x${b.toString(16).padStart(2, '0')}`;
}

/** What is wrong with the ill-formed sequence at byte `i`, for error messages. */
export function describeInvalidUtf8(bytes: Uint8Array, i: number): string {
  const lead = bytes[i];
  const hexes = (n: number): string => Array.from(bytes.subarray(i, i + n), hex).join(' ');
  // the lead and, when it is a continuation byte, the next one: what an overlong or surrogate form shows
  const pair =
    i + 1 < bytes.length && isContinuation(bytes[i + 1]) ? `bytes ${hexes(2)} are` : `byte ${hex(lead)} is`;
  if (lead >= 0x80 && lead <= 0xbf) return `byte ${hex(lead)} is a continuation byte without a lead byte`;
  if (lead === 0xc0 || lead === 0xc1)
    return `${pair} an overlong encoding (0xc0 and 0xc1 never occur in UTF-8)`;
  if (lead >= 0xf5) return `byte ${hex(lead)} never occurs in UTF-8`;
  const range = secondByteRange(lead) as [number, number];
  const second = bytes[i + 1];
  if (i + 1 < bytes.length && isContinuation(second) && (second < range[0] || second > range[1])) {
    if (lead === 0xed) return `${pair} the start of an encoded UTF-16 surrogate`;
    if (lead === 0xf4) return `${pair} the start of a code point above U+10FFFF`;
    return `${pair} the start of an overlong encoding`;
  }
  return `the ${sequenceLength(lead)}-byte sequence starting ${hexes(invalidSubpartLength(bytes, i))} is cut short`;
}
