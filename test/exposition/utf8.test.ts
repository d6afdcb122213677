// Expositions given as bytes: invalid UTF-8 is rejected where Prometheus rejects it, with the line and
// column of the first bad byte, instead of being read as U+FFFD (which merged different series into one).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExpositionParseError, parseExposition } from '../../src/main/core/probes/exposition/parser';
import { decodeExposition, utf16Column } from '../../src/main/core/probes/exposition/utf8';
import type { ExpositionFormat } from '../../src/main/core/probes/exposition/types';

/** Bytes from text where «xx» stands for the raw byte 0xxx and everything else is UTF-8. */
function bytes(text: string): Buffer {
  const parts = text.split(/«([0-9a-f]{2})»/);
  return Buffer.concat(
    parts.map((part, k) => (k % 2 === 1 ? Buffer.from([parseInt(part, 16)]) : Buffer.from(part, 'utf8'))),
  );
}

function errorOf(
  input: Uint8Array,
  format: ExpositionFormat = 'prometheus',
): { line: number; column: number; reason: string } {
  try {
    parseExposition(input, format);
  } catch (err) {
    if (err instanceof ExpositionParseError)
      return { line: err.line, column: err.column, reason: err.reason };
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(input.toString())} to be rejected`);
}

describe('invalid UTF-8 in bytes input', () => {
  it('no longer merges two label values that differ only in invalid bytes into one series', () => {
    // Before: both values were read as "\ufffd" and the exposition had two samples of one series.
    const input = bytes('m{path="«ff»"} 1\nm{path="«fe»"} 2\n');
    expect(errorOf(input)).toMatchObject({
      line: 1,
      column: 9,
      reason: expect.stringMatching(/^invalid UTF-8: byte 0xff never occurs in UTF-8 \(byte offset 8\)/),
    });
  });

  it.each([
    [
      'a lone continuation byte',
      'm{a="x«80»"} 1\n',
      7,
      /byte 0x80 is a continuation byte without a lead byte/,
    ],
    ['a 2-byte overlong form', 'm{a="«c0»«af»"} 1\n', 6, /bytes 0xc0 0xaf are an overlong encoding/],
    [
      'a 3-byte overlong form',
      'm{a="«e0»«80»«af»"} 1\n',
      6,
      /bytes 0xe0 0x80 are the start of an overlong encoding/,
    ],
    [
      'an encoded surrogate',
      'm{a="«ed»«a0»«80»"} 1\n',
      6,
      /bytes 0xed 0xa0 are the start of an encoded UTF-16 surrogate/,
    ],
    [
      'a code point above U+10FFFF',
      'm{a="«f4»«90»«80»«80»"} 1\n',
      6,
      /0xf4 0x90 are the start of a code point above U\+10FFFF/,
    ],
    [
      'a lead byte 0xc1 before ASCII',
      'm{a="«c1»x"} 1\n',
      6,
      /byte 0xc1 is an overlong encoding \(0xc0 and 0xc1 never/,
    ],
    [
      'a lead byte without continuation',
      'm{a="«e2»x"} 1\n',
      6,
      /the 3-byte sequence starting 0xe2 is cut short/,
    ],
    ['a truncated sequence', 'm{a="«e2»«82»"} 1\n', 6, /the 3-byte sequence starting 0xe2 0x82 is cut short/],
    ['a sequence cut by the closing quote', 'm{a="ok«f0»«9f»«98»"} 1\n', 8, /4-byte sequence .* cut short/],
  ])('rejects %s in a label value with its column', (_what, text, column, reason) => {
    expect(errorOf(bytes(text))).toMatchObject({ line: 1, column, reason: expect.stringMatching(reason) });
  });

  it('counts the column in UTF-16 code units of the valid text before the bad byte', () => {
    // "é" is one code unit, "😀" two: the bad byte is the 9th code unit of line 2
    expect(errorOf(bytes('ok 1\nm{a="é😀«ff»"} 1\n'))).toMatchObject({ line: 2, column: 9 });
  });

  it('rejects invalid UTF-8 in HELP text (as Prometheus textparse does), names and values', () => {
    expect(errorOf(bytes('# HELP m caf«e9»\nm 1\n'))).toMatchObject({ line: 1, column: 13 });
    expect(errorOf(bytes('m«ff» 1\n'))).toMatchObject({ line: 1, column: 2 });
    expect(errorOf(bytes('m 1«ff»\n'))).toMatchObject({ line: 1, column: 4 });
    expect(errorOf(bytes('# TYPE m gauge«ff»\n'))).toMatchObject({ line: 1, column: 15 });
  });

  it('still skips plain comments whatever their bytes, as Prometheus does', () => {
    const e = parseExposition(bytes('# latin-1 caf«e9»\n# HELP«ff» not a HELP line\nm 1\n'), 'prometheus');
    expect(e.sampleCount).toBe(1);
  });

  it('rejects invalid UTF-8 on any OpenMetrics line', () => {
    expect(errorOf(bytes('# HELP m caf«e9»\nm 1\n# EOF\n'), 'openmetrics')).toMatchObject({
      line: 1,
      column: 13,
    });
    expect(errorOf(bytes('m{a="«c0»«af»"} 1\n# EOF\n'), 'openmetrics')).toMatchObject({ line: 1, column: 6 });
  });

  it('reads valid multi-byte UTF-8, a literal U+FFFD included, exactly as the string would be read', () => {
    const text = '# HELP m Größe in µs\nm{a="日本",b="😀",c="\ufffd"} 1\n';
    expect(parseExposition(Buffer.from(text, 'utf8'), 'prometheus')).toEqual(
      parseExposition(text, 'prometheus'),
    );
    const om = '# TYPE m gauge\nm{a="é"} 1\n# EOF\n';
    expect(parseExposition(new TextEncoder().encode(om), 'openmetrics')).toEqual(
      parseExposition(om, 'openmetrics'),
    );
  });

  it('keeps a byte-order mark, so the first line is rejected as promtool rejects it', () => {
    expect(errorOf(bytes('«ef»«bb»«bf»m 1\n')).reason).toMatch(/expected a metric name, found "\ufeff"/);
  });
});

describe('decodeExposition', () => {
  it('decodes exactly as Buffer.toString and flags every line with an ill-formed sequence', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constantFrom(
              0x0a,
              0x20,
              0x41,
              0x80,
              0xbf,
              0xc0,
              0xc2,
              0xdf,
              0xe0,
              0xed,
              0xef,
              0xf0,
              0xf4,
              0xff,
            ),
            fc.integer({ min: 0, max: 255 }),
          ),
          { maxLength: 64 },
        ),
        (list) => {
          const input = Buffer.from(list);
          const { text, invalid } = decodeExposition(input);
          expect(text).toBe(input.toString('utf8'));
          // reference: a line is bad when its bytes do not survive a round trip through the decoder
          const badLines: number[] = [];
          let start = 0;
          let line = 1;
          for (let i = 0; i <= input.length; i++) {
            if (i === input.length || input[i] === 0x0a) {
              const piece = input.subarray(start, i);
              if (!Buffer.from(piece.toString('utf8'), 'utf8').equals(piece)) badLines.push(line);
              line++;
              start = i + 1;
            }
          }
          expect(invalid?.lines ?? []).toEqual(badLines);
          if (invalid !== undefined) {
            invalid.lines.forEach((lineNo, k) => {
              const lineText = text.split('\n')[lineNo - 1];
              expect(lineText[utf16Column(input, invalid.byteOffsets[k]) - 1]).toBe('\ufffd');
            });
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
