// The series cache must only ever change speed: results with and without it are identical, callers never
// share objects with it or with each other, and its size stays bounded.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExpositionParseError, parseExposition } from '../../src/main/core/probes/exposition/parser';
import {
  clearSeriesCaches,
  SeriesCache,
  type CachedSeries,
} from '../../src/main/core/probes/exposition/series-cache';
import type { ExpositionFormat } from '../../src/main/core/probes/exposition/types';

function attempt(text: string, format: ExpositionFormat): unknown {
  try {
    return parseExposition(text, format);
  } catch (err) {
    if (err instanceof ExpositionParseError) return { error: err.message };
    throw err;
  }
}

const SCRAPE = [
  '# TYPE sglang:e2e_request_latency_seconds histogram',
  'sglang:e2e_request_latency_seconds_sum{engine_type="decode",model_name="Qwen/Qwen3-32B"} 14107.2',
  'sglang:e2e_request_latency_seconds_bucket{engine_type="decode",le="0.1",model_name="Qwen/Qwen3-32B"} 0.0',
  'sglang:e2e_request_latency_seconds_bucket{engine_type="decode",le="+Inf",model_name="Qwen/Qwen3-32B"} 1531.0',
  'sglang:e2e_request_latency_seconds_count{engine_type="decode",model_name="Qwen/Qwen3-32B"} 1531.0',
  '',
].join('\n');

describe('series cache', () => {
  it('gives the same result on a repeated parse, with fresh label objects every time', () => {
    clearSeriesCaches();
    const cold = parseExposition(SCRAPE, 'prometheus');
    const warm = parseExposition(SCRAPE, 'prometheus');
    expect(warm).toEqual(cold);
    const [a, b] = [cold.families[0].samples[1].labels, warm.families[0].samples[1].labels];
    expect(a).not.toBe(b);
    a.le = 'changed by a caller';
    expect(parseExposition(SCRAPE, 'prometheus').families[0].samples[1].labels.le).toBe('0.1');
  });

  it('still reports errors at the right place when the series text comes from the cache', () => {
    const bad = SCRAPE.replace('le="0.1"', 'le="x"');
    const first = attempt(bad, 'prometheus');
    expect(attempt(bad, 'prometheus')).toEqual(first);
    expect(first).toEqual({
      error: 'prometheus exposition, line 3, column 68: histogram bucket bound le="x" is not a number',
    });
  });

  it('never lets a Prometheus-text series answer for OpenMetrics, whose label syntax is stricter', () => {
    const lenient = 'm{ a = "1" } 1\n';
    expect(parseExposition(lenient, 'prometheus').sampleCount).toBe(1);
    expect(attempt(`${lenient}# EOF\n`, 'openmetrics')).toEqual({
      error: 'openmetrics exposition, line 1, column 3: expected a label name, found a space',
    });
  });

  it('handles "}" inside label values, which ends the cached text early', () => {
    const text = 'm{a="x}y",b="2"} 1\nm{a="x}"} 2\n';
    const first = parseExposition(text, 'prometheus');
    expect(parseExposition(text, 'prometheus')).toEqual(first);
    expect(first.families[0].samples.map((s) => s.labels)).toEqual([{ a: 'x}y', b: '2' }, { a: 'x}' }]);
  });

  it('agrees with a cold parse on every generated or mutated input, in both formats', () => {
    const piece = fc.constantFrom(
      'm{a="1"} 1\n',
      'm{a="1",b="2"} 2\n',
      'm{b="2",a="1"} 3\n',
      'm{a="1"}} 4\n',
      'm{a="}"} 5\n',
      'n{a="1"} 6 7\n',
      'm{ a="1" } 8\n',
      '# TYPE m histogram\n',
      'm_bucket{le="1"} 1\n',
      'm_bucket{le="+Inf"} 1\n',
      'm_count 1\n',
      'm_sum 1\n',
      '# EOF\n',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(piece, { maxLength: 12 }), (a, b) => {
        for (const format of ['prometheus', 'openmetrics'] as const) {
          const warmUp = a.join('');
          const text = b.join('');
          clearSeriesCaches();
          const cold = attempt(text, format);
          attempt(warmUp, format);
          expect(attempt(text, format)).toEqual(cold);
          expect(attempt(text, format)).toEqual(cold);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('admits a series to the cache the second time it is seen, so one-off parses store nothing', () => {
    const cache = new SeriesCache(16);
    cache.beginParse(100);
    expect(cache.admit('m{a="1"}')).toBe(false);
    expect(cache.admit('m{a="2"}')).toBe(false);
    expect(cache.admit('m{a="1"}')).toBe(true);
    // first sightings are forgotten after a few parses, so that they keep no old scrape alive
    for (let i = 0; i < 8; i++) cache.beginParse(100);
    expect(cache.admit('m{a="2"}')).toBe(false);
    cache.beginParse(64 * 1024 * 1024);
    expect(cache.admit('m{a="2"}')).toBe(false);
    clearSeriesCaches();
    const text = 'm{a="1"} 1\n';
    parseExposition(text, 'prometheus');
    parseExposition(text, 'prometheus');
    expect(parseExposition(text, 'prometheus')).toEqual(parseExposition(text, 'prometheus'));
  });

  it('remembers at most two generations of first sightings, so a million one-off series cost no memory here', () => {
    const cache = new SeriesCache(4);
    cache.beginParse(100);
    for (let i = 0; i < 100; i++) cache.admit(`m{i="${i}"}`);
    // the first 8 were remembered and are admitted when seen again; later ones were not kept
    expect(cache.admit('m{i="7"}')).toBe(true);
    expect(cache.admit('m{i="8"}')).toBe(false);
    expect(cache.admit('m{i="99"}')).toBe(false);
  });

  it('keeps at most two generations of entries and keeps series that are still used', () => {
    const cache = new SeriesCache(3);
    const entry = (key: string): CachedSeries => ({
      key,
      name: key,
      labels: {},
      names: [],
      values: [],
      valueOffsets: [],
      next: undefined,
      le: undefined,
      quantile: undefined,
      groupKey: undefined,
      groupKeyExcluded: '',
    });
    const hot = entry('hot');
    cache.set(hot);
    for (let i = 0; i < 20; i++) {
      cache.set(entry(`cold-${i}`));
      expect(cache.get('hot')).toBe(hot);
      expect(cache.size).toBeLessThanOrEqual(6);
    }
    expect(cache.get('cold-0')).toBeUndefined();
  });
});
