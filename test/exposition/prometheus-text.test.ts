// Prometheus text format 0.0.4: SGLang's and the router's real output, and the dialect rules of docs/parser.md.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ExpositionParseError, parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { Exposition, MetricFamily } from '../../src/main/core/probes/exposition/types';

const FIXTURES = resolve(fileURLToPath(import.meta.url), '../fixtures');
const fixture = (name: string): string => readFileSync(resolve(FIXTURES, name), 'utf8');

const parse = (text: string): Exposition => parseExposition(text, 'prometheus');

function family(e: Exposition, name: string): MetricFamily {
  const found = e.families.find((f) => f.name === name);
  if (found === undefined)
    throw new Error(`no family ${name} in ${e.families.map((f) => f.name).join(', ')}`);
  return found;
}

/** The error parseExposition throws for `text`, with its position and reason. */
function errorOf(text: string): { line: number; column: number; reason: string } {
  try {
    parse(text);
  } catch (err) {
    if (err instanceof ExpositionParseError)
      return { line: err.line, column: err.column, reason: err.reason };
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

const SCHEDULER = {
  engine_type: 'prefill',
  model_name: 'Qwen/Qwen3-32B',
  moe_ep_rank: '0',
  pp_rank: '0',
  tp_rank: '0',
};

describe('SGLang server output (prometheus_client, multiprocess mode)', () => {
  it('reads the prefill scrape: sglang: names, sorted labels, the pid label, labeled histograms', () => {
    const e = parse(fixture('sglang-prefill.prom'));
    expect(e.format).toBe('prometheus');
    expect(e.sampleCount).toBe(23);
    expect(family(e, 'sglang:kv_used_tokens')).toEqual({
      name: 'sglang:kv_used_tokens',
      type: 'gauge',
      help: 'Number of actively used token slots in the KV cache pool.',
      samples: [{ name: 'sglang:kv_used_tokens', labels: SCHEDULER, value: 18432 }],
    });
    // gauges without multiprocess_mode carry the writer's pid
    expect(family(e, 'sglang:num_retracted_reqs').samples[0].labels).toEqual({ ...SCHEDULER, pid: '48211' });
    // counters keep their _total name as the family name in the text format
    const prompt = family(e, 'sglang:prompt_tokens_total');
    expect(prompt.type).toBe('counter');
    expect(prompt.samples[0].value).toBe(4118204);

    const kv = family(e, 'sglang:kv_transfer_latency_ms');
    expect(kv.type).toBe('histogram');
    expect(kv.samples.map((s) => [s.name, s.labels.le, s.value])).toEqual([
      ['sglang:kv_transfer_latency_ms_bucket', '25.0', 812],
      ['sglang:kv_transfer_latency_ms_bucket', '50.0', 1490],
      ['sglang:kv_transfer_latency_ms_bucket', '+Inf', 1533],
      ['sglang:kv_transfer_latency_ms_sum', undefined, 41977.3],
      ['sglang:kv_transfer_latency_ms_count', undefined, 1533],
    ]);
    expect(kv.samples[4].labels).toEqual(SCHEDULER);
    // the "# ... buckets omitted" lines are plain comments, not families
    expect(e.families.some((f) => f.name.startsWith('...'))).toBe(false);
  });

  it('reads the decode scrape, including Go-style exponents such as 9.021377e+06', () => {
    const e = parse(fixture('sglang-decode.prom'));
    expect(family(e, 'sglang:generation_tokens_total').samples[0].value).toBe(9021377);
    const itl = family(e, 'sglang:inter_token_latency_seconds');
    expect(itl.samples.map((s) => s.value)).toEqual([8401120, 9019844, 201733.9, 9019844]);
    expect(family(e, 'sglang:max_total_num_tokens').samples[0].value).toBe(447416);
  });

  it('groups a labeled histogram whose _sum comes before its buckets (multiprocess order)', () => {
    const text = [
      '# HELP sglang:e2e_request_latency_seconds Histogram of End-to-end request latency in seconds',
      '# TYPE sglang:e2e_request_latency_seconds histogram',
      'sglang:e2e_request_latency_seconds_sum{engine_type="decode",model_name="m"} 14107.2',
      'sglang:e2e_request_latency_seconds_bucket{engine_type="decode",le="0.1",model_name="m"} 0.0',
      'sglang:e2e_request_latency_seconds_bucket{engine_type="decode",le="+Inf",model_name="m"} 1531.0',
      'sglang:e2e_request_latency_seconds_count{engine_type="decode",model_name="m"} 1531.0',
      'sglang:e2e_request_latency_seconds_sum{engine_type="prefill",model_name="m"} 8.128902e+06',
      'sglang:e2e_request_latency_seconds_bucket{engine_type="prefill",le="+Inf",model_name="m"} 12.0',
      'sglang:e2e_request_latency_seconds_count{engine_type="prefill",model_name="m"} 12.0',
      '',
    ].join('\n');
    const e = parse(text);
    expect(e.families).toHaveLength(1);
    const h = e.families[0];
    expect(h.samples).toHaveLength(7);
    expect(h.samples[4]).toEqual({
      name: 'sglang:e2e_request_latency_seconds_sum',
      labels: { engine_type: 'prefill', model_name: 'm' },
      value: 8128902,
    });
  });

  it('groups an unlabeled histogram whose _sum comes first (parse-prometheus-text-format throws on this)', () => {
    const e = parse(
      '# TYPE h histogram\nh_sum 3.5\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_count 2\nh_created 1.7e9\n',
    );
    expect(e.families.map((f) => [f.name, f.samples.length])).toEqual([['h', 5]]);
  });

  it('keeps a family declared with HELP/TYPE but without samples yet (series appear lazily)', () => {
    const e = parse(
      '# HELP sglang:queue_time_seconds Queueing time.\n# TYPE sglang:queue_time_seconds histogram\n',
    );
    expect(e.families).toEqual([
      { name: 'sglang:queue_time_seconds', type: 'histogram', help: 'Queueing time.', samples: [] },
    ]);
    expect(e.sampleCount).toBe(0);
  });
});

describe('router output (metrics-exporter-prometheus)', () => {
  it('reads labels in any order, unlabeled gauges and empty label values', () => {
    const e = parse(fixture('smg-router.prom'));
    const responses = family(e, 'smg_http_responses_total');
    expect(responses.samples[0].labels).toEqual({
      path: '/v1/chat/completions',
      status_code: '200',
      error_code: '',
    });
    expect(family(e, 'smg_http_connections_active').samples).toEqual([
      { name: 'smg_http_connections_active', labels: {}, value: 61 },
    ]);
    const duration = family(e, 'smg_router_request_duration_seconds');
    expect(duration.samples.filter((s) => s.name.endsWith('_bucket')).map((s) => s.labels.le)).toEqual([
      '10',
      '30',
      '+Inf',
    ]);
    expect(family(e, 'smg_worker_health').samples.map((s) => s.labels.worker)).toEqual([
      'http://127.0.0.1:30100',
      'http://127.0.0.1:30200',
    ]);
  });
});

describe('values, escapes and timestamps', () => {
  it('reads NaN and infinities in every spelling Go accepts', () => {
    const e = parse('a NaN\nb +Inf\nc -Inf\nd Inf\ne inf\nf +infinity\ng nan\nh -0\n');
    const values = e.families.map((f) => f.samples[0].value);
    expect(values.slice(0, 7)).toEqual([NaN, Infinity, -Infinity, Infinity, Infinity, Infinity, NaN]);
    expect(Object.is(values[7], -0)).toBe(true);
  });

  it('reads every decimal form exactly as Number() would', () => {
    const e = parse(
      'a 1\nb -2.5\nc 8.128902e+06\nd .5\ne 5.\nf 1E3\ng 0.000135819\nh 08\ni 9223372036854775808\n',
    );
    expect(e.families.map((f) => f.samples[0].value)).toEqual([
      1, -2.5, 8128902, 0.5, 5, 1000, 0.000135819, 8, 9223372036854775808,
    ]);
  });

  it('rejects hex floats, underscores and numbers outside float64', () => {
    expect(errorOf('a 0x1p-3\n').reason).toMatch(/invalid value "0x1p-3"/);
    expect(errorOf('a 1_000\n').reason).toMatch(/invalid value/);
    expect(errorOf('a 1e400\n').reason).toMatch(/outside the float64 range/);
    expect(errorOf('a +NaN\n').reason).toMatch(/invalid value/);
  });

  it('decodes \\\\, \\" and \\n in label values and keeps other escapes as written (textparse)', () => {
    const e = parse('m{a="x\\"y",b="back\\\\slash",c="new\\nline",d="tab\\tstays",e="\\\\"} 1\n');
    expect(e.families[0].samples[0].labels).toEqual({
      a: 'x"y',
      b: 'back\\slash',
      c: 'new\nline',
      d: 'tab\\tstays',
      e: '\\',
    });
  });

  it('decodes \\\\ and \\n in HELP but keeps \\" (textparse helpReplacer)', () => {
    const e = parse('# HELP m two-line\\n doc \\\\ and \\"quotes\\"\n');
    expect(e.families[0].help).toBe('two-line\n doc \\ and \\"quotes\\"');
  });

  it('reads integer millisecond timestamps, negative ones too', () => {
    const e = parse('a 1 1700000000123\nb 2 -5\nc 3 +7\n');
    expect(e.families.map((f) => f.samples[0].timestampMs)).toEqual([1700000000123, -5, 7]);
    // the largest int64 is accepted (as the nearest double, 2^63)
    expect(parse('z 1 9223372036854775807\n').families[0].samples[0].timestampMs).toBe(2 ** 63);
  });

  it('rejects float timestamps (the text format wants integer ms) and values outside int64', () => {
    expect(errorOf('a 1 1.5\n')).toEqual({
      line: 1,
      column: 5,
      reason: 'invalid timestamp "1.5": the text format wants integer milliseconds since the epoch',
    });
    expect(errorOf('a 1 9223372036854775808\n').reason).toMatch(/invalid timestamp/);
  });

  it('keeps a label literally named __proto__', () => {
    const labels = parse('m{__proto__="x",constructor="y"} 1\n').families[0].samples[0].labels;
    expect(Object.keys(labels)).toEqual(['__proto__', 'constructor']);
    expect(Object.getOwnPropertyDescriptor(labels, '__proto__')?.value).toBe('x');
    expect(Object.getPrototypeOf(labels)).toBe(Object.prototype);
  });
});

describe('families', () => {
  it('makes a sample without a preceding TYPE its own untyped family, colons included', () => {
    const e = parse('job:request_latency:rate5m{job="a"} 0.5\nother 1\n');
    expect(e.families.map((f) => [f.name, f.type])).toEqual([
      ['job:request_latency:rate5m', 'untyped'],
      ['other', 'untyped'],
    ]);
  });

  it('does not fold _sum/_count into a family that is not a histogram or summary', () => {
    const e = parse('# TYPE x gauge\nx 1\nx_sum 2\nx_count 3\n');
    expect(e.families.map((f) => f.name)).toEqual(['x', 'x_sum', 'x_count']);
  });

  it('prefers a family with the exact sample name over a histogram parent (client_python _created gauges)', () => {
    const e = parse(
      '# TYPE h histogram\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n# TYPE h_created gauge\nh_created 1.7e9\n',
    );
    expect(e.families.map((f) => [f.name, f.samples.length])).toEqual([
      ['h', 3],
      ['h_created', 1],
    ]);
  });

  it('returns to an earlier family when its samples come back later, as expfmt does', () => {
    const e = parse('# TYPE s summary\ns{quantile="0.5"} 1\nother 2\ns_count 5\n');
    expect(e.families.map((f) => [f.name, f.samples.length])).toEqual([
      ['s', 2],
      ['other', 1],
    ]);
  });
});

describe('dialect leniency (expfmt grammar)', () => {
  it('accepts blanks inside label sets, a trailing comma, a value right after "}" and indentation', () => {
    const e = parse(
      [
        '',
        ' # HELP  name2  \tdoc str"ing 2',
        '  #    TYPE    name2 gauge',
        'name2{labelname="val2"\t,basename   =   "basevalue2"\t\t} +Inf 54321',
        'name2{ labelname = "val1" , }-Inf',
        '   name2 {x="y"}  7',
        '',
      ].join('\n'),
    );
    const f = family(e, 'name2');
    expect(f.help).toBe('doc str"ing 2');
    expect(f.samples).toEqual([
      {
        name: 'name2',
        labels: { labelname: 'val2', basename: 'basevalue2' },
        value: Infinity,
        timestampMs: 54321,
      },
      { name: 'name2', labels: { labelname: 'val1' }, value: -Infinity },
      { name: 'name2', labels: { x: 'y' }, value: 7 },
    ]);
  });

  it('skips comments, blank lines, "# HELP" without a name or text, and "# EOF"', () => {
    const e = parse('# just a comment\n#\n\n# HELP\n# HELP \n# HELP m\n# EOF\nm 1\n');
    expect(e.families).toEqual([
      { name: 'm', type: 'untyped', samples: [{ name: 'm', labels: {}, value: 1 }] },
    ]);
  });

  it('accepts a final line of blanks without a newline', () => {
    expect(parse('m 1\n   ').sampleCount).toBe(1);
    expect(parse('').families).toEqual([]);
  });
});

describe('dialect strictness', () => {
  it('rejects a last line without newline: the response was probably truncated', () => {
    expect(errorOf('a 1\nb 2')).toMatchObject({
      line: 2,
      column: 4,
      reason: expect.stringMatching(/truncated/),
    });
  });

  it('rejects a second HELP, a second TYPE and a TYPE after samples (expfmt corpus)', () => {
    expect(errorOf('# HELP m one\n# HELP m two\n')).toEqual({
      line: 2,
      column: 3,
      reason: 'second HELP line for "m" (the first is on line 1)',
    });
    expect(errorOf('# TYPE m counter\n# TYPE m gauge\n').reason).toBe(
      'second TYPE line for "m" (the first is on line 1)',
    );
    expect(errorOf('m 4.12\n# TYPE m counter\n').reason).toMatch(/TYPE line for "m" comes after its samples/);
  });

  it('rejects unknown types, including OpenMetrics-only ones and trailing blanks', () => {
    expect(errorOf('# TYPE m bla\n')).toMatchObject({ line: 1, column: 10 });
    expect(errorOf('# TYPE m gaugehistogram\n').reason).toMatch(/unknown metric type "gaugehistogram"/);
    expect(errorOf('# TYPE m gauge \n').reason).toMatch(/unknown metric type "gauge "/);
  });

  it('rejects a bucket bound or quantile that is not a number (expfmt corpus)', () => {
    expect(errorOf('# TYPE m histogram\nm_bucket{le="bla"} 1\n')).toEqual({
      line: 2,
      column: 14,
      reason: 'histogram bucket bound le="bla" is not a number',
    });
    expect(errorOf('# TYPE m summary\nm{quantile="x"} 1\n')).toMatchObject({ line: 2, column: 13 });
  });

  it('reports label-set mistakes with their column', () => {
    expect(errorOf('ok 1\nmetric{label="new\nline"} 3.14\n')).toEqual({
      line: 2,
      column: 14,
      reason: 'unterminated value of label "label": no closing \'"\' on this line',
    });
    expect(errorOf('metric{@="bla"} 1\n')).toMatchObject({
      line: 1,
      column: 8,
      reason: 'expected a label name, found "@"',
    });
    expect(errorOf('metric{label=bla} 1\n')).toMatchObject({ column: 14 });
    expect(errorOf('metric{label="bla"+} 1\n')).toMatchObject({ column: 19 });
    expect(errorOf('metric{a="1",a="2"} 1\n')).toMatchObject({
      column: 14,
      reason: 'label "a" appears twice in one label set',
    });
    expect(errorOf('metric{__name__="x"} 1\n').reason).toMatch(/reserved for the metric name/);
  });

  it('rejects a name glued to something that is not a blank or "{" (textparse, stricter than expfmt)', () => {
    expect(errorOf('a1.5\n')).toMatchObject({ line: 1, column: 3 });
    expect(errorOf('met-ric 1\n').reason).toMatch(/invalid character "-" in metric name "met…"/);
    expect(errorOf('{label="bla"} 1\n').reason).toMatch(/metric name before '\{'/);
  });

  it('rejects a blank after the value or the timestamp at the end of the line, as promtool does', () => {
    // these parsed before: the trailing blanks were skipped
    expect(errorOf('a 1 \n')).toEqual({
      line: 1,
      column: 4,
      reason:
        'a space after the value ends the line; the text format allows no trailing blanks (Prometheus rejects the line)',
    });
    expect(errorOf('ok 1\na{b="c"} 1\t\n')).toMatchObject({ line: 2, column: 11 });
    expect(errorOf('a 1 1700000000000 \n')).toMatchObject({
      column: 18,
      reason: expect.stringMatching(/^a space after the timestamp ends the line/),
    });
    expect(errorOf('a 1 1700000000000\t\t\n')).toMatchObject({ column: 18 });
    // blanks between the fields and blank-only lines stay allowed
    expect(parse('a  1 \t 1700000000000\n  \n').families[0].samples).toEqual([
      { name: 'a', labels: {}, value: 1, timestampMs: 1700000000000 },
    ]);
  });

  it('rejects exemplars, extra fields and CRLF line endings with a message that says so', () => {
    expect(errorOf('a 1 # {x="y"} 1\n').reason).toMatch(
      /exemplars are not part of the Prometheus text format/,
    );
    expect(errorOf('a 1 2 3\n')).toMatchObject({
      column: 7,
      reason: expect.stringMatching(/after the timestamp/),
    });
    expect(errorOf('a 1\r\n').reason).toMatch(/CRLF/);
  });
});
