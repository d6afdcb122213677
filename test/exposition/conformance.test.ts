// Conformance of the exposition parser against public test data kept outside the repository in
// ../shared/conformance (OpenMetrics parser suite, Prometheus/expfmt corpora). Read in place, never copied.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExpositionParseError, parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { Exposition, ExpositionFormat } from '../../src/main/core/probes/exposition/types';

const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const CONFORMANCE = resolve(REPO_ROOT, '../shared/conformance');
const OM_CASES = resolve(CONFORMANCE, 'openmetrics/parsers');
const PROM_TEXT = resolve(CONFORMANCE, 'prometheus-text');
const EXPFMT_CORPUS = resolve(PROM_TEXT, 'expfmt-corpus');

const available = existsSync(OM_CASES) && existsSync(EXPFMT_CORPUS);
if (!available) {
  console.warn(
    `exposition conformance suite skipped: ${CONFORMANCE} does not exist. The OpenMetrics and Prometheus ` +
      'conformance data is read from ../shared/conformance next to the repository and is not part of a clone; ' +
      "the parser's own unit tests still run.",
  );
}

/** Parses and reports the outcome; anything other than ExpositionParseError is a bug and propagates. */
function outcome(
  text: string,
  format: ExpositionFormat,
): { ok: true; exposition: Exposition } | { ok: false; error: ExpositionParseError } {
  try {
    return { ok: true, exposition: parseExposition(text, format) };
  } catch (err) {
    if (err instanceof ExpositionParseError) return { ok: false, error: err };
    throw err;
  }
}

interface OmCase {
  name: string;
  shouldParse: boolean;
  comment?: string;
  text: string;
}

function omCases(): OmCase[] {
  if (!available) return [];
  return readdirSync(OM_CASES)
    .sort()
    .map((name) => {
      const spec = JSON.parse(readFileSync(resolve(OM_CASES, name, 'test.json'), 'utf8')) as {
        type: string;
        file: string;
        shouldParse: boolean;
        comment?: string;
      };
      expect(spec.type).toBe('text');
      return {
        name,
        shouldParse: spec.shouldParse,
        comment: spec.comment,
        text: readFileSync(resolve(OM_CASES, name, spec.file), 'utf8'),
      };
    });
}

describe.skipIf(!available)('OpenMetrics parser suite (openmetrics/parsers, OpenMetrics mode)', () => {
  const cases = omCases();

  it('has the 211 cases of the pinned snapshot (44 valid, 167 invalid)', () => {
    expect(cases).toHaveLength(211);
    expect(cases.filter((c) => c.shouldParse)).toHaveLength(44);
  });

  for (const c of cases) {
    it(`${c.name}: ${c.shouldParse ? 'parses' : 'is rejected'}${c.comment ? ` (${c.comment})` : ''}`, () => {
      const result = outcome(c.text, 'openmetrics');
      if (c.shouldParse) {
        expect(result.ok ? 'parsed' : result.error.message).toBe('parsed');
      } else {
        expect(result.ok).toBe(false);
        if (!result.ok) {
          // The error must point inside the input (or one line past it, for a missing "# EOF").
          const lines = c.text.split('\n').length;
          expect(result.error.line).toBeGreaterThanOrEqual(1);
          expect(result.error.line).toBeLessThanOrEqual(lines + 1);
          expect(result.error.column).toBeGreaterThanOrEqual(1);
        }
      }
    });
  }
});

describe.skipIf(!available)('expfmt fuzz corpus (prometheus-text/expfmt-corpus, Prometheus mode)', () => {
  const files = available ? readdirSync(EXPFMT_CORPUS).sort() : [];

  it('holds from_test_parse_0..4, from_test_parse_error_0..19 and minimal', () => {
    expect(files.filter((f) => /^from_test_parse_\d+$/.test(f))).toHaveLength(5);
    expect(files.filter((f) => /^from_test_parse_error_\d+$/.test(f))).toHaveLength(20);
    expect(files).toContain('minimal');
  });

  for (const file of files) {
    const valid = !file.startsWith('from_test_parse_error_');
    it(`${file} ${valid ? 'parses' : 'is rejected'}`, () => {
      const result = outcome(readFileSync(resolve(EXPFMT_CORPUS, file), 'utf8'), 'prometheus');
      expect(result.ok ? 'parsed' : `rejected: ${result.error.message}`).toMatch(
        valid ? /^parsed$/ : /^rejected: /,
      );
    });
  }

  it('from_test_parse_3 groups the interleaved summary samples under my_summary, as expfmt does', () => {
    const result = parseExposition(
      readFileSync(resolve(EXPFMT_CORPUS, 'from_test_parse_3'), 'utf8'),
      'prometheus',
    );
    const summary = result.families.find((f) => f.name === 'my_summary');
    expect(summary?.type).toBe('summary');
    expect(summary?.samples.map((s) => s.name)).toEqual([
      'my_summary',
      'my_summary',
      'my_summary_count',
      'my_summary_sum',
      'my_summary_count',
      'my_summary_sum',
      'my_summary',
      'my_summary',
    ]);
    expect(result.families.find((f) => f.name === 'decoy')?.samples[0]).toEqual({
      name: 'decoy',
      labels: {},
      value: -1,
      timestampMs: -2,
    });
  });
});

describe.skipIf(!available)('Prometheus benchmark corpora (prometheus-text/*)', () => {
  const read = (file: string): string => readFileSync(resolve(PROM_TEXT, file), 'utf8');

  it('alltypes.237mfs.prom.txt: 237 families (112 counters, 97 gauges, 15 histograms, 13 summaries), 1,857 samples', () => {
    const result = parseExposition(read('alltypes.237mfs.prom.txt'), 'prometheus');
    expect(result.families).toHaveLength(237);
    expect(result.sampleCount).toBe(1857);
    expect(result.families.reduce((n, f) => n + f.samples.length, 0)).toBe(1857);
    const byType = new Map<string, number>();
    for (const f of result.families) byType.set(f.type, (byType.get(f.type) ?? 0) + 1);
    expect(Object.fromEntries(byType)).toEqual({ counter: 112, gauge: 97, histogram: 15, summary: 13 });
    for (const f of result.families) expect(f.help).toBeTypeOf('string');
    // client_golang reports empty summaries with NaN quantiles
    const nanQuantiles = result.families
      .filter((f) => f.type === 'summary')
      .flatMap((f) => f.samples)
      .filter((s) => s.labels.quantile !== undefined && Number.isNaN(s.value));
    expect(nanQuantiles.length).toBeGreaterThan(0);
  });

  it('alltypes.237mfs.nometa.prom.txt: the same 1,857 samples without HELP/TYPE, all untyped', () => {
    const meta = parseExposition(read('alltypes.237mfs.prom.txt'), 'prometheus');
    const nometa = parseExposition(read('alltypes.237mfs.nometa.prom.txt'), 'prometheus');
    expect(nometa.sampleCount).toBe(1857);
    expect(new Set(nometa.families.map((f) => f.type))).toEqual(new Set(['untyped']));
    // Without TYPE the _sum/_count lines form families of their own, so compare the samples as a multiset.
    const sorted = (e: Exposition): string[] =>
      e.families
        .flatMap((f) => f.samples.map((s) => JSON.stringify([s.name, s.labels, String(s.value)])))
        .sort();
    expect(sorted(nometa)).toEqual(sorted(meta));
  });

  it('expfmt-testdata-text.prom: 248 samples', () => {
    expect(parseExposition(read('expfmt-testdata-text.prom'), 'prometheus').sampleCount).toBe(248);
  });

  it('1histogram.om.txt parses as OpenMetrics: one labeled histogram, 42 samples', () => {
    const result = parseExposition(read('1histogram.om.txt'), 'openmetrics');
    expect(result.families.map((f) => [f.name, f.type])).toEqual([
      ['golang_manual_histogram_seconds', 'histogram'],
    ]);
    expect(result.sampleCount).toBe(42);
  });

  it('alltypes.5mfs.om.txt parses as OpenMetrics once the value rules are skipped, as Prometheus does', () => {
    const text = read('alltypes.5mfs.om.txt');
    const result = parseExposition(text, 'openmetrics', { openMetricsValueRules: 'skip' });
    expect(result.families.map((f) => `${f.name}:${f.type}`)).toEqual([
      'go_build_info:gauge',
      'promhttp_metric_handler_errors:counter',
      'rpc_durations_histogram_seconds:histogram',
      'rpc_durations_seconds:summary',
      'rpc_requests:counter',
    ]);
    expect(result.sampleCount).toBe(53);
    const exemplars = result.families.flatMap((f) => f.samples).filter((s) => s.exemplar !== undefined);
    expect(exemplars).toHaveLength(6);
    expect(exemplars[0].exemplar).toEqual({
      labels: { dummyID: '17783' },
      value: -0.0003825067330956884,
      timestampMs: 1726839814223.9082,
    });
  });

  it('alltypes.5mfs.om.txt breaks OpenMetrics 1.0 value rules, which the default (suite) mode enforces', () => {
    // client_golang observed negative values: the histogram _sum is negative (line 33), which the suite's
    // bad_counter_values_5 case requires a parser to reject.
    const result = outcome(read('alltypes.5mfs.om.txt'), 'openmetrics');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect([result.error.line, result.error.column]).toEqual([33, 37]);
      expect(result.error.reason).toMatch(/_sum .*cannot be negative/);
    }
  });
});
