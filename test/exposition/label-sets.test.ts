// The consumers of a scrape keep each position's label set and compare the next scrape's sample against it.
// Once the target's series cache hands out one frozen object per series, that object is kept and the
// comparison is an identity check; these tests hold the two ways of comparing to the same answers.
import { describe, expect, it } from 'vitest';
import { parseExposition, SeriesCache } from '../../src/main/core/probes/exposition/parser';
import { adoptLabels, sameLabels } from '../../src/main/core/probes/exposition/label-sets';

const text = (rank: string): string =>
  [
    '# TYPE sglang:token_usage gauge',
    `sglang:token_usage{model_name="m",tp_rank="${rank}"} 0.5`,
    'sglang:token_usage{model_name="m",tp_rank="1"} 0.25',
    '',
  ].join('\n');

const labelsOf = (t: string, cache?: SeriesCache): Array<Record<string, string>> =>
  parseExposition(t, 'prometheus', { cache }).families[0].samples.map((s) => s.labels);

describe('label sets kept across scrapes', () => {
  it('keeps the series cache’s own frozen labels and recognises them by identity', () => {
    const cache = new SeriesCache();
    labelsOf(text('0'), cache);
    labelsOf(text('0'), cache);
    const [third] = labelsOf(text('0'), cache);
    expect(Object.isFrozen(third)).toBe(true);
    const kept = adoptLabels(third);
    expect(kept).toBe(third);
    const [fourth] = labelsOf(text('0'), cache);
    expect(fourth).toBe(kept);
    expect(sameLabels(fourth, kept, 2)).toBe(true);
  });

  it('tells a different series at the same position apart, cached or not', () => {
    const cache = new SeriesCache();
    for (let i = 0; i < 3; i++) labelsOf(text('0'), cache);
    const kept = adoptLabels(labelsOf(text('0'), cache)[0]);
    const [moved] = labelsOf(text('2'), cache);
    expect(sameLabels(moved, kept, 2)).toBe(false);
    const [uncached] = labelsOf(text('2'));
    expect(sameLabels(uncached, kept, 2)).toBe(false);
  });

  it('copies a label set the parser made for one parse only, and compares it by value', () => {
    const [once] = labelsOf(text('0'));
    expect(Object.isFrozen(once)).toBe(false);
    const kept = adoptLabels(once);
    expect(kept).not.toBe(once);
    expect(kept).toEqual(once);
    const [again] = labelsOf(text('0'));
    expect(sameLabels(again, kept, 2)).toBe(true);
    // Same values, one label fewer or more: not the same series.
    expect(sameLabels({ model_name: 'm' }, kept, 2)).toBe(false);
    expect(sameLabels({ ...again, extra: 'x' }, kept, 2)).toBe(false);
  });
});
