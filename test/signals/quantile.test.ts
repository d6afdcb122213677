import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { quantileOfSorted } from '../../src/main/core/signals/window-math';
import { histogramQuantile } from './quantile-oracle';

describe('histogramQuantile (Prometheus semantics)', () => {
  const b = (pairs: [number, number][]) => pairs.map(([le, count]) => ({ le, count }));

  it('interpolates linearly inside the bucket', () => {
    const buckets = b([
      [0.1, 10],
      [0.2, 30],
      [Infinity, 40],
    ]);
    // p50: rank = 0.5 × 40 = 20 → bucket (0.1, 0.2]: 0.1 + (20-10)/(30-10) × 0.1 = 0.15
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.15, 12);
    // p10: rank = 4 → first bucket, lower bound 0: 0 + 4/10 × 0.1 = 0.04
    expect(histogramQuantile(0.1, buckets)).toBeCloseTo(0.04, 12);
    // p90: rank = 36 > 30 → falls in +Inf → highest finite bound 0.2
    expect(histogramQuantile(0.9, buckets)).toBe(0.2);
  });

  it('NaN without a +Inf bucket, without observations, or with a single bucket', () => {
    expect(histogramQuantile(0.5, b([[0.1, 3]]))).toBeNaN();
    expect(
      histogramQuantile(
        0.5,
        b([
          [0.1, 0],
          [Infinity, 0],
        ]),
      ),
    ).toBeNaN();
    expect(histogramQuantile(0.5, b([[Infinity, 5]]))).toBeNaN();
    expect(histogramQuantile(NaN, b([[Infinity, 5]]))).toBeNaN();
  });

  it('q outside [0,1] gives ∓Inf', () => {
    const buckets = b([
      [1, 1],
      [Infinity, 1],
    ]);
    expect(histogramQuantile(-0.1, buckets)).toBe(-Infinity);
    expect(histogramQuantile(1.1, buckets)).toBe(Infinity);
  });

  it('returns the upper bound of a first bucket that is ≤ 0', () => {
    // rank = 0.2 × 10 = 2 → first bucket (le=-1, count 5); its bound is ≤ 0 → -1
    expect(
      histogramQuantile(
        0.2,
        b([
          [-1, 5],
          [0, 10],
          [Infinity, 10],
        ]),
      ),
    ).toBe(-1);
  });

  it('sorts, merges equal bounds and forces monotonic counts', () => {
    // unsorted; le=1 given twice (4 + 6 = 10); le=2 has 8 < 10 → forced to 10; +Inf 20
    // p50: rank 10 → first bucket with count ≥ 10 is le=1: 0 + (10/10) × 1 = 1
    expect(
      histogramQuantile(
        0.5,
        b([
          [Infinity, 20],
          [2, 8],
          [1, 4],
          [1, 6],
        ]),
      ),
    ).toBe(1);
    // p75: rank 15 → le=2 bucket has 10 < 15 → +Inf → highest finite bound 2
    expect(
      histogramQuantile(
        0.75,
        b([
          [Infinity, 20],
          [2, 8],
          [1, 10],
        ]),
      ),
    ).toBe(2);
  });
});

describe('quantileOfSorted', () => {
  it('equals histogramQuantile for any cumulative buckets and q', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.double({ min: -5, max: 100, noNaN: true }), { minLength: 0, maxLength: 8 }),
        fc.array(fc.nat(1000), { minLength: 9, maxLength: 9 }),
        fc.boolean(),
        fc.double({ min: -0.5, max: 1.5, noNaN: true }),
        (bounds, counts, withInf, q) => {
          const les = [...bounds].sort((a, b) => a - b);
          if (withInf) les.push(Infinity);
          const buckets = les.map((le, i) => ({ le, count: counts[i] }));
          const L = Float64Array.from(les);
          const C = Float64Array.from(buckets.map((b) => b.count));
          const want = histogramQuantile(q, buckets);
          const got = quantileOfSorted(q, L, C, les.length);
          expect(Number.isNaN(got) ? 'NaN' : got).toEqual(Number.isNaN(want) ? 'NaN' : want);
        },
      ),
    );
  });
});
