// Character-level rules shared by the Prometheus text and OpenMetrics dialects: name characters, the float
// grammar, timestamps and escapes. Everything works on index ranges of the input so the hot path does not
// allocate substrings it does not keep.

import { Buffer } from 'node:buffer';

export const CH_TAB = 9;
export const CH_NEWLINE = 10;
export const CH_CR = 13;
export const CH_SPACE = 32;
export const CH_QUOTE = 34;
export const CH_HASH = 35;
export const CH_PLUS = 43;
export const CH_COMMA = 44;
export const CH_MINUS = 45;
export const CH_DOT = 46;
export const CH_EQUALS = 61;
export const CH_BACKSLASH = 92;
export const CH_LBRACE = 123;
export const CH_RBRACE = 125;

const METRIC_START = 1;
const METRIC_CHAR = 2;
const LABEL_START = 4;
const LABEL_CHAR = 8;

const CHAR_CLASS = (() => {
  const table = new Uint8Array(128);
  const mark = (from: number, to: number, flags: number): void => {
    for (let c = from; c <= to; c++) table[c] |= flags;
  };
  mark(0x61, 0x7a, METRIC_START | METRIC_CHAR | LABEL_START | LABEL_CHAR); // a-z
  mark(0x41, 0x5a, METRIC_START | METRIC_CHAR | LABEL_START | LABEL_CHAR); // A-Z
  mark(0x5f, 0x5f, METRIC_START | METRIC_CHAR | LABEL_START | LABEL_CHAR); // _
  mark(0x30, 0x39, METRIC_CHAR | LABEL_CHAR); // 0-9
  mark(0x3a, 0x3a, METRIC_START | METRIC_CHAR); // ':' is legal in metric names only
  return table;
})();

export function isMetricNameStart(c: number): boolean {
  return c < 128 && (CHAR_CLASS[c] & METRIC_START) !== 0;
}

export function isMetricNameChar(c: number): boolean {
  return c < 128 && (CHAR_CLASS[c] & METRIC_CHAR) !== 0;
}

export function isLabelNameStart(c: number): boolean {
  return c < 128 && (CHAR_CLASS[c] & LABEL_START) !== 0;
}

export function isLabelNameChar(c: number): boolean {
  return c < 128 && (CHAR_CLASS[c] & LABEL_CHAR) !== 0;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Case-insensitive comparison of text[start, end) with a lower-case ASCII word. */
function equalsIgnoreCase(text: string, start: number, end: number, lowerWord: string): boolean {
  if (end - start !== lowerWord.length) return false;
  for (let i = 0; i < lowerWord.length; i++) {
    if ((text.charCodeAt(start + i) | 0x20) !== lowerWord.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Scans the decimal part of a float: digits [. digits] [e [sign] digits] (or ". digits" …) starting at `i`.
 * Returns the index after it, or -1 when the text there is not a decimal number. Hex floats, '_' separators
 * and other Go/Python extras are rejected, as both Prometheus parsers and the OpenMetrics ABNF do.
 */
function scanDecimal(text: string, i: number, end: number): number {
  let digits = 0;
  while (i < end && isDigit(text.charCodeAt(i))) {
    i++;
    digits++;
  }
  if (i < end && text.charCodeAt(i) === CH_DOT) {
    i++;
    while (i < end && isDigit(text.charCodeAt(i))) {
      i++;
      digits++;
    }
  }
  if (digits === 0) return -1;
  if (i < end && (text.charCodeAt(i) | 0x20) === 0x65 /* e */) {
    i++;
    if (i < end && (text.charCodeAt(i) === CH_PLUS || text.charCodeAt(i) === CH_MINUS)) i++;
    const expStart = i;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
    if (i === expStart) return -1;
  }
  return i;
}

const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * Parses a sample value: a decimal float, ±Inf/±Infinity or NaN (case-insensitive, as in Go's ParseFloat and
 * the OpenMetrics ABNF). Returns undefined when text[start, end) is not such a number or is outside the
 * float64 range (Go's ParseFloat rejects 1e400; Prometheus therefore does too).
 */
export function parseFloatToken(text: string, start: number, end: number): number | undefined {
  if (start >= end) return undefined;
  let i = start;
  let c = text.charCodeAt(i);
  let negative = false;
  let signed = false;
  if (c === CH_PLUS || c === CH_MINUS) {
    negative = c === CH_MINUS;
    signed = true;
    if (++i === end) return undefined;
    c = text.charCodeAt(i);
  }
  if (!isDigit(c) && c !== CH_DOT) {
    if (equalsIgnoreCase(text, i, end, 'inf') || equalsIgnoreCase(text, i, end, 'infinity')) {
      return negative ? -Infinity : Infinity;
    }
    if (!signed && equalsIgnoreCase(text, i, end, 'nan')) return NaN;
    return undefined;
  }
  // Accumulate the significand as an integer and count the decimal exponent.
  let mantissa = 0;
  let significant = 0;
  let digits = 0;
  let scale = 0;
  for (; i < end; i++) {
    c = text.charCodeAt(i);
    if (!isDigit(c)) break;
    if (mantissa !== 0 || c !== 48) significant++;
    mantissa = mantissa * 10 + (c - 48);
    digits++;
  }
  if (i < end && c === CH_DOT) {
    for (i++; i < end; i++) {
      c = text.charCodeAt(i);
      if (!isDigit(c)) break;
      if (mantissa !== 0 || c !== 48) significant++;
      mantissa = mantissa * 10 + (c - 48);
      digits++;
      scale--;
    }
  }
  if (digits === 0) return undefined;
  if (i < end && (c | 0x20) === 0x65 /* e */) {
    i++;
    let expNegative = false;
    if (i < end && (text.charCodeAt(i) === CH_PLUS || text.charCodeAt(i) === CH_MINUS)) {
      expNegative = text.charCodeAt(i) === CH_MINUS;
      i++;
    }
    const expStart = i;
    let exponent = 0;
    for (; i < end; i++) {
      c = text.charCodeAt(i);
      if (!isDigit(c)) break;
      if (exponent < 100000) exponent = exponent * 10 + (c - 48);
    }
    if (i === expStart) return undefined;
    scale += expNegative ? -exponent : exponent;
  }
  if (i !== end) return undefined;
  // Clinger's fast path: an integer significand below 2^53 and an exact power of ten give a correctly rounded
  // result with one IEEE multiplication or division, identical to Number(). Everything else goes to Number().
  let value: number;
  if (significant <= 15 && scale >= -22 && scale <= 22) {
    value = scale >= 0 ? mantissa * POW10[scale] : mantissa / POW10[-scale];
    return negative ? -value : value;
  }
  value = Number(text.slice(start, end));
  return value === Infinity || value === -Infinity ? undefined : value;
}

/** True when the token spells an infinity in the canonical OpenMetrics form, i.e. exactly "+Inf" or "-Inf". */
export function isCanonicalInfinity(token: string): boolean {
  return token === '+Inf' || token === '-Inf';
}

/** Prometheus text timestamp: a signed base-10 int64 of milliseconds. Undefined when invalid. */
export function parseIntegerTimestamp(text: string, start: number, end: number): number | undefined {
  let i = start;
  const negative = i < end && text.charCodeAt(i) === CH_MINUS;
  if (i < end && (negative || text.charCodeAt(i) === CH_PLUS)) i++;
  if (i === end) return undefined;
  for (let j = i; j < end; j++) if (!isDigit(text.charCodeAt(j))) return undefined;
  while (i < end - 1 && text.charCodeAt(i) === 48) i++;
  // int64 bounds, as Go's ParseInt enforces, compared on the digits because doubles blur them
  if (end - i > 19) return undefined;
  if (end - i === 19 && text.slice(i, end) > (negative ? '9223372036854775808' : '9223372036854775807')) {
    return undefined;
  }
  return Number(text.slice(start, end));
}

/**
 * OpenMetrics timestamp: a decimal number of seconds (no NaN/Inf), converted to milliseconds. The decimal
 * point is shifted in the text rather than multiplying by 1000, so "1.1" becomes exactly 1100 ms, not
 * 1100.0000000000002.
 */
export function parseSecondsTimestampMs(text: string, start: number, end: number): number | undefined {
  let i = start;
  if (i < end && (text.charCodeAt(i) === CH_PLUS || text.charCodeAt(i) === CH_MINUS)) i++;
  if (scanDecimal(text, i, end) !== end) return undefined;
  const token = text.slice(start, end);
  let expAt = token.indexOf('e');
  if (expAt === -1) expAt = token.indexOf('E');
  const value =
    expAt === -1
      ? Number(token + 'e3')
      : Number(token.slice(0, expAt) + 'e' + (Number(token.slice(expAt + 1)) + 3));
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Label-value escapes: \\, \" and \n are decoded; any other backslash sequence is kept as written. That is what
 * Prometheus' textparse and the OpenMetrics reference parser do (the suite's `escaping` case keeps "\z").
 */
export function unescapeLabelValue(text: string, start: number, end: number): string {
  return unescapeRange(text, start, end, true);
}

/**
 * HELP-text escapes. Prometheus text decodes only \\ and \n (textparse's helpReplacer); OpenMetrics also
 * decodes \". Unknown sequences and a trailing lone backslash are kept as written.
 */
export function unescapeHelp(text: string, start: number, end: number, decodeQuote: boolean): string {
  let first = start;
  while (first < end && text.charCodeAt(first) !== CH_BACKSLASH) first++;
  if (first === end) return text.slice(start, end);
  return unescapeRange(text, start, end, decodeQuote);
}

// Decoded text is written as char codes into a buffer and read back as one flat string. Appending pieces to a
// string (`out += …`) makes one cons-string node of ~32 bytes per escape that lives as long as the result:
// 20 MB of "\\\\" in one label held ~17× its size. The buffer is one byte per character while every
// character fits (the latin1 decode then gives V8's one-byte string), two bytes once one does not.
const SCRATCH_BYTES = 16 * 1024;
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);

function unescapeRange(text: string, start: number, end: number, decodeQuote: boolean): string {
  // the output is never longer than the input range
  const capacity = end - start;
  const narrow = capacity <= SCRATCH_BYTES ? scratch : Buffer.allocUnsafe(capacity);
  let n = 0;
  for (let i = start; i < end; i++) {
    let c = text.charCodeAt(i);
    if (c === CH_BACKSLASH && i + 1 < end) {
      const next = text.charCodeAt(i + 1);
      if (next === CH_BACKSLASH || (next === CH_QUOTE && decodeQuote)) {
        c = next;
        i++;
      } else if (next === 0x6e) {
        c = CH_NEWLINE;
        i++;
      } else {
        // an unknown sequence is kept, and its second character must not start an escape
        if (next > 0xff) return unescapeWide(text, i, end, decodeQuote, narrow, n);
        narrow[n++] = c;
        c = next;
        i++;
      }
    }
    if (c > 0xff) return unescapeWide(text, i, end, decodeQuote, narrow, n);
    narrow[n++] = c;
  }
  return narrow.toString('latin1', 0, n);
}

/** unescapeRange from `i` on, for text with characters above U+00FF; `done` has the first `n` characters. */
function unescapeWide(
  text: string,
  i: number,
  end: number,
  decodeQuote: boolean,
  done: Buffer,
  n: number,
): string {
  const wide = new Uint16Array(n + (end - i));
  for (let k = 0; k < n; k++) wide[k] = done[k];
  for (; i < end; i++) {
    let c = text.charCodeAt(i);
    if (c === CH_BACKSLASH && i + 1 < end) {
      const next = text.charCodeAt(i + 1);
      if (next === CH_BACKSLASH || (next === CH_QUOTE && decodeQuote)) {
        c = next;
        i++;
      } else if (next === 0x6e) {
        c = CH_NEWLINE;
        i++;
      } else {
        wide[n++] = c;
        c = next;
        i++;
      }
    }
    wide[n++] = c;
  }
  return Buffer.from(wide.buffer, 0, n * 2).toString('utf16le');
}

/** Number of Unicode code points (what OpenMetrics' 128-character exemplar limit counts). */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Error message for a token that should have been a number. */
export function invalidNumber(what: string, token: string): string {
  if (token.endsWith('\r'))
    return `invalid ${what}: the line ends with a carriage return (CRLF line endings are not allowed)`;
  const asNumber = Number(token);
  if (asNumber === Infinity || asNumber === -Infinity) {
    if (/^[+-]?[0-9.]/.test(token)) return `${what} ${JSON.stringify(token)} is outside the float64 range`;
  }
  return `invalid ${what} ${JSON.stringify(token)} (expected a float such as 1, -2.5, 8.128902e+06, NaN, +Inf or -Inf)`;
}

/** Short human description of the character at `i` for error messages. */
export function describeChar(text: string, i: number, end: number): string {
  if (i >= end) return 'end of line';
  const c = text.charCodeAt(i);
  if (c === CH_TAB) return 'a tab';
  if (c === CH_SPACE) return 'a space';
  if (c === CH_CR) return 'a carriage return (CRLF line endings are not allowed)';
  if (c < 32 || c === 127) return `control character U+${c.toString(16).padStart(4, '0').toUpperCase()}`;
  return JSON.stringify(String.fromCodePoint(text.codePointAt(i) ?? c));
}
