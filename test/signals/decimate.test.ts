// The chart decimation finds each ring's buckets once and scans every key over contiguous slices; these
// tests hold it to a straightforward one (every row's bucket computed on its own, one pass per key) on random
// rings, wrapped or not, with gaps, NaN and spikes — so the charts show exactly the points they showed before
// the bucketing was shared — and check that one-row spikes and dips survive a day decimated to a chart.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ColumnRing } from '../../src/main/core/signals/column-ring';
import { bucketRows, decimateRows, type DecimatedColumn } from '../../src/main/core/signals/decimate';
import { answerSeries, type SeriesSource } from '../../src/main/core/signals/series-query';
import type { SignalKey } from '../../src/shared/signals/spec';

/** Rows in logical order, decimated the plain way: per row its bucket, per bucket min, max and first NaN. */
function reference(
  t: number[],
  v: number[],
  maxPoints: number,
  gapMs: number,
): { t: number[]; v: (number | null)[] } {
  const out = { t: [] as number[], v: [] as (number | null)[] };
  const keep = (i: number): void => {
    out.t.push(t[i]);
    out.v.push(Number.isFinite(v[i]) ? v[i] : null);
  };
  let gap = gapMs;
  if (t.length <= maxPoints) t.forEach((_, i) => keep(i));
  else {
    const buckets = Math.max(1, Math.floor(maxPoints / 2));
    const width = (t[t.length - 1] - t[0] + 1) / buckets;
    gap = Math.max(gapMs, 2.5 * width);
    const rows = new Map<number, number[]>();
    t.forEach((x, i) => {
      const b = Math.min(buckets - 1, Math.floor((x - t[0]) / width));
      rows.set(b, [...(rows.get(b) ?? []), i]);
    });
    for (const b of [...rows.keys()].sort((x, y) => x - y)) {
      const idx = rows.get(b)!;
      const values = idx.filter((i) => !Number.isNaN(v[i]));
      const picks: number[] = [];
      if (values.length) {
        const lo = Math.min(...values.map((i) => v[i]));
        const hi = Math.max(...values.map((i) => v[i]));
        const loI = values.find((i) => v[i] === lo)!;
        const hiI = values.find((i) => v[i] === hi)!;
        picks.push(loI);
        if (hiI !== loI) picks.push(hiI);
      }
      const nan = idx.find((i) => Number.isNaN(v[i]));
      if (nan !== undefined) picks.push(nan);
      picks.sort((x, y) => t[x] - t[y]).forEach(keep);
    }
  }
  const gapped = { t: [] as number[], v: [] as (number | null)[] };
  out.t.forEach((x, i) => {
    if (i > 0 && x - out.t[i - 1] > gap && out.v[i] !== null && out.v[i - 1] !== null) {
      gapped.t.push(out.t[i - 1] + 1);
      gapped.v.push(null);
    }
    gapped.t.push(x);
    gapped.v.push(out.v[i]);
  });
  return gapped;
}

/**
 * A ring of `capacity` rows with `extra` more appended than it holds (so it has wrapped when extra > 0), its
 * times and values drawn from a seeded generator: mostly 1 s steps with long outages, values with NaN gaps,
 * spikes, Infinity and runs of one value (ties for a bucket's lowest and highest).
 */
const ringCase = fc.record({
  capacity: fc.integer({ min: 2, max: 1500 }),
  extra: fc.integer({ min: -1000, max: 2000 }),
  keys: fc.integer({ min: 1, max: 3 }),
  seed: fc.integer({ min: 1, max: 0x7ffffffe }),
  maxPoints: fc.integer({ min: 2, max: 200 }),
  window: fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
});

type RingCase = typeof ringCase extends fc.Arbitrary<infer R> ? R : never;

const KEYS = ['decode.kv_ratio', 'decode.kv_used', 'decode.queued'] as const;

function build(c: RingCase): ColumnRing {
  let seed = c.seed;
  const rnd = (): number => {
    seed = (seed * 48271) % 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const value = (): number => {
    const x = rnd();
    if (x < 0.05) return NaN;
    if (x < 0.07) return [1e6, -1e6, Infinity, 0][Math.floor(rnd() * 4)];
    if (x < 0.3) return 7;
    return Math.round((rnd() - 0.5) * 2000 * 8) / 8;
  };
  const ring = new ColumnRing(c.capacity);
  const rows = Math.max(1, c.capacity + c.extra);
  let ts = 1_800_000_000_000;
  for (let r = 0; r < rows; r++) {
    const x = rnd();
    ts += x < 0.8 ? 1000 : x < 0.97 ? 1 + Math.floor(rnd() * 3000) : Math.floor(rnd() * 400_000);
    const row: Record<string, number> = {};
    for (let k = 0; k < c.keys; k++) row[KEYS[k]] = value();
    ring.set(ts, row);
  }
  return ring;
}

/** The ring's rows of `key` in logical order, rounded to float32 as the ring stores them. */
function logical(ring: ColumnRing, key: string, lo: number, hi: number): { t: number[]; v: number[] } {
  const t: number[] = [];
  const v: number[] = [];
  for (let k = lo; k < hi; k++) {
    t.push(ring.timeAt(k));
    v.push(ring.valueAt(key, k));
  }
  return { t, v };
}

describe('min-max decimation with buckets shared by every key of a ring', () => {
  it('gives exactly the points of a per-row, per-key reference on random rings (wrapped, gaps, NaN)', () => {
    fc.assert(
      fc.property(ringCase, fc.integer({ min: 0, max: 600 }), (c, more) => {
        const ring = build(c);
        const check = (): void => {
          const first = ring.firstTime()!;
          const last = ring.lastTime()!;
          const [a, b] = c.window.map((x) => first + x * (last - first)).sort((x, y) => x - y);
          const [lo, hi] = ring.range(a, b);
          const gapMs = 3000;
          const src: SeriesSource = {
            ring: () => ring,
            gapMs: () => gapMs,
            missing: () => undefined,
            notExposed: {},
          };
          const keys = KEYS.slice(0, c.keys) as unknown as SignalKey[];
          for (const [from, to] of [
            [a, b],
            [undefined, undefined],
          ]) {
            const res = answerSeries({ keys, fromMs: from, toMs: to, maxPoints: c.maxPoints }, src);
            const [l, h] = from === undefined ? ring.range() : [lo, hi];
            keys.forEach((key, k) => {
              const rows = logical(ring, key, l, h);
              expect({ t: res.series[k].t, v: res.series[k].v }).toEqual(
                reference(rows.t, rows.v, c.maxPoints, gapMs),
              );
            });
            expect(res.rawPoints).toBe((h - l) * keys.length);
          }
        };
        check();
        // The block summaries found by that query must not outlive the rows they describe: merge new values
        // into the last row, append more (overwriting the oldest), and ask again.
        const k0 = KEYS[0];
        ring.set(ring.lastTime()!, { [k0]: -5000 });
        check();
        for (let r = 0; r < more; r++)
          ring.set(ring.lastTime()! + 1000, { [k0]: r % 11 === 0 ? NaN : r % 97 });
        ring.set(ring.lastTime()!, { [k0]: 5000 });
        check();
      }),
      { numRuns: 300 },
    );
  });

  it('finds bucket starts that split the rows exactly where the per-row bucket changes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 3, maxLength: 2000 }),
        fc.integer({ min: 2, max: 300 }),
        (steps, maxPoints) => {
          const t: number[] = [];
          steps.reduce((x, s) => (t.push(x + s), x + s), 0);
          const b = bucketRows(t, 0, t.length, 0, t.length, maxPoints);
          if (t.length <= maxPoints) {
            expect(b.starts).toBeNull();
            return;
          }
          const buckets = Math.floor(maxPoints / 2);
          const width = (t[t.length - 1] - t[0] + 1) / buckets;
          const of = (i: number) => Math.min(buckets - 1, Math.floor((t[i] - t[0]) / width));
          const starts = [0];
          for (let i = 1; i < t.length; i++) if (of(i) !== of(i - 1)) starts.push(i);
          starts.push(t.length);
          expect([...b.starts!]).toEqual(starts);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a one-second spike and a one-second dip of a day decimated to a chart width, in a wrapped ring', () => {
    const ring = new ColumnRing(86_400);
    const t0 = 1_800_000_000_000;
    // 30,000 rows more than the ring holds: the day starts in the middle of its arrays.
    for (let s = 0; s < 116_400; s++)
      ring.set(t0 + s * 1000, {
        'decode.kv_ratio': s === 100_000 ? 0.99 : s === 60_001 ? 0.01 : 0.4 + 0.001 * (s % 7),
      });
    const { t, col, start, capacity } = ring.raw('decode.kv_ratio');
    const [lo, hi] = ring.range();
    const out: DecimatedColumn = decimateRows(t, col!, start, capacity, lo, hi, 700, 3000);
    expect(out.t.length).toBeLessThanOrEqual(700);
    const values = out.v.filter((v): v is number => v !== null);
    expect(Math.max(...values)).toBeCloseTo(0.99, 6);
    expect(Math.min(...values)).toBeCloseTo(0.01, 6);
    expect(out.t[out.v.findIndex((v) => v !== null && v > 0.9)]).toBe(t0 + 100_000 * 1000);
    expect(out.t[out.v.findIndex((v) => v !== null && v < 0.1)]).toBe(t0 + 60_001 * 1000);
    for (let i = 1; i < out.t.length; i++) expect(out.t[i]).toBeGreaterThan(out.t[i - 1]);
  });
});
