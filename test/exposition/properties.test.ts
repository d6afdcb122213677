// Property-based tests: arbitrary and mutated input only ever parses or throws ExpositionParseError (never
// another exception, never a hang), generated valid expositions round-trip, and the number reader agrees
// with Number().

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFloatToken } from '../../src/main/core/probes/exposition/lexical';
import { ExpositionParseError, parseExposition } from '../../src/main/core/probes/exposition/parser';
import type {
  Exemplar,
  Exposition,
  ExpositionFormat,
  MetricFamily,
  MetricType,
  Sample,
} from '../../src/main/core/probes/exposition/types';

const FIXTURES = resolve(fileURLToPath(import.meta.url), '../fixtures');
const FORMATS: ExpositionFormat[] = ['prometheus', 'openmetrics'];

/** Parses in both formats; returns normally only if each attempt parsed or threw a well-formed ExpositionParseError. */
function parsesOrRejectsCleanly(text: string): void {
  const lineCount = text.split('\n').length;
  for (const format of FORMATS) {
    try {
      const e = parseExposition(text, format);
      expect(e.sampleCount).toBe(e.families.reduce((n, f) => n + f.samples.length, 0));
    } catch (err) {
      if (!(err instanceof ExpositionParseError)) throw err;
      expect(err.format).toBe(format);
      expect(Number.isInteger(err.line) && err.line >= 1 && err.line <= lineCount + 1).toBe(true);
      expect(Number.isInteger(err.column) && err.column >= 1).toBe(true);
    }
  }
}

// Characters that matter to the grammar, so random text reaches deep into the parser rather than failing at once.
const SYNTAX = [
  '#',
  ' ',
  '\t',
  '\n',
  '{',
  '}',
  '=',
  '"',
  ',',
  '\\',
  '_',
  ':',
  '.',
  '-',
  '+',
  'e',
  'E',
  '0',
  '1',
  '9',
];
const WORDS = [
  '# HELP ',
  '# TYPE ',
  '# UNIT ',
  '# EOF',
  'counter',
  'gauge',
  'histogram',
  'summary',
  'info',
  'stateset',
  'gaugehistogram',
  'unknown',
  'untyped',
  '_total',
  '_bucket',
  '_sum',
  '_count',
  '_created',
  '_gsum',
  '_gcount',
  'le="',
  'quantile="',
  '+Inf',
  '-Inf',
  'NaN',
  ' # {',
  '} ',
  'a',
  'a_total',
  'sglang:x',
  '\\n',
  '\\"',
];
const exposititionish = fc
  .array(
    fc.oneof(
      fc.constantFrom(...SYNTAX),
      fc.constantFrom(...WORDS),
      fc.string({ maxLength: 4, unit: 'binary' }),
    ),
    {
      maxLength: 80,
    },
  )
  .map((parts) => parts.join(''));

describe('robustness', () => {
  it('random text is either parsed or rejected with a positioned ExpositionParseError', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), parsesOrRejectsCleanly), {
      numRuns: 400,
    });
    fc.assert(fc.property(exposititionish, parsesOrRejectsCleanly), { numRuns: 1500 });
  });

  const seeds = [
    readFileSync(resolve(FIXTURES, 'sglang-prefill.prom'), 'utf8'),
    readFileSync(resolve(FIXTURES, 'smg-router.prom'), 'utf8'),
    [
      '# TYPE h histogram',
      '# HELP h A \\"histogram\\"\\n.',
      'h_bucket{a="x\\\\y",le="1"} 1 # {trace="t"} 0.5 1.5',
      'h_bucket{a="x\\\\y",le="+Inf"} 2',
      'h_count{a="x\\\\y"} 2',
      'h_sum{a="x\\\\y"} 1.5',
      '# TYPE s stateset',
      's{s="on"} 1',
      '# TYPE i info',
      'i_info{v="1"} 1',
      '# TYPE c_seconds counter',
      '# UNIT c_seconds seconds',
      'c_seconds_total 3 1700000000.001',
      'c_seconds_created 1700000000',
      '# EOF',
      '',
    ].join('\n'),
  ];

  type Edit =
    | { kind: 'insert'; at: number; text: string }
    | { kind: 'delete'; at: number; length: number }
    | { kind: 'duplicateLine'; line: number }
    | { kind: 'swapLines'; a: number; b: number }
    | { kind: 'truncate'; at: number };

  const edit: fc.Arbitrary<Edit> = fc.oneof(
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      text: fc.oneof(fc.constantFrom(...SYNTAX, ...WORDS), fc.string({ maxLength: 3, unit: 'binary' })),
    }),
    fc.record({
      kind: fc.constant('delete' as const),
      at: fc.nat(),
      length: fc.integer({ min: 1, max: 20 }),
    }),
    fc.record({ kind: fc.constant('duplicateLine' as const), line: fc.nat() }),
    fc.record({ kind: fc.constant('swapLines' as const), a: fc.nat(), b: fc.nat() }),
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  );

  function apply(text: string, e: Edit): string {
    const at = (n: number) => (text.length === 0 ? 0 : n % (text.length + 1));
    switch (e.kind) {
      case 'insert':
        return text.slice(0, at(e.at)) + e.text + text.slice(at(e.at));
      case 'delete':
        return text.slice(0, at(e.at)) + text.slice(at(e.at) + e.length);
      case 'truncate':
        return text.slice(0, at(e.at));
      case 'duplicateLine': {
        const lines = text.split('\n');
        const i = e.line % lines.length;
        lines.splice(i, 0, lines[i]);
        return lines.join('\n');
      }
      case 'swapLines': {
        const lines = text.split('\n');
        const a = e.a % lines.length;
        const b = e.b % lines.length;
        [lines[a], lines[b]] = [lines[b], lines[a]];
        return lines.join('\n');
      }
    }
  }

  it('mutated valid expositions are either parsed or rejected with a positioned ExpositionParseError', () => {
    for (const seed of seeds) parsesOrRejectsCleanly(seed);
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(edit, { minLength: 1, maxLength: 5 }),
        (seed, edits) => {
          parsesOrRejectsCleanly(edits.reduce(apply, seed));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('bytes with stray non-UTF-8 bytes are parsed like their text, or rejected with a positioned error', () => {
    const strayByte = fc.constantFrom(0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff);
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(fc.tuple(fc.nat(), strayByte), { minLength: 0, maxLength: 3 }),
        (seed, inserts) => {
          let bytes = Buffer.from(seed, 'utf8');
          for (const [at, b] of inserts) {
            const k = at % (bytes.length + 1);
            bytes = Buffer.concat([bytes.subarray(0, k), Buffer.from([b]), bytes.subarray(k)]);
          }
          const lineCount = bytes.toString('latin1').split('\n').length;
          const valid = Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);
          for (const format of FORMATS) {
            let fromBytes: unknown;
            try {
              fromBytes = parseExposition(bytes, format);
            } catch (err) {
              if (!(err instanceof ExpositionParseError)) throw err;
              expect(err.line >= 1 && err.line <= lineCount + 1 && err.column >= 1).toBe(true);
              fromBytes = err.reason;
            }
            if (valid) {
              let fromText: unknown;
              try {
                fromText = parseExposition(bytes.toString('utf8'), format);
              } catch (err) {
                fromText = (err as ExpositionParseError).reason;
              }
              expect(fromBytes).toEqual(fromText);
            }
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('stays linear on large adversarial input (no quadratic rescans)', () => {
    // Each case is ~1-2 MB; a quadratic pass over it would take minutes, a linear one milliseconds.
    const cases = [
      'm{' + 'a="\\\\",'.repeat(150_000) + '} 1\n', // one huge label set full of escapes (duplicate label → error)
      `m{a="${'x'.repeat(1_000_000)}\n`, // unterminated value spanning the rest of the text
      '# HELP m ' + 'x'.repeat(500_000) + '\n' + 'm{a="b"} 1\n'.repeat(100_000) + 'm{a="\\n"} 1\n',
      '#\n'.repeat(500_000),
      'a{b="c"} 1\n'.repeat(150_000) + '# EOF\n',
      'x' + '_'.repeat(1_000_000) + ' 1\n',
    ];
    for (const text of cases) {
      // A quadratic pass runs into the test timeout; bench/hostile-input.ts prints the time and its growth.
      parsesOrRejectsCleanly(text);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Round trips: a generated model is rendered as text, parsed, and must come back identical.

const escapeLabel = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function renderValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Object.is(v, -0)) return '-0';
  return String(v);
}

function renderLabels(labels: Record<string, string>): string {
  const keys = Object.keys(labels);
  return keys.length === 0 ? '' : `{${keys.map((k) => `${k}="${escapeLabel(labels[k])}"`).join(',')}}`;
}

/** Milliseconds as exact decimal seconds ("1700000000.001"), the way OpenMetrics writes timestamps. */
function renderSeconds(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  return `${sign}${Math.floor(abs / 1000)}.${String(abs % 1000).padStart(3, '0')}`;
}

const labelValue = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ maxLength: 6, unit: 'binary' }),
  fc.constantFrom('', '\\', '"', '\n', '\\n', '\\"', '{}', '# ', 'Qwen/Qwen3-32B', 'http://127.0.0.1:30100'),
);
const labelName = fc
  .stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,10}$/)
  .filter((n) => n !== '__name__' && n !== 'le' && n !== 'quantile');
const baseName = fc
  .stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,16}$/)
  .filter((n) => !/_(total|created|bucket|count|sum|gcount|gsum|info)$/.test(n));
const anyValue = fc.oneof(
  fc.double(),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.constantFrom(NaN, Infinity, -Infinity, 0, -0, 8128902),
);
const nonNegative = fc.oneof(fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), fc.nat());
const count = fc.nat({ max: 1_000_000 });
const labelSets = (max: number) =>
  fc.tuple(fc.uniqueArray(labelName, { maxLength: 4 }), fc.integer({ min: 1, max })).chain(([names, n]) =>
    fc
      .uniqueArray(fc.array(labelValue, { minLength: names.length, maxLength: names.length }), {
        minLength: 1,
        maxLength: n,
        selector: (values) => JSON.stringify(values),
      })
      .map((rows) => rows.map((values) => Object.fromEntries(names.map((name, i) => [name, values[i]])))),
  );
const promHelp = fc.option(
  fc.string({ minLength: 1, maxLength: 20 }).filter((h) => h[0] !== ' ' && h[0] !== '\t'),
  { nil: undefined },
);

interface Rendered {
  text: string;
  expected: Exposition;
}

function sample(
  name: string,
  labels: Record<string, string>,
  value: number,
  timestampMs?: number,
  exemplar?: Exemplar,
): Sample {
  const s: Sample = { name, labels, value };
  if (timestampMs !== undefined) s.timestampMs = timestampMs;
  if (exemplar !== undefined) s.exemplar = exemplar;
  return s;
}

const promFamily = fc
  .record({
    name: baseName,
    type: fc.constantFrom<MetricType>('untyped', 'gauge', 'counter', 'summary', 'histogram'),
    declareType: fc.boolean(),
    help: promHelp,
    groups: labelSets(4),
    timestampMs: fc.option(fc.integer({ min: -1e13, max: 1e13 }), { nil: undefined }),
    values: fc.array(anyValue, { minLength: 40, maxLength: 40 }),
    bounds: fc.uniqueArray(fc.double({ noNaN: true }), { maxLength: 4 }),
  })
  .map((m): MetricFamily & { lines: string[] } => {
    let v = 0;
    const next = () => m.values[v++ % m.values.length];
    const samples: Sample[] = [];
    for (const labels of m.groups) {
      if (m.type === 'histogram') {
        for (const le of [...m.bounds.map(renderValue), '+Inf']) {
          samples.push(sample(`${m.name}_bucket`, { ...labels, le }, next(), m.timestampMs));
        }
        samples.push(sample(`${m.name}_sum`, labels, next(), m.timestampMs));
        samples.push(sample(`${m.name}_count`, labels, next(), m.timestampMs));
      } else if (m.type === 'summary') {
        for (const q of ['0.5', '0.99'])
          samples.push(sample(m.name, { ...labels, quantile: q }, next(), m.timestampMs));
        samples.push(sample(`${m.name}_sum`, labels, next(), m.timestampMs));
        samples.push(sample(`${m.name}_count`, labels, next(), m.timestampMs));
      } else {
        samples.push(sample(m.name, labels, next(), m.timestampMs));
      }
    }
    const lines: string[] = [];
    if (m.help !== undefined)
      lines.push(`# HELP ${m.name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
    const declared = m.declareType || m.type !== 'untyped';
    if (declared) lines.push(`# TYPE ${m.name} ${m.type}`);
    for (const s of samples) {
      const ts = s.timestampMs === undefined ? '' : ` ${s.timestampMs}`;
      lines.push(`${s.name}${renderLabels(s.labels)} ${renderValue(s.value)}${ts}`);
    }
    const family: MetricFamily & { lines: string[] } = { name: m.name, type: m.type, samples, lines };
    if (m.help !== undefined) family.help = m.help;
    return family;
  });

const promExposition: fc.Arbitrary<Rendered> = fc
  .uniqueArray(promFamily, { maxLength: 6, selector: (f) => f.name })
  .map((families) => {
    const text = families.map((f) => f.lines.join('\n') + '\n').join('');
    const expected = families.map(({ lines: _lines, ...f }) => f);
    return {
      text,
      expected: {
        format: 'prometheus',
        families: expected,
        sampleCount: expected.reduce((n, f) => n + f.samples.length, 0),
      },
    };
  });

const OM_SUFFIXES: Record<string, string[]> = {
  counter: ['_total', '_created'],
  summary: ['', '_count', '_sum', '_created'],
  histogram: ['_count', '_sum', '_bucket', '_created'],
  gaugehistogram: ['_gcount', '_gsum', '_bucket'],
  info: ['_info'],
};

const exemplarArb = fc.option(
  fc.record({
    labels: fc.dictionary(labelName, fc.string({ maxLength: 10 }), { maxKeys: 2 }),
    value: anyValue,
    timestampMs: fc.option(fc.integer({ min: 0, max: 2e12 }), { nil: undefined }),
  }),
  { nil: undefined },
);

const omFamily = fc
  .record({
    name: baseName,
    type: fc.constantFrom<MetricType>(
      'gauge',
      'counter',
      'unknown',
      'info',
      'stateset',
      'summary',
      'histogram',
      'gaugehistogram',
    ),
    help: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
    unit: fc.option(fc.stringMatching(/^[a-z]{1,8}$/), { nil: undefined }),
    groups: labelSets(3),
    timestampMs: fc.option(fc.integer({ min: -1e12, max: 1e13 }), { nil: undefined }),
    anyValues: fc.array(anyValue, { minLength: 8, maxLength: 8 }),
    amounts: fc.array(nonNegative, { minLength: 8, maxLength: 8 }),
    counts: fc.array(count, { minLength: 6, maxLength: 6 }),
    bounds: fc.uniqueArray(fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), { maxLength: 4 }),
    withSum: fc.boolean(),
    exemplar: exemplarArb,
  })
  .map((m) => {
    const hasUnit = m.unit !== undefined && m.type !== 'info' && m.type !== 'stateset';
    // a stateset's name is also a label name, which cannot hold ':'
    const base = m.type === 'stateset' ? m.name.replace(/:/g, '_') : m.name;
    const name = hasUnit ? `${base}_${m.unit}` : base;
    const ts = m.timestampMs;
    const samples: Sample[] = [];
    // a stateset sample carries a label named after the family; keep other labels from reusing that name
    const groups = m.type === 'stateset' ? m.groups.filter((l) => !Object.hasOwn(l, name)) : m.groups;
    groups.forEach((labels, g) => {
      const any = (k: number) => m.anyValues[(k + g) % m.anyValues.length];
      const amount = (k: number) => m.amounts[(k + g) % m.amounts.length];
      const exemplar = m.exemplar === undefined ? undefined : ({ ...m.exemplar } as Exemplar);
      if (exemplar !== undefined && exemplar.timestampMs === undefined) delete exemplar.timestampMs;
      switch (m.type) {
        case 'gauge':
        case 'unknown':
          samples.push(sample(name, labels, any(0), ts));
          break;
        case 'counter':
          samples.push(sample(`${name}_total`, labels, amount(0), ts, exemplar));
          samples.push(sample(`${name}_created`, labels, 1700000000 + g, ts));
          break;
        case 'info':
          samples.push(sample(`${name}_info`, labels, 1, ts));
          break;
        case 'stateset':
          samples.push(sample(name, { ...labels, [name]: 'a' }, 1, ts));
          samples.push(sample(name, { ...labels, [name]: 'b' }, 0, ts));
          break;
        case 'summary':
          samples.push(sample(name, { ...labels, quantile: '0.5' }, amount(1), ts));
          samples.push(sample(name, { ...labels, quantile: '1' }, NaN, ts));
          samples.push(sample(`${name}_sum`, labels, amount(2), ts));
          samples.push(sample(`${name}_count`, labels, m.counts[0], ts));
          break;
        case 'histogram':
        case 'gaugehistogram': {
          const bounds = [...m.bounds].sort((a, b) => a - b);
          let cumulative = 0;
          bounds.forEach((le, i) => {
            cumulative += m.counts[i];
            const ex = i === 0 ? exemplar : undefined;
            samples.push(sample(`${name}_bucket`, { ...labels, le: renderValue(le) }, cumulative, ts, ex));
          });
          cumulative += m.counts[5];
          samples.push(sample(`${name}_bucket`, { ...labels, le: '+Inf' }, cumulative, ts));
          if (m.type === 'gaugehistogram') {
            samples.push(sample(`${name}_gcount`, labels, cumulative, ts));
            samples.push(sample(`${name}_gsum`, labels, amount(3), ts));
          } else if (m.withSum) {
            samples.push(sample(`${name}_count`, labels, cumulative, ts));
            samples.push(sample(`${name}_sum`, labels, amount(3), ts));
          }
        }
      }
    });
    const lines: string[] = [`# TYPE ${name} ${m.type}`];
    if (hasUnit) lines.push(`# UNIT ${name} ${m.unit}`);
    if (m.help !== undefined) {
      lines.push(
        `# HELP ${name} ${m.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}`,
      );
    }
    for (const s of samples) {
      let line = `${s.name}${renderLabels(s.labels)} ${renderValue(s.value)}`;
      if (s.timestampMs !== undefined) line += ` ${renderSeconds(s.timestampMs)}`;
      if (s.exemplar !== undefined) {
        line += ` # {${Object.keys(s.exemplar.labels)
          .map((k) => `${k}="${escapeLabel(s.exemplar!.labels[k])}"`)
          .join(',')}}`;
        line += ` ${renderValue(s.exemplar.value)}`;
        if (s.exemplar.timestampMs !== undefined) line += ` ${renderSeconds(s.exemplar.timestampMs)}`;
      }
      lines.push(line);
    }
    const family: MetricFamily & { lines: string[]; claims: string[] } = {
      name,
      type: m.type,
      samples,
      lines,
      claims: ['', ...(OM_SUFFIXES[m.type] ?? [])].map((s) => name + s),
    };
    if (m.help !== undefined) family.help = m.help;
    if (hasUnit) family.unit = m.unit;
    return family;
  });

const omExposition: fc.Arbitrary<Rendered> = fc.array(omFamily, { maxLength: 6 }).map((generated) => {
  // Drop families whose names would clash with an earlier one's (OpenMetrics forbids that).
  const claimed = new Set<string>();
  const families = generated.filter((f) => {
    if (f.claims.some((c) => claimed.has(c))) return false;
    for (const c of f.claims) claimed.add(c);
    return true;
  });
  const text = families.map((f) => f.lines.join('\n') + '\n').join('') + '# EOF\n';
  const expected = families.map(({ lines: _l, claims: _c, ...f }) => f);
  return {
    text,
    expected: {
      format: 'openmetrics',
      families: expected,
      sampleCount: expected.reduce((n, f) => n + f.samples.length, 0),
    },
  };
});

describe('round trips', () => {
  it('a generated Prometheus text exposition parses back to the model it was rendered from', () => {
    fc.assert(
      fc.property(promExposition, ({ text, expected }) => {
        expect(parseExposition(text, 'prometheus')).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('a generated OpenMetrics exposition parses back to the model it was rendered from', () => {
    fc.assert(
      fc.property(omExposition, ({ text, expected }) => {
        expect(parseExposition(text, 'openmetrics')).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('number reader', () => {
  it('agrees with Number() on every decimal rendering of a double', () => {
    const renderings = fc
      .double({ noNaN: true, noDefaultInfinity: true })
      .chain((d) =>
        fc.constantFrom(
          String(d),
          d.toExponential(),
          d.toPrecision(17),
          d.toFixed(Math.min(20, Math.max(0, 20 - Math.floor(Math.log10(Math.abs(d) || 1))))),
          `000${Math.abs(d)}`,
        ),
      );
    fc.assert(
      fc.property(renderings, (s) => {
        if (/[a-df-zA-DF-Z]/.test(s)) return; // toFixed of huge numbers yields exponent forms; covered by String()
        expect(parseFloatToken(s, 0, s.length)).toBe(Number(s));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with Number() on random digit strings with a point and an exponent', () => {
    const digits = fc.stringMatching(/^[0-9]{1,25}$/);
    const token = fc
      .tuple(
        fc.constantFrom('', '-', '+'),
        digits,
        fc.option(digits),
        fc.option(fc.integer({ min: -330, max: 330 })),
      )
      .map(
        ([sign, int, frac, exp]) =>
          `${sign}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`,
      );
    fc.assert(
      fc.property(token, (s) => {
        const n = Number(s);
        expect(parseFloatToken(s, 0, s.length)).toBe(Number.isFinite(n) ? n : undefined);
      }),
      { numRuns: 5000 },
    );
  });
});
