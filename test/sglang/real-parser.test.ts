// The probe asks for OpenMetrics first (ACCEPT_HEADER) and SGLang's prometheus_client /metrics answers in it, so
// the mappings must read the same scrape identically in both formats. The formats' models differ where a mapping
// can go wrong: an OpenMetrics counter family is `x` with samples `x_total`, a Prometheus-text one is `x_total`.
// Every fixture is read both ways through parseExposition and the KV, server-signal, router and windowed answers
// compared; each comparison is also checked not to be vacuous.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExposition, type Exposition } from '../../src/main/core/probes/exposition/parser';
import { isKvMissing } from '../../src/main/core/probes/sglang/kv';
import { extractKv } from '../../src/main/core/signals/evaluate/kv-usage';
import { routerHealthFromMetrics } from '../../src/main/core/probes/sglang/router';
import { evaluateScrape, evaluateTarget, isSignalInput } from '../../src/main/core/signals/evaluate';
import { LiveColumns } from '../../src/main/core/signals/live-columns';
import { fixtureText } from './prom';

const FILES = readdirSync(join(__dirname, 'fixtures')).filter((f) => f.endsWith('.prom'));
const ROUTER_FILES = new Set(['router-smg.prom', 'router-sgl-0.2.4.prom']);

/**
 * The same registry as prometheus_client's OpenMetrics exposition writes it: counter families lose `_total` in
 * HELP/TYPE (samples keep it), `untyped` becomes `unknown`, free comments go (OpenMetrics has none) and the text
 * ends with `# EOF`. SGLang's multiprocess registry has no `_created` series, so none are added.
 */
function asOpenMetrics(text: string): string {
  const counters = new Set([...text.matchAll(/^# TYPE (\S+) counter$/gm)].map((m) => m[1]));
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const meta = /^# (TYPE|HELP) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, keyword, name, rest = ''] = meta;
      const family = counters.has(name) ? name.replace(/_total$/, '') : name;
      out.push(`# ${keyword} ${family} ${rest === 'untyped' ? 'unknown' : rest}`.trimEnd());
    } else if (line !== '' && !line.startsWith('#')) {
      out.push(line);
    }
  }
  return out.join('\n') + '\n# EOF\n';
}

function bothFormats(text: string): { prometheus: Exposition; openmetrics: Exposition } {
  return {
    prometheus: parseExposition(text, 'prometheus'),
    openmetrics: parseExposition(asOpenMetrics(text), 'openmetrics'),
  };
}

describe('SGLang mappings read Prometheus text and OpenMetrics alike', () => {
  it('there are server and router fixtures to compare, most of them with counters', () => {
    expect(FILES.filter((f) => !ROUTER_FILES.has(f)).length).toBeGreaterThanOrEqual(6);
    expect(FILES.filter((f) => ROUTER_FILES.has(f))).toHaveLength(2);
    const withCounters = FILES.filter((f) => /^# TYPE \S+ counter$/m.test(fixtureText(f)));
    expect(withCounters.length).toBeGreaterThanOrEqual(4);
  });

  it.each(FILES)('%s: KV, server signals and router health are the same in both formats', (file) => {
    const { prometheus, openmetrics } = bothFormats(fixtureText(file));
    // The OpenMetrics reading really has the other counter model, so the comparison below can catch a mapping
    // that looks counters up by family name.
    const omCounters = openmetrics.families.filter((f) => f.type === 'counter');
    expect(omCounters).toHaveLength(prometheus.families.filter((f) => f.type === 'counter').length);
    for (const f of omCounters) {
      expect(f.name).not.toMatch(/_total$/);
      expect(prometheus.families.map((p) => p.name)).toContain(`${f.name}_total`);
    }
    expect(openmetrics.sampleCount).toBe(prometheus.sampleCount);

    const kv = extractKv(prometheus, { capacityFromServerInfo: 1e6 });
    expect(extractKv(openmetrics, { capacityFromServerInfo: 1e6 })).toEqual(kv);
    const signals = evaluateScrape(prometheus, 'decode');
    expect(evaluateScrape(openmetrics, 'decode')).toEqual(signals);
    const router = routerHealthFromMetrics(prometheus);
    expect(routerHealthFromMetrics(openmetrics)).toEqual(router);

    if (ROUTER_FILES.has(file)) {
      expect(router.workers.length).toBeGreaterThan(0);
      expect(router.requestsTotal).toBeGreaterThan(0);
    } else {
      expect(isKvMissing(kv)).toBe(false);
      expect(Object.values(signals).filter((v) => v !== null).length).toBeGreaterThan(0);
    }
  });

  // prefill-newest.prom with 30 s of traffic: 30,000 more prompt tokens, TTFT buckets le=0.4 +10 and +Inf +20
  // (and _count with it, which OpenMetrics requires to equal the +Inf bucket).
  const earlier = fixtureText('prefill-newest.prom');
  const later = earlier
    .replace(
      'sglang:prompt_tokens_total{engine_type="prefill",is_streaming="true",model_name="Qwen/Qwen3-32B"} 4.118204e+06',
      'sglang:prompt_tokens_total{engine_type="prefill",is_streaming="true",model_name="Qwen/Qwen3-32B"} 4148204',
    )
    .replace(
      /(time_to_first_token_seconds_bucket\{engine_type="prefill",is_streaming="true",le="0.4",model_name="Qwen\/Qwen3-32B"\}) 1402.0/,
      '$1 1412',
    )
    .replace(
      /(time_to_first_token_seconds_bucket\{engine_type="prefill",is_streaming="true",le="\+Inf",model_name="Qwen\/Qwen3-32B"\}) 1533.0/,
      '$1 1553',
    )
    .replace(
      /(time_to_first_token_seconds_count\{engine_type="prefill",is_streaming="true",model_name="Qwen\/Qwen3-32B"\}) 1533.0/,
      '$1 1553',
    );

  it('the edited scrape differs from the first in exactly the four edited samples', () => {
    const a = earlier.split('\n');
    const b = later.split('\n');
    expect(b).toHaveLength(a.length);
    expect(a.filter((line, i) => line !== b[i])).toHaveLength(4);
  });

  it.each(['prometheus', 'openmetrics'] as const)(
    'windowed counters and histograms in %s: token rate and TTFT quantiles',
    (format) => {
      const live = new LiveColumns({ keepMs: 60_000, track: isSignalInput });
      live.append(1_000, bothFormats(earlier)[format]);
      live.append(31_000, bothFormats(later)[format]);
      const cols = live.columns('prefill');
      const values = evaluateTarget(cols, 'prefill', { from: 1 }).values;
      const sig = (key: string): number => values.get(key)![1];
      // (4148204 - 4118204) / 30 s = 1000 tokens/s
      expect(sig('prompt_tokens_per_s')).toBeCloseTo(1000, 9);
      // TTFT increases: le=0.4: 10, +Inf: 20 → p50 rank 10 → 0 + 10/10 × 0.4 = 0.4; p90 rank 18 → +Inf → 0.4
      expect(sig('ttft_p50_s')).toBeCloseTo(0.4, 12);
      expect(sig('ttft_p90_s')).toBe(0.4);
    },
  );
});
