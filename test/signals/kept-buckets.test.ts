// A ring keeps decimated buckets for the few bucket widths used last (a page and range an operator goes back
// to); a zoom makes a new width, and the oldest width goes, not the one just used again.
import { describe, expect, it } from 'vitest';
import { KeptBuckets, type BucketSegment } from '../../src/main/core/signals/kept-buckets';

const seg = (first: number): BucketSegment => ({
  first,
  off: Int32Array.of(0, 1),
  t: Float64Array.of(first),
  v: Float64Array.of(1),
});

describe('kept buckets', () => {
  it('drops the width used least recently once more widths are asked than it keeps', () => {
    const kept = new KeptBuckets(3);
    kept.forWidth(120_000).set('decode.kv_ratio', seg(1));
    kept.forWidth(5_000).set('decode.kv_ratio', seg(2));
    kept.forWidth(60_000).set('decode.kv_ratio', seg(3));
    // The 24 h page is shown again: its width is now the most recent…
    expect(kept.forWidth(120_000).get('decode.kv_ratio')?.first).toBe(1);
    // …so a new zoom's width pushes out the 5 s one, not it.
    kept.forWidth(2_000);
    expect(kept.forWidth(120_000).get('decode.kv_ratio')?.first).toBe(1);
    expect(kept.forWidth(60_000).get('decode.kv_ratio')?.first).toBe(3);
    expect(kept.forWidth(5_000).get('decode.kv_ratio')).toBeUndefined();
  });

  it('forgets everything on clear', () => {
    const kept = new KeptBuckets();
    kept.forWidth(120_000).set('decode.kv_ratio', seg(1));
    kept.clear();
    expect(kept.forWidth(120_000).size).toBe(0);
  });
});
