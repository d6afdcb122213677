// A scrape's families sorted into used / known-not-used / unknown / other exporters: a real-looking scrape of a
// known era with future families appended, through the production parser, gives exactly the future ones as
// "not understood by this PD Console version", keeps every recognised family, and does not count
// prometheus_client's own collectors as unknown. Every real-era fixture has no unknown family at all.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { censusOf, FamilyCensusCache, familyIsUsed } from '../../src/main/core/signals/family-census';
import { readEra } from '../../src/main/cli/era-of';
import { familyClass } from '../../src/shared/signals/family-classes';
import { DemoSimulation } from '../../src/main/demo';
import { DEMO_ERAS, ROUTER_ERAS } from '../../src/main/demo/eras';
import { renderServerMetrics } from '../../src/main/demo/sglang-metrics';
import { renderRouterMetrics } from '../../src/main/demo/router-metrics';
import { manualClock, T0 } from '../demo/helpers';
import {
  FUTURE_ROUTER_UNKNOWN,
  FUTURE_SERVER_UNKNOWN,
  futureRouterScrape,
  futureServerScrape,
} from './future-fixture';

const FIXTURES = join(__dirname, '..', 'sglang', 'fixtures');
const OTHER = [
  'process_cpu_seconds_total',
  'process_open_fds',
  'process_resident_memory_bytes',
  'python_gc_collections_total',
  'python_gc_objects_collected_total',
  'python_info',
];

describe('the family census of one scrape', () => {
  it('an E4 server scrape with future families: those are unknown, the rest is still recognised', () => {
    const exp = futureServerScrape();
    const c = censusOf(exp);
    expect(c.unknown).toEqual(FUTURE_SERVER_UNKNOWN);
    expect(c.otherExporters).toEqual(OTHER);
    // The headline families the console charts are still read.
    for (const f of ['sglang:num_running_reqs', 'sglang:kv_used_tokens', 'sglang:generation_tokens_total'])
      expect(c.used).toContain(f);
    // Every family lands in exactly one class.
    const all = [...c.used, ...c.knownNotUsed, ...c.unknown, ...c.otherExporters];
    expect(all.sort()).toEqual(exp.families.map((f) => f.name).sort());
    expect(new Set(all).size).toBe(all.length);
  });

  it('an smg router scrape with a future family', () => {
    const c = censusOf(futureRouterScrape());
    expect(c.unknown).toEqual(FUTURE_ROUTER_UNKNOWN);
    expect(c.used).toContain('smg_router_requests_total');
    expect(c.otherExporters).toEqual([]);
  });

  it.each(readdirSync(FIXTURES).filter((f) => f.endsWith('.prom')))(
    'real-era fixture %s has no unknown family',
    (file) => {
      const c = censusOf(parseExposition(readFileSync(join(FIXTURES, file), 'utf8'), 'prometheus'));
      expect(c.unknown).toEqual([]);
      expect(c.used.length).toBeGreaterThan(0);
    },
  );

  // The demo is the default deployment: it must never show the note (it emits only what its era's code does).
  it.each(DEMO_ERAS.map((era, i) => [era, ROUTER_ERAS[i]] as const))(
    'the demo in server era %s and router era %s: nothing unknown, nothing from other exporters',
    (era, routerEra) => {
      const clock = manualClock(T0);
      const sim = new DemoSimulation({ clock, era, routerEra, historyMs: 5 * 60_000 });
      clock.advance(5 * 60_000);
      const { prefill, decode, router } = sim.units;
      const texts = [
        renderServerMetrics(prefill.server!, era, 1),
        renderServerMetrics(decode.server!, era, 1),
        renderRouterMetrics(router.router!, routerEra, { prefill: prefill.server, decode: decode.server }),
      ];
      for (const t of texts) {
        const c = censusOf(parseExposition(t, 'prometheus'));
        expect(c.unknown).toEqual([]);
        expect(c.otherExporters).toEqual([]);
        expect(c.used.length).toBeGreaterThan(3);
      }
    },
  );

  it('OpenMetrics names a counter family without _total: still known, still used', () => {
    const exp = parseExposition(
      [
        '# TYPE sglang:num_aborted_requests counter',
        'sglang:num_aborted_requests_total{model_name="m"} 3',
        '# TYPE sglang:generation_tokens counter',
        'sglang:generation_tokens_total{model_name="m"} 9',
        '# TYPE sglang:spec_decode_accept_length gauge',
        'sglang:spec_decode_accept_length{model_name="m"} 2',
        '# EOF',
        '',
      ].join('\n'),
      'openmetrics',
    );
    const c = censusOf(exp);
    expect(c.knownNotUsed).toEqual(['sglang:num_aborted_requests']);
    expect(c.used).toEqual(['sglang:generation_tokens']);
    expect(c.unknown).toEqual(['sglang:spec_decode_accept_length']);
  });

  it('a name outside SGLang’s namespaces is another exporter’s; inside one and unlisted, unknown', () => {
    const never = (): boolean => false;
    expect(familyClass('go_goroutines', never)).toBe('other-exporter');
    expect(familyClass('sgl_router_upstream_http_responses_total', never)).toBe('unknown'); // never released
    expect(familyClass('sglang_num_running_reqs', never)).toBe('unknown'); // /v1/loads form, not /metrics
    expect(familyClass('sgl_router_requests_total', never)).toBe('known-not-used'); // regular router only
    expect(familyIsUsed('sglang:num_running_reqs')).toBe(true);
  });

  it('the cache answers the same census while the family names stay, a new one when they change', () => {
    const cache = new FamilyCensusCache();
    const a = cache.census('d/decode', futureServerScrape());
    expect(cache.census('d/decode', futureServerScrape())).toBe(a);
    const fewer = futureServerScrape();
    fewer.families = fewer.families.filter((f) => f.name !== 'sglang:kv_offload_bytes_total');
    const b = cache.census('d/decode', fewer);
    expect(b).not.toBe(a);
    expect(b.unknown).toEqual(['sglang:spec_decode_accept_length']);
    cache.drop('d/');
    expect(cache.census('d/decode', fewer)).not.toBe(b);
  });

  it('readEra keeps the era and lists unknown, not-used and other exporters apart', () => {
    const r = readEra('decode', futureServerScrape());
    expect(r.era).toBe('E4');
    expect(r.unknown).toEqual(FUTURE_SERVER_UNKNOWN);
    expect(r.otherExporters).toEqual(OTHER);
    for (const n of [...r.unknown, ...r.otherExporters]) expect(r.notUsed).not.toContain(n);
    expect(readEra('router', futureRouterScrape())).toMatchObject({
      era: 'smg-engine-metrics',
      unknown: FUTURE_ROUTER_UNKNOWN,
    });
  });
});
