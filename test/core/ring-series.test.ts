import { describe, expect, it } from 'vitest';
import { RingSeries } from '../../src/main/core/store/ring-series';

describe('RingSeries', () => {
  it('keeps the newest rows when full and returns them in time order', () => {
    const r = new RingSeries(['v'] as const, 3);
    for (let i = 1; i <= 5; i++) r.push(i * 1000, { v: i });
    expect(r.length).toBe(3);
    expect(r.slice()).toEqual({ t: [3000, 4000, 5000], fields: { v: [3, 4, 5] } });
  });

  it('stores missing values as gaps (null) and ignores rows that go back in time', () => {
    const r = new RingSeries(['v'] as const, 10);
    r.push(1000, { v: 1 });
    r.push(2000, { v: null });
    r.push(1500, { v: 7 }); // host clock jumped back: dropped, axis stays monotonic
    r.push(3000, {});
    expect(r.slice()).toEqual({ t: [1000, 2000, 3000], fields: { v: [1, null, null] } });
  });

  it('min-max decimation keeps a lone spike and a gap', () => {
    const r = new RingSeries(['v'] as const, 10_000);
    for (let i = 0; i < 10_000; i++) r.push(i, { v: i === 5_555 ? 100 : i === 7_000 ? null : 1 });
    const s = r.slice(-Infinity, 200, 'v');
    expect(s.t.length).toBeLessThanOrEqual(300);
    expect(s.fields.v).toContain(100);
    expect(s.fields.v).toContain(null);
    // Time order survives decimation.
    expect([...s.t].sort((a, b) => a - b)).toEqual(s.t);
  });

  it('slices from a time', () => {
    const r = new RingSeries(['v'] as const, 10);
    for (let i = 0; i < 10; i++) r.push(i, { v: i });
    expect(r.slice(7).t).toEqual([7, 8, 9]);
  });
});
