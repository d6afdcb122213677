// The live push reads the newest row of every ring with forEachAt: it must give what keys() and valueAt give —
// the same keys in the same order, gaps as NaN — also once the ring has wrapped and keys came in late.
import { describe, expect, it } from 'vitest';
import { ColumnRing } from '../../src/main/core/signals/column-ring';

const byLookup = (r: ColumnRing, k: number): [string, number][] =>
  r.keys().map((key) => [key, r.valueAt(key, k)]);

function byRow(r: ColumnRing, k: number): [string, number][] {
  const out: [string, number][] = [];
  r.forEachAt(k, (key, v) => out.push([key, v]));
  return out;
}

describe('ColumnRing.forEachAt', () => {
  it('reads a row as keys() and valueAt do, before and after the ring wraps', () => {
    const r = new ColumnRing(5);
    for (let s = 0; s < 12; s++) {
      const values: Record<string, number | null> = { 'decode.running': s };
      if (s % 3 === 0) values['decode.queued'] = s * 2;
      if (s === 4) values['decode.kv_ratio'] = null;
      if (s >= 7) values['decode.kv_ttf_s'] = 100 - s;
      r.set(1000 * (s + 1), values);
      for (let k = 0; k < r.length; k++) expect(byRow(r, k)).toEqual(byLookup(r, k));
    }
    expect(byRow(r, r.length - 1)).toEqual([
      ['decode.running', 11],
      ['decode.queued', NaN],
      ['decode.kv_ratio', NaN],
      ['decode.kv_ttf_s', 89],
    ]);
  });
});
