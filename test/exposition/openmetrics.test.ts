// OpenMetrics 1.0: what SGLang serves when asked for OpenMetrics, every metric type, exemplars, timestamps,
// and where errors point.

import { describe, expect, it } from 'vitest';
import {
  ExpositionParseError,
  parseExposition,
  type ParseOptions,
} from '../../src/main/core/probes/exposition/parser';
import type { Exposition } from '../../src/main/core/probes/exposition/types';

const parse = (text: string, options?: ParseOptions): Exposition =>
  parseExposition(text, 'openmetrics', options);

function errorOf(text: string, options?: ParseOptions): { line: number; column: number; reason: string } {
  try {
    parse(text, options);
  } catch (err) {
    if (err instanceof ExpositionParseError)
      return { line: err.line, column: err.column, reason: err.reason };
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

const lines = (...l: string[]): string => l.join('\n') + '\n';

describe('SGLang scrape served as OpenMetrics (prometheus_client with an OpenMetrics Accept header)', () => {
  const text = lines(
    '# HELP sglang:prompt_tokens Number of prefill tokens processed.',
    '# TYPE sglang:prompt_tokens counter',
    'sglang:prompt_tokens_total{engine_type="prefill",model_name="Qwen/Qwen3-32B"} 4.118204e+06',
    '# HELP sglang:num_retracted_reqs The number of retracted requests.',
    '# TYPE sglang:num_retracted_reqs gauge',
    'sglang:num_retracted_reqs{engine_type="prefill",model_name="Qwen/Qwen3-32B",pid="48211",tp_rank="0"} 0.0',
    '# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.',
    '# TYPE sglang:time_to_first_token_seconds histogram',
    'sglang:time_to_first_token_seconds_sum{engine_type="prefill",model_name="Qwen/Qwen3-32B"} 391.8',
    'sglang:time_to_first_token_seconds_bucket{engine_type="prefill",le="0.1",model_name="Qwen/Qwen3-32B"} 0.0',
    'sglang:time_to_first_token_seconds_bucket{engine_type="prefill",le="0.4",model_name="Qwen/Qwen3-32B"} 1402.0',
    'sglang:time_to_first_token_seconds_bucket{engine_type="prefill",le="+Inf",model_name="Qwen/Qwen3-32B"} 1533.0',
    'sglang:time_to_first_token_seconds_count{engine_type="prefill",model_name="Qwen/Qwen3-32B"} 1533.0',
    '# EOF',
  );

  it('names counter families without _total and keeps _sum-first histograms together', () => {
    const e = parse(text);
    expect(e.format).toBe('openmetrics');
    expect(e.families.map((f) => [f.name, f.type, f.samples.length])).toEqual([
      ['sglang:prompt_tokens', 'counter', 1],
      ['sglang:num_retracted_reqs', 'gauge', 1],
      ['sglang:time_to_first_token_seconds', 'histogram', 5],
    ]);
    expect(e.families[0].samples[0]).toEqual({
      name: 'sglang:prompt_tokens_total',
      labels: { engine_type: 'prefill', model_name: 'Qwen/Qwen3-32B' },
      value: 4118204,
    });
    expect(e.sampleCount).toBe(7);
  });

  it('is also valid Prometheus text, where "# EOF" is a comment', () => {
    expect(parseExposition(text, 'prometheus').sampleCount).toBe(7);
  });
});

describe('metric types', () => {
  it('reads info, stateset, gaugehistogram, unknown, summary and UNIT', () => {
    const e = parse(
      lines(
        '# TYPE build info',
        'build_info{version="0.5.11",revision="abc"} 1',
        '# TYPE mode stateset',
        'mode{mode="prefill"} 1',
        'mode{mode="decode"} 0',
        '# TYPE queue gaugehistogram',
        'queue_bucket{le="1.0"} 2',
        'queue_bucket{le="+Inf"} 3',
        'queue_gcount 3',
        'queue_gsum 2.5',
        '# TYPE load_seconds summary',
        '# UNIT load_seconds seconds',
        '# HELP load_seconds Weight load time.',
        'load_seconds{quantile="0.5"} 61.9',
        'load_seconds_sum 61.9',
        'load_seconds_count 1',
        'load_seconds_created 1726839813.016',
        '# TYPE thing unknown',
        'thing 3',
        'orphan 4',
        '# EOF',
      ),
    );
    expect(e.families.map((f) => [f.name, f.type, f.samples.length])).toEqual([
      ['build', 'info', 1],
      ['mode', 'stateset', 2],
      ['queue', 'gaugehistogram', 4],
      ['load_seconds', 'summary', 4],
      ['thing', 'unknown', 1],
      ['orphan', 'unknown', 1],
    ]);
    const summary = e.families[3];
    expect([summary.unit, summary.help]).toEqual(['seconds', 'Weight load time.']);
    expect(summary.samples[3].value).toBe(1726839813.016);
  });

  it('requires counters to expose _total (a bare name starts a family of its own, which then clashes)', () => {
    expect(errorOf(lines('# TYPE a counter', 'a 1', '# EOF'))).toMatchObject({
      line: 2,
      reason: expect.stringMatching(/"a" was already exposed/),
    });
  });

  it('checks histogram structure per label set', () => {
    const ok = lines(
      '# TYPE h histogram',
      'h_bucket{a="1",le="1"} 1',
      'h_bucket{a="1",le="+Inf"} 2',
      'h_count{a="1"} 2',
      'h_sum{a="1"} 1.5',
      'h_bucket{a="2",le="+Inf"} 0',
      '# EOF',
    );
    expect(parse(ok).families[0].samples).toHaveLength(5);
    const missingInf = lines(
      '# TYPE h histogram',
      'h_bucket{a="1",le="1"} 1',
      'h_bucket{a="2",le="+Inf"} 0',
      '# EOF',
    );
    expect(errorOf(missingInf)).toEqual({
      line: 2,
      column: 1,
      reason: 'histogram "h" has no le="+Inf" bucket',
    });
    const interleaved = lines(
      '# TYPE h histogram',
      'h_bucket{a="1",le="+Inf"} 0',
      'h_bucket{a="2",le="+Inf"} 0',
      'h_bucket{a="1",le="+Inf"} 0',
      '# EOF',
    );
    expect(errorOf(interleaved)).toEqual({
      line: 4,
      column: 1,
      reason:
        'samples of the label set {a="1"} are interleaved with others; OpenMetrics requires each label set of a ' +
        'family to be contiguous',
    });
  });

  it('treats the same labels written in another order as the same series group', () => {
    const reordered = lines(
      '# TYPE h histogram',
      'h_bucket{a="1",b="2",le="1"} 0',
      'h_bucket{le="+Inf",b="2",a="1"} 1',
      'h_count{b="2",a="1"} 1',
      'h_sum{a="1",b="2"} 0.5',
      'h_bucket{a="2",b="2",le="+Inf"} 0',
      'h_bucket{b="2",a="1",le="+Inf"} 0',
      '# EOF',
    );
    expect(errorOf(reordered)).toMatchObject({
      line: 7,
      reason: expect.stringMatching(/\{b="2",a="1"\} are interleaved/),
    });
    expect(parse(reordered.split('\n').slice(0, 6).join('\n') + '\n# EOF\n').sampleCount).toBe(5);
  });
});

describe('exemplars and timestamps', () => {
  it('reads exemplars with and without timestamps, converting seconds to milliseconds', () => {
    const e = parse(
      lines(
        '# TYPE req counter',
        'req_total{path="/v1"} 5 1700000000.5 # {trace_id="abc"} 1 1700000000.123',
        '# TYPE lat histogram',
        'lat_bucket{le="0.5"} 1 # {trace_id="def"} 0.25',
        'lat_bucket{le="+Inf"} 1',
        '# EOF',
      ),
    );
    expect(e.families[0].samples[0]).toEqual({
      name: 'req_total',
      labels: { path: '/v1' },
      value: 5,
      timestampMs: 1700000000500,
      exemplar: { labels: { trace_id: 'abc' }, value: 1, timestampMs: 1700000000123 },
    });
    expect(e.families[1].samples[0].exemplar).toEqual({ labels: { trace_id: 'def' }, value: 0.25 });
  });

  it('converts decimal seconds exactly (1.1 s is 1100 ms, not 1100.0000000000002)', () => {
    const e = parse(lines('a 1 1.1', 'b 1 1.5e3', 'c 1 000', 'd 1 -0.001', '# EOF'));
    expect(e.families.map((f) => f.samples[0].timestampMs)).toEqual([1100, 1500000, 0, -1]);
  });

  it('rejects exemplars on gauges and timestamps that go backwards within a series', () => {
    expect(errorOf(lines('# TYPE g gauge', 'g 1 # {a="b"} 1', '# EOF'))).toMatchObject({
      line: 2,
      column: 3,
      reason: expect.stringMatching(/exemplars are only allowed/),
    });
    expect(errorOf(lines('a 1 2', 'a 1 1', '# EOF')).reason).toBe(
      'timestamp goes backwards within the same metric',
    );
  });
});

describe('value rules', () => {
  const negative = lines('# TYPE s summary', 's{quantile="0.5"} -0.2', 's_sum -3', 's_count 2', '# EOF');

  it('enforces them by default, as the OpenMetrics suite requires', () => {
    expect(errorOf(negative)).toEqual({
      line: 2,
      column: 19,
      reason: 'quantile values cannot be negative, found -0.2',
    });
  });

  it('skips only them with openMetricsValueRules: "skip"; structure is still checked', () => {
    expect(parse(negative, { openMetricsValueRules: 'skip' }).sampleCount).toBe(3);
    const nanCounter = parse(lines('# TYPE c counter', 'c_total NaN', '# EOF'), {
      openMetricsValueRules: 'skip',
    });
    expect(nanCounter.families[0].samples[0].value).toBeNaN();
    expect(
      errorOf(lines('# TYPE h histogram', 'h_bucket{le="+Inf"} 1.5', '# EOF'), {
        openMetricsValueRules: 'skip',
      }).reason,
    ).toMatch(/bucket counts must be integers/);
  });
});

describe('framing', () => {
  it('accepts "# EOF" without a final newline and rejects anything after it', () => {
    expect(parse('a 1\n# EOF').sampleCount).toBe(1);
    expect(errorOf('a 1\n# EOF\n\n')).toMatchObject({
      line: 3,
      reason: expect.stringMatching(/after "# EOF"/),
    });
  });

  it('points a missing "# EOF" at the line where it should have been', () => {
    expect(errorOf('a 1\n')).toEqual({
      line: 2,
      column: 1,
      reason: 'missing "# EOF": an OpenMetrics exposition must end with it (was the response truncated?)',
    });
    expect(errorOf('').line).toBe(1);
    expect(errorOf('a 1\nb 2').reason).toMatch(/no terminating newline/);
  });

  it('rejects blank lines, comments and double spaces', () => {
    expect(errorOf('a 1\n\n# EOF\n')).toMatchObject({ line: 2, column: 1 });
    expect(errorOf('# a comment\n# EOF\n').reason).toMatch(/OpenMetrics has no comments/);
    expect(errorOf('a  1\n# EOF\n')).toMatchObject({ line: 1, column: 3 });
    expect(errorOf('a{b="c", d="e"} 1\n# EOF\n')).toMatchObject({ line: 1, column: 9 });
  });

  it('decodes \\" in HELP, unlike the text format', () => {
    expect(parse('# HELP a say \\"hi\\"\\n\\\\\n# EOF\n').families[0].help).toBe('say "hi"\n\\');
  });
});
