// The series cache of a scrape target must only ever change speed: every parse through it equals the
// uncached parse of the same text, however the target's exposition changes from scrape to scrape; targets
// never share state; and what it holds is bounded by what its own target still serves.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ExpositionParseError,
  parseExposition,
  SeriesCache,
} from '../../src/main/core/probes/exposition/parser';
import { UNSEEN_PARSES_KEPT } from '../../src/main/core/probes/exposition/series-cache';
import type { ExpositionFormat } from '../../src/main/core/probes/exposition/types';

function attempt(text: string, format: ExpositionFormat, cache?: SeriesCache): unknown {
  try {
    return parseExposition(text, format, { cache });
  } catch (err) {
    if (err instanceof ExpositionParseError) return { error: err.message };
    throw err;
  }
}

/** Parses `text` through `cache` and checks the result against the uncached parse of the same text. */
function scrape(cache: SeriesCache, text: string, format: ExpositionFormat = 'prometheus'): unknown {
  const cached = attempt(text, format, cache);
  expect(cached).toEqual(attempt(text, format));
  return cached;
}

const SCRAPE = [
  '# TYPE sglang:e2e_request_latency_seconds histogram',
  'sglang:e2e_request_latency_seconds_sum{engine_type="decode",model_name="Qwen/Qwen3-32B"} 14107.2',
  'sglang:e2e_request_latency_seconds_bucket{engine_type="decode",le="0.1",model_name="Qwen/Qwen3-32B"} 0.0',
  'sglang:e2e_request_latency_seconds_bucket{engine_type="decode",le="+Inf",model_name="Qwen/Qwen3-32B"} 1531.0',
  'sglang:e2e_request_latency_seconds_count{engine_type="decode",model_name="Qwen/Qwen3-32B"} 1531.0',
  '',
].join('\n');

/** A gauge family with one series per entry of `workers`, each with `value`. */
function workers(names: string[], value = 1, family = 'worker_up'): string {
  return (
    `# TYPE ${family} gauge\n` +
    names.map((w) => `${family}{url="http://${w}:30000",role="decode"} ${value}\n`).join('')
  );
}

const CONFORMANCE = resolve(fileURLToPath(import.meta.url), '../../../../shared/conformance');

/** Every exposition of the conformance data (read in place, see conformance.test.ts), with its format. */
function corpus(): { text: string; format: ExpositionFormat }[] {
  const om = resolve(CONFORMANCE, 'openmetrics/parsers');
  const prom = resolve(CONFORMANCE, 'prometheus-text');
  if (!existsSync(om) || !existsSync(prom)) return [];
  const out: { text: string; format: ExpositionFormat }[] = [];
  for (const name of readdirSync(om).sort()) {
    const spec = JSON.parse(readFileSync(resolve(om, name, 'test.json'), 'utf8')) as { file: string };
    out.push({ text: readFileSync(resolve(om, name, spec.file), 'utf8'), format: 'openmetrics' });
  }
  for (const name of readdirSync(resolve(prom, 'expfmt-corpus')).sort())
    out.push({ text: readFileSync(resolve(prom, 'expfmt-corpus', name), 'utf8'), format: 'prometheus' });
  for (const name of readdirSync(prom).filter((n) => /\.(txt|prom)$/.test(n)))
    out.push({
      text: readFileSync(resolve(prom, name), 'utf8'),
      format: name.endsWith('.om.txt') ? 'openmetrics' : 'prometheus',
    });
  return out;
}

const range = (n: number, prefix = 'w'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('series cache of one scrape target', () => {
  it('equals the uncached parse across scrapes whose series appear, disappear, change value, order and escaping', () => {
    const scrapes = [
      SCRAPE,
      SCRAPE,
      SCRAPE.replace('1531.0', '1600.0').replace('14107.2', '14500'), // values change
      SCRAPE + 'up{job="a"} 1\nup{job="b"} 1\n', // series appear
      SCRAPE + 'up{job="b"} 0\n', // one disappears, one changes value
      // same labels written in another order: another series text, same label set
      SCRAPE.replace('engine_type="decode",le="0.1"', 'le="0.1",engine_type="decode"') + 'up{job="b"} 0\n',
      // escapes and a '}' inside a value (the series text then ends early and is not stored)
      'm{path="C:\\\\tmp\\"x\\"",msg="a\\nb"} 1\nm{a="x}y",b="2"} 2\nm{a="x}"} 3\n',
      'm{path="C:\\\\tmp\\"x\\"",msg="a\\nb"} 2\nm{a="x}y",b="2"} 2\nm{a="x}"} 4\n',
      'm{path="C:\\\\tmp\\"x\\"",msg="a\\nb"} 3\nm{a="x}y",b="2"} 2\nm{a="x}"} 5\n',
      // Prometheus text's lenient blanks and trailing comma
      'm{ path = "C:\\\\tmp\\"x\\"" , msg="a\\nb", } 4\n',
      'm{ path = "C:\\\\tmp\\"x\\"" , msg="a\\nb", } 5\n',
      SCRAPE, // the first series come back
      SCRAPE,
    ];
    const cache = new SeriesCache();
    for (const text of scrapes) scrape(cache, text);
    // the comparison above has to have gone through the cache to prove anything
    expect(cache.hits).toBeGreaterThan(10);
    expect(cache.stored).toBeGreaterThan(5);
  });

  it('does the same for OpenMetrics, with exemplars and the stricter label syntax', () => {
    const om = (value: number, extra = ''): string =>
      '# TYPE rpc histogram\n' +
      `rpc_bucket{le="0.1",svc="a\\"b"} ${value} # {trace_id="t${value}"} 0.05 1.5\n` +
      `rpc_bucket{le="+Inf",svc="a\\"b"} ${value + 1}\n` +
      `rpc_count{svc="a\\"b"} ${value + 1}\nrpc_sum{svc="a\\"b"} 3\n${extra}# EOF\n`;
    const cache = new SeriesCache();
    for (let v = 1; v <= 6; v++)
      scrape(cache, om(v, v % 2 ? '# TYPE up gauge\nup{job="x"} 1\n' : ''), 'openmetrics');
    expect(cache.hits).toBeGreaterThan(10);
    // a lenient label set the text format cached must never pass as OpenMetrics through the same cache
    const lenient = 'm{ a = "1" } 1\n';
    scrape(cache, lenient);
    scrape(cache, lenient);
    scrape(cache, lenient);
    expect(attempt(`${lenient}# EOF\n`, 'openmetrics', cache)).toEqual({
      error: 'openmetrics exposition, line 1, column 3: expected a label name, found a space',
    });
  });

  it('shares one frozen label object per cached series across scrapes, which a caller cannot change', () => {
    const cache = new SeriesCache();
    const first = parseExposition(SCRAPE, 'prometheus', { cache });
    const second = parseExposition(SCRAPE, 'prometheus', { cache });
    const warm = parseExposition(SCRAPE, 'prometheus', { cache });
    expect(warm).toEqual(first);
    expect(cache.hits).toBe(4);
    const labels = warm.families[0].samples[1].labels;
    expect(labels).toBe(second.families[0].samples[1].labels);
    expect(Object.isFrozen(labels)).toBe(true);
    expect(() => {
      labels.le = 'changed by a caller';
    }).toThrow(TypeError);
    expect(parseExposition(SCRAPE, 'prometheus', { cache }).families[0].samples[1].labels.le).toBe('0.1');
    // an uncached parse still hands out plain objects of its own
    expect(Object.isFrozen(first.families[0].samples[1].labels)).toBe(false);
  });

  it('still reports errors at the right place when the series text comes from the cache', () => {
    const cache = new SeriesCache();
    scrape(cache, SCRAPE);
    scrape(cache, SCRAPE);
    const bad = SCRAPE.replace('le="0.1"', 'le="x"');
    expect(scrape(cache, bad)).toEqual({
      error: 'prometheus exposition, line 3, column 68: histogram bucket bound le="x" is not a number',
    });
    scrape(cache, bad);
    expect(scrape(cache, bad)).toEqual({
      error: 'prometheus exposition, line 3, column 68: histogram bucket bound le="x" is not a number',
    });
  });

  it('agrees with the uncached parse on every generated sequence of scrapes, in both formats', () => {
    const piece = fc.constantFrom(
      'm{a="1"} 1\n',
      'm{a="1",b="2"} 2\n',
      'm{b="2",a="1"} 3\n',
      'm{a="1"}} 4\n',
      'm{a="}"} 5\n',
      'm{a="\\\\\\"\\n"} 5\n',
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
      fc.property(fc.array(fc.array(piece, { maxLength: 10 }), { minLength: 1, maxLength: 8 }), (texts) => {
        for (const format of ['prometheus', 'openmetrics'] as const) {
          const cache = new SeriesCache();
          // every text twice in a row as well, so that series get stored and then hit
          for (const pieces of [...texts, ...texts]) {
            const text = pieces.join('');
            expect(attempt(text, format, cache)).toEqual(attempt(text, format));
            expect(attempt(text, format, cache)).toEqual(attempt(text, format));
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it.skipIf(corpus().length === 0)(
    'equals the uncached parse on every conformance exposition, read as one target scraped again and again',
    () => {
      const caches = { prometheus: new SeriesCache(), openmetrics: new SeriesCache() };
      let hits = 0;
      for (const { text, format } of corpus()) {
        const cache = caches[format];
        const before = cache.hits;
        // third parse: its series were stored by the second
        for (let i = 0; i < 3; i++) scrape(cache, text, format);
        hits += cache.hits - before;
      }
      expect(hits).toBeGreaterThan(1000);
    },
  );

  it('keeps two targets apart: each holds only its own series, and one churning does not evict the other', () => {
    const a = new SeriesCache();
    const b = new SeriesCache();
    const textA = workers(range(50, 'a'));
    for (let i = 0; i < 3; i++) scrape(a, textA);
    expect(a.size).toBe(50);
    const hitsBefore = a.hits;
    // target b serves new series on every scrape, interleaved with a's scrapes
    for (let round = 0; round < 12; round++) {
      scrape(b, workers(range(200, `b${round}-`)));
      scrape(b, workers(range(200, `b${round}-`)));
      scrape(a, textA.replaceAll(' 1\n', ` ${round}\n`));
    }
    expect(a.size).toBe(50);
    // every one of a's 12 scrapes took all 50 series from its cache
    expect(a.hits - hitsBefore).toBe(12 * 50);
    expect(b.size).toBeLessThanOrEqual(2 * UNSEEN_PARSES_KEPT * 200);
    // the same series text in both targets: each stores its own copy
    const shared = workers(['shared']);
    for (let i = 0; i < 3; i++) {
      scrape(a, shared);
      scrape(b, shared);
    }
    expect(a.get('worker_up{url="http://shared:30000",role="decode"}')).toBeDefined();
    expect(b.get('worker_up{url="http://shared:30000",role="decode"}')).not.toBe(
      a.get('worker_up{url="http://shared:30000",role="decode"}'),
    );
  });

  it('is bounded by the series its target serves: what the target dropped is evicted', () => {
    const cache = new SeriesCache();
    const many = workers(range(5000));
    for (let i = 0; i < 3; i++) scrape(cache, many);
    expect(cache.size).toBe(5000);
    const few = workers(range(10));
    for (let i = 0; i < 2 * UNSEEN_PARSES_KEPT; i++) scrape(cache, few);
    expect(cache.size).toBe(10);
    // and the first sightings it remembers are those of its last two scrapes only
    expect(cache.pendingSize).toBe(0);
    scrape(cache, workers(range(300, 'new')));
    expect(cache.pendingSize).toBe(300);
  });

  it('stays bounded when the target serves new series on every scrape', () => {
    const cache = new SeriesCache();
    for (let round = 0; round < 30; round++) {
      scrape(cache, workers(range(100, `r${round}-`)));
      // first sightings of the last two scrapes at most, and nothing stored: no series came back
      expect(cache.pendingSize).toBeLessThanOrEqual(200);
      expect(cache.size).toBe(0);
    }
    // series that live for two scrapes get stored, and are gone a few scrapes after they stopped
    for (let round = 0; round < 30; round++) {
      const text = workers(range(100, `s${round >> 1}-`));
      scrape(cache, text);
      expect(cache.size).toBeLessThanOrEqual(2 * UNSEEN_PARSES_KEPT * 100);
    }
  });

  it('grows with its target past any fixed size, so a large target keeps hitting', () => {
    // the old process-wide cache held 2 × 8,192 entries: a 20,000-series scrape stored everything every time
    const cache = new SeriesCache();
    const big = workers(range(20_000));
    for (let i = 0; i < 3; i++) parseExposition(big, 'prometheus', { cache });
    const stored = cache.stored;
    const hits = cache.hits;
    parseExposition(big, 'prometheus', { cache });
    expect(cache.hits - hits).toBe(20_000);
    expect(cache.stored).toBe(stored);
    expect(cache.size).toBe(20_000);
  });

  it('is emptied by dispose, after which parses given it run uncached and store nothing', () => {
    const cache = new SeriesCache();
    for (let i = 0; i < 3; i++) scrape(cache, SCRAPE);
    expect(cache.size).toBe(4);
    cache.dispose();
    expect(cache.size).toBe(0);
    for (let i = 0; i < 3; i++) scrape(cache, SCRAPE);
    expect(cache.size).toBe(0);
    expect(cache.pendingSize).toBe(0);
  });

  it('admits a series the second time it is seen, so a one-off scrape stores nothing', () => {
    const cache = new SeriesCache();
    cache.beginParse('prometheus');
    expect(cache.admit('m{a="1"}')).toBe(false);
    expect(cache.admit('m{a="2"}')).toBe(false);
    expect(cache.admit('m{a="1"}')).toBe(true);
    cache.beginParse('prometheus');
    expect(cache.admit('m{a="2"}')).toBe(true);
    // first sightings older than the previous parse are forgotten, so they keep no old scrape alive
    cache.beginParse('prometheus');
    cache.beginParse('prometheus');
    expect(cache.admit('m{a="1"}')).toBe(false);
    const once = new SeriesCache();
    scrape(once, SCRAPE);
    expect(once.size).toBe(0);
  });
});
