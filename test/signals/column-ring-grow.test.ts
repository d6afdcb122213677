// The ring's arrays start small and double as rows arrive (so a fresh deployment does not hold 24 h of NaN per
// column outside the heap). Growing must be invisible: every row and gap reads back as it was written, a key
// that first reports after a growth reads as gaps before it, the ring still keeps exactly `capacity` rows once
// full, and the arrays never grow past the capacity.
import { describe, expect, it } from 'vitest';
import { ColumnRing, GROW_ROWS } from '../../src/main/core/signals/column-ring';
import { decimateColumn } from '../../src/main/core/signals/decimate';

const DAY = 86_400;

function fill(r: ColumnRing, rows: number, from = 0): void {
  for (let s = from; s < from + rows; s++) {
    const v: Record<string, number | null> = { 'decode.running': s % 1000 };
    if (s % 7 === 0) v['decode.kv_ratio'] = null;
    else v['decode.kv_ratio'] = (s % 100) / 100;
    if (s >= GROW_ROWS + 10) v['decode.late'] = s;
    r.set(1000 * (s + 1), v);
  }
}

describe('ColumnRing growth', () => {
  it('allocates a fraction of a day at first and grows only as rows arrive', () => {
    const r = new ColumnRing(DAY);
    expect(r.allocatedRows).toBe(GROW_ROWS);
    fill(r, GROW_ROWS);
    expect(r.allocatedRows).toBe(GROW_ROWS);
    fill(r, 1, GROW_ROWS);
    expect(r.allocatedRows).toBe(2 * GROW_ROWS);
  });

  it('reads every row back after growing, late keys as gaps before they reported', () => {
    const r = new ColumnRing(DAY);
    const rows = 5 * GROW_ROWS + 123;
    fill(r, rows);
    expect(r.length).toBe(rows);
    // Collected, then compared once: an expect per row would be most of the test's time.
    const wrong: string[] = [];
    const same = (a: number, b: number): boolean => (Number.isNaN(b) ? Number.isNaN(a) : a === b);
    for (let k = 0; k < rows; k++) {
      const ratio = k % 7 === 0 ? NaN : Math.fround((k % 100) / 100);
      const late = k >= GROW_ROWS + 10 ? k : NaN;
      if (r.timeAt(k) !== 1000 * (k + 1)) wrong.push(`t@${k}`);
      if (!same(r.valueAt('decode.running', k), k % 1000)) wrong.push(`running@${k}`);
      if (!same(r.valueAt('decode.kv_ratio', k), ratio)) wrong.push(`kv_ratio@${k}`);
      if (!same(r.valueAt('decode.late', k), late)) wrong.push(`late@${k}`);
    }
    expect(wrong).toEqual([]);
    // The raw arrays the decimation reads give the same rows.
    const col = decimateColumn(r, 'decode.running', 0, rows, rows, 3000);
    expect(col.t.length).toBe(rows);
    expect(col.v[GROW_ROWS * 3]).toBe((GROW_ROWS * 3) % 1000);
  });

  it('keeps exactly 24 h of rows once full and never allocates past the capacity', () => {
    const r = new ColumnRing(DAY);
    fill(r, DAY + 5000);
    expect(r.allocatedRows).toBe(DAY);
    expect(r.length).toBe(DAY);
    expect(r.firstTime()).toBe(1000 * (5000 + 1));
    expect(r.lastTime()).toBe(1000 * (DAY + 5000));
    expect(r.valueAt('decode.running', 0)).toBe(5000 % 1000);
    expect(r.valueAt('decode.running', DAY - 1)).toBe((DAY + 4999) % 1000);
    expect(r.latest('decode.late')).toBe(DAY + 4999);
  });

  it('a ring smaller than the first chunk is allocated at its capacity and wraps as before', () => {
    const r = new ColumnRing(10);
    expect(r.allocatedRows).toBe(10);
    fill(r, 25);
    expect(r.length).toBe(10);
    expect(r.firstTime()).toBe(16_000);
    expect(r.valueAt('decode.running', 9)).toBe(24);
  });
});
