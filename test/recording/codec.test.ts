// The fast byte-level row parser must agree exactly with the JSON path (which accepts any valid JSON), so a
// file re-serialised by another tool (Python's json.dumps, jq) reads back the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { absoluteToken, decimalToken } from '../../src/main/core/recording/format';
import { ParsedRow, RowParser, TOKEN_DECIMAL, TOKEN_RAW } from '../../src/main/core/recording/row-parser';
import { RecordingWriter, readRecording } from '../../src/main/core/recording';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { header, manualClock, tempDir } from './helpers';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(async () => {
  await cleanup();
});

/** JSON with Python's default separators (", " and ": "), strings untouched. */
function pyDumps(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(pyDumps).join(', ')}]`;
  if (x !== null && typeof x === 'object')
    return `{${Object.entries(x)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pyDumps(v)}`)
      .join(', ')}}`;
  return JSON.stringify(x);
}

function parseBoth(line: string): [ParsedRow, ParsedRow, boolean] {
  const fast = new ParsedRow(4);
  const ok = new RowParser().parse(Buffer.from(line), 0, Buffer.byteLength(line), fast);
  const slow = new ParsedRow(4);
  slow.fromRecord(JSON.parse(line));
  return [fast, slow, ok];
}

describe('value tokens', { timeout: 60_000 }, () => {
  it('decode every double exactly, the same way on the fast and the JSON path', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double(),
          fc.integer(),
          fc.integer({ min: -1e9, max: 1e9 }).map((x) => x / 1000),
          fc.maxSafeInteger(),
        ),
        (v) => {
          const tok = absoluteToken(v);
          const line = `{"k":"s","t":1767600000000,"g":"decode","v":[1,"${tok}",2,-17]}`;
          const [fast, slow, ok] = parseBoth(line);
          expect(ok).toBe(true);
          expect(fast.count).toBe(2);
          for (const pr of [fast, slow]) {
            expect(Object.is(pr.value(0), v), `${tok} → ${pr.value(0)}`).toBe(true);
            expect(pr.num[1]).toBe(-17);
            expect(pr.gap[1]).toBe(2);
          }
          const dt = decimalToken(tok);
          // value() has resolved lazily parsed raw text by now.
          expect(fast.kind[0]).toBe(slow.kind[0]);
          expect(fast.kind[0]).toBe(dt ? TOKEN_DECIMAL : TOKEN_RAW);
          if (dt) {
            expect(fast.mant[0]).toBe(dt.m);
            expect(fast.dec[0]).toBe(dt.d);
            expect(slow.mant[0]).toBe(dt.m);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('classifies tokens as the format document says', () => {
    expect(decimalToken('0.53')).toEqual({ m: 53, d: 2 });
    expect(decimalToken('447416')).toEqual({ m: 447416, d: 0 });
    expect(decimalToken('-2.5')).toEqual({ m: -25, d: 1 });
    expect(decimalToken('0.5286751239871234')).toEqual({ m: 5286751239871234, d: 16 });
    // 17 significant digits: mantissa beyond 2^53, stored raw
    expect(decimalToken('14107.234987234521')).toBeNull();
    for (const raw of ['NaN', '+Inf', '-Inf', '-0', '1e+21', '5e-324', '1.', '.5', '', '0x10', ' 1'])
      expect(decimalToken(raw), raw).toBeNull();
  });

  it('falls back to JSON for rows that are valid JSON but not in canonical form', () => {
    const spaced = '{"k": "s", "t": 1767600000000, "g": "decode", "v": [1, "0.5", 3, 2]}';
    const pr = new ParsedRow(4);
    expect(new RowParser().parse(Buffer.from(spaced), 0, spaced.length, pr)).toBe(false);
    pr.fromRecord(JSON.parse(spaced));
    expect([pr.count, pr.value(0), pr.gap[1], pr.num[1]]).toEqual([2, 0.5, 3, 2]);
  });
});

describe('a recording re-serialised by another tool', { timeout: 120_000 }, () => {
  it('reads back identically', async () => {
    const path = join(dir, 'orig.pdrec.jsonl.gz');
    const start = Date.UTC(2026, 0, 5, 8);
    const sim = new SyntheticPdSession(start, 11, 300_000);
    const clock = manualClock(start);
    const w = await RecordingWriter.open(path, header({ startedAt: start }), { clock });
    for (let i = 0; i < 300; i++) {
      const tick = sim.step();
      clock.set(sim.now);
      for (const s of tick.scrapes) w.appendScrape(s.ts, s.target, s.exp);
      for (const j of tick.journal) w.appendJournal(j);
    }
    await w.close();
    // Like Python's json.dumps(obj) per line: ", " and ": " separators, same key order. A tool that rewrites
    // records drops the block checksums it cannot keep true (docs/recording-format.md §1.1).
    const text = gunzipSync(await readFile(path)).toString('utf8');
    const respaced = text
      .split('\n')
      .filter((l) => !l.startsWith('{"k":"sum",'))
      .map((l, i) => {
        if (!l) return l;
        const r = JSON.parse(l);
        if (i === 0) delete r.blockChecksums;
        return pyDumps(r);
      })
      .join('\n');
    expect(respaced).not.toBe(text);
    const other = join(dir, 'respaced.pdrec.jsonl.gz');
    await writeFile(other, gzipSync(respaced));
    const a = await readRecording(path);
    const b = await readRecording(other);
    expect(b.warnings).toEqual([]);
    expect(b.series.length).toBe(a.series.length);
    for (let i = 0; i < a.series.length; i++) {
      expect(b.series[i].name).toBe(a.series[i].name);
      expect(b.series[i].labels).toEqual(a.series[i].labels);
      expect([...b.series[i].t]).toEqual([...a.series[i].t]);
      const va = a.series[i].v;
      const vb = b.series[i].v;
      for (let k = 0; k < va.length; k++)
        if (!Object.is(va[k], vb[k])) throw new Error(`${a.series[i].name}[${k}]`);
    }
    expect(b.journal).toEqual(a.journal);
  });
});
