// The chart decimation finds each ring's buckets once, scans every key over contiguous slices and keeps the
// buckets inside a window for the next request; these tests hold it to a straightforward one (every row's
// bucket on the grid computed on its own, one pass per key, nothing kept) on random rings, wrapped or not,
// with gaps, NaN and spikes, asked again as rows arrive — so a kept bucket is never stale — and check that
// one-row spikes and dips survive a day decimated to a chart.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ColumnRing } from '../../src/main/core/signals/column-ring';
import {
  bucketRows,
  bucketStart,
  decimateColumn,
  gridWidth,
  type DecimatedColumn,
} from '../../src/main/core/signals/decimate';
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
    const width = gridWidth(t[t.length - 1] - t[0], buckets);
    gap = Math.max(gapMs, 2.5 * width);
    const rows = new Map<number, number[]>();
    t.forEach((x, i) => {
      const b = Math.floor(x / width);
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
          // Each window twice: the second answer takes its inner buckets from those the first kept.
          for (const [from, to] of [
            [a, b],
            [a, b],
            [undefined, undefined],
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
        // A window that only grows at its end, as a live chart's does.
        for (let r = 0; r < 5; r++) {
          ring.set(ring.lastTime()! + 1000, { [k0]: r });
          check();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('finds bucket starts that split the rows exactly where the per-row bucket changes, in any order asked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 3, maxLength: 2000 }),
        fc.integer({ min: 2, max: 300 }),
        fc.integer({ min: 1, max: 0x7ffffffe }),
        (steps, maxPoints, seed) => {
          const t: number[] = [];
          steps.reduce((x, s) => (t.push(x + s), x + s), 1_800_000_000_000);
          const b = bucketRows(t, 0, t.length, 0, t.length, maxPoints);
          if (t.length <= maxPoints) {
            expect(b.starts).toBeNull();
            return;
          }
          const width = gridWidth(t[t.length - 1] - t[0], Math.floor(maxPoints / 2));
          expect(b.widthMs).toBe(width);
          const of = (i: number) => Math.floor(t[i] / width);
          // Bucket j starts at the first row of grid bucket ≥ first + j (an empty bucket: the next one's).
          const expected: number[] = [];
          for (let j = 0; j < b.starts!.length - 1; j++) {
            let i = 0;
            while (i < t.length && of(i) < of(0) + j) i++;
            expected.push(i);
          }
          // Asked in a scrambled order, as kept buckets leave holes in what a key asks for.
          const order = expected.map((_, j) => j);
          let x = seed;
          for (let i = order.length - 1; i > 0; i--) {
            x = (x * 48271) % 0x7fffffff;
            const k = x % (i + 1);
            [order[i], order[k]] = [order[k], order[i]];
          }
          const found: number[] = [];
          for (const j of order) found[j] = bucketStart(b, t, 0, t.length, j);
          expect(found).toEqual(expected);
          expect(of(t.length - 1) - of(0) + 1).toBe(expected.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('puts windows of nearly the same length on one grid of at most 1/8 fewer buckets than asked', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 * 86_400_000 }),
        fc.integer({ min: 1, max: 4000 }),
        (span, buckets) => {
          const w = gridWidth(span, buckets);
          const exact = (span + 1) / buckets;
          expect(w).toBeGreaterThanOrEqual(exact);
          expect(w).toBeLessThanOrEqual(exact * 1.125 + 1e-9);
        },
      ),
      { numRuns: 500 },
    );
    // A 24 h page reloaded seconds to a minute later keeps its grid, so its kept buckets are used.
    for (const later of [0, 1000, 5000, 60_000])
      expect(gridWidth(86_400_000 - 1000 - later, 700)).toBe(gridWidth(86_400_000 - 1000, 700));
  });

  it('answers a window asked again from the buckets it kept, reading rows only for the buckets at its ends', () => {
    const ring = new ColumnRing(86_400);
    const t0 = 1_800_000_000_000;
    const key = 'decode.kv_ratio';
    for (let s = 0; s < 90_000; s++) ring.set(t0 + s * 1000, { [key]: (s % 600) / 600 });
    const src: SeriesSource = {
      ring: () => ring,
      gapMs: () => 3000,
      missing: () => undefined,
      notExposed: {},
    };
    const ask = () =>
      answerSeries(
        {
          keys: [key as SignalKey],
          fromMs: ring.lastTime()! - 86_400_000,
          toMs: ring.lastTime()!,
          maxPoints: 1400,
        },
        src,
      ).series[0];
    const first = ask();
    // Mark what was kept: a value no row holds.
    const [seg] = [...ring.keptBuckets(gridWidth(86_400_000 - 1000, 700)).values()];
    expect(seg.off.length - 1).toBeGreaterThan(600);
    seg.v.fill(-7);
    // 30 s later, the newest rows above anything before.
    for (let s = 90_000; s < 90_030; s++) ring.set(t0 + s * 1000, { [key]: 2 });
    const again = ask();
    const marked = again.v.filter((v) => v === -7).length;
    // Every kept bucket still inside the window came from the kept points, none was read from the rows again…
    expect(marked).toBeGreaterThan(first.v.length * 0.9);
    // …and the buckets at the window's ends were: the newest rows show, and the oldest bucket is read again.
    expect(again.t[again.v.indexOf(2)]).toBe(t0 + 90_000_000);
    expect(again.v[0]).not.toBe(-7);
  });

  it('keeps a one-second spike and a one-second dip of a day decimated to a chart width, in a wrapped ring', () => {
    const ring = new ColumnRing(86_400);
    const t0 = 1_800_000_000_000;
    // 30,000 rows more than the ring holds: the day starts in the middle of its arrays.
    for (let s = 0; s < 116_400; s++)
      ring.set(t0 + s * 1000, {
        'decode.kv_ratio': s === 100_000 ? 0.99 : s === 60_001 ? 0.01 : 0.4 + 0.001 * (s % 7),
      });
    const [lo, hi] = ring.range();
    const out: DecimatedColumn = decimateColumn(ring, 'decode.kv_ratio', lo, hi, 700, 3000);
    expect(out.t.length).toBeLessThanOrEqual(700);
    const values = out.v.filter((v): v is number => v !== null);
    expect(Math.max(...values)).toBeCloseTo(0.99, 6);
    expect(Math.min(...values)).toBeCloseTo(0.01, 6);
    expect(out.t[out.v.findIndex((v) => v !== null && v > 0.9)]).toBe(t0 + 100_000 * 1000);
    expect(out.t[out.v.findIndex((v) => v !== null && v < 0.1)]).toBe(t0 + 60_001 * 1000);
    for (let i = 1; i < out.t.length; i++) expect(out.t[i]).toBeGreaterThan(out.t[i - 1]);
  });
});
