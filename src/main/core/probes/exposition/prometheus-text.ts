// Prometheus text exposition format 0.0.4.
//
// Dialect: the grammar of prometheus/common expfmt (blanks around label tokens, a trailing comma, a value
// right after '}', comments anywhere, families that come back later), lenient like Prometheus' own
// textparse where the expfmt fuzz corpus does not say otherwise (unknown escapes kept as written, histogram
// and summary structure not policed). Strict where both Go parsers agree or the corpus requires it: a final
// newline, integer timestamps, one HELP and one TYPE per family, no TYPE after the family's samples, a
// parseable `le`/`quantile`. docs/parser.md lists every choice.

import { ParsedFamily, ParsedSample } from './parsed';
import { ExpositionScanner } from './scanner';
import type { SeriesCache } from './series-cache';
import type { Exposition, MetricFamily, MetricType, Sample } from './types';
import * as lexical from './lexical';
import type { InvalidUtf8 } from './utf8';

// Bound once to local constants: loaders that compile ESM to CommonJS (tsx, vite-node) turn every access to an
// imported binding into a getter call, which dominated the profile of the hot loops.
const {
  CH_HASH,
  CH_LBRACE,
  CH_SPACE,
  CH_TAB,
  parseFloatToken,
  invalidNumber,
  parseIntegerTimestamp,
  unescapeHelp,
} = lexical;

const PROMETHEUS_TYPES: ReadonlySet<string> = new Set([
  'counter',
  'gauge',
  'histogram',
  'summary',
  'untyped',
]);

interface FamilyEntry {
  family: MetricFamily;
  helpLine: number;
  typeLine: number;
  firstSampleLine: number;
}

export function parsePrometheusText(
  text: string,
  invalidUtf8?: InvalidUtf8,
  cache?: SeriesCache,
): Exposition {
  return new PrometheusTextParser(text, invalidUtf8, cache).parse();
}

class PrometheusTextParser {
  private readonly s: ExpositionScanner;
  private readonly families: MetricFamily[] = [];
  private readonly byName = new Map<string, FamilyEntry>();
  private sampleCount = 0;
  // Consecutive samples mostly share a name (buckets); remembering the last lookup skips the map.
  private lastSampleName = '';
  private lastEntry: FamilyEntry | undefined;

  constructor(text: string, invalidUtf8: InvalidUtf8 | undefined, cache: SeriesCache | undefined) {
    this.s = new ExpositionScanner(text, 'prometheus', invalidUtf8, cache);
  }

  parse(): Exposition {
    const s: ExpositionScanner = this.s;
    while (s.nextLine()) {
      s.skipBlanks();
      if (s.pos === s.lineEnd) continue; // blank lines are allowed, including a final one without '\n'
      if (s.unterminated) {
        s.fail(
          'the last line has no terminating newline; the exposition was probably truncated ' +
            '(the text format requires every line to end with "\\n")',
          s.lineEnd,
        );
      }
      if (s.text.charCodeAt(s.pos) === CH_HASH) this.comment();
      else this.sample();
    }
    return { format: 'prometheus', families: this.families, sampleCount: this.sampleCount };
  }

  private entryFor(name: string): FamilyEntry {
    let entry = this.byName.get(name);
    if (entry === undefined) {
      const family: MetricFamily = new ParsedFamily(name, 'untyped');
      entry = { family, helpLine: 0, typeLine: 0, firstSampleLine: 0 };
      this.byName.set(name, entry);
      this.families.push(family);
    }
    return entry;
  }

  /** Follows expfmt: only "# HELP name text" and "# TYPE name type" mean something; other comments are skipped. */
  private comment(): void {
    const s: ExpositionScanner = this.s;
    const text = s.text;
    const end = s.lineEnd;
    s.pos++;
    s.skipBlanks();
    const keywordStart = s.pos;
    let i = keywordStart;
    while (i < end && text.charCodeAt(i) !== CH_SPACE && text.charCodeAt(i) !== CH_TAB) i++;
    if (i === end || i - keywordStart !== 4) return;
    const isHelp = text.startsWith('HELP', keywordStart);
    if (!isHelp && !text.startsWith('TYPE', keywordStart)) return;
    const keyword = isHelp ? 'HELP' : 'TYPE';
    // Like textparse: HELP text must be UTF-8 too (expfmt, and so promtool, does not check it)
    s.checkUtf8();
    s.pos = i;
    s.skipBlanks();
    if (s.pos === end) return; // "# HELP " with no name: expfmt treats it as a plain comment
    const nameStart = s.pos;
    const name = s.readMetricName();
    if (name === '') s.fail(`expected a metric name after # ${keyword}, found ${s.describe()}`);
    if (s.pos === end) return; // "# HELP name" with no text: ignored, as expfmt does
    const c = text.charCodeAt(s.pos);
    if (c !== CH_SPACE && c !== CH_TAB) {
      s.fail(`invalid character ${s.describe()} in metric name "${text.slice(nameStart, s.pos)}…"`);
    }
    s.skipBlanks();
    // A new family may take over names that matched a parent's suffix before: forget the lookup cache.
    this.lastSampleName = '';
    this.lastEntry = undefined;
    const entry = this.entryFor(name);
    if (s.pos === end) return;
    const family = entry.family;
    if (isHelp) {
      if (family.help !== undefined) {
        s.fail(`second HELP line for "${name}" (the first is on line ${entry.helpLine})`, keywordStart);
      }
      family.help = s.own(
        s.hasBackslash(s.pos, end) ? unescapeHelp(text, s.pos, end, false) : text.slice(s.pos, end),
      );
      entry.helpLine = s.lineNo;
      return;
    }
    if (entry.typeLine > 0) {
      s.fail(`second TYPE line for "${name}" (the first is on line ${entry.typeLine})`, keywordStart);
    }
    if (family.samples.length > 0) {
      s.fail(
        `TYPE line for "${name}" comes after its samples (first sample on line ${entry.firstSampleLine}); ` +
          'TYPE must precede them',
        keywordStart,
      );
    }
    const type = text.slice(s.pos, end);
    if (!PROMETHEUS_TYPES.has(type)) {
      s.fail(
        `unknown metric type ${JSON.stringify(type)} for "${name}" ` +
          '(the text format knows counter, gauge, histogram, summary and untyped)',
      );
    }
    family.type = type as MetricType;
    entry.typeLine = s.lineNo;
  }

  private sample(): void {
    const s: ExpositionScanner = this.s;
    const text = s.text;
    const end = s.lineEnd;
    s.checkUtf8();
    let name: string;
    let labels = s.lookupSeries();
    if (labels !== undefined) {
      name = s.seriesName;
    } else {
      name = s.readMetricName();
      if (name === '') {
        if (text.charCodeAt(s.pos) === CH_LBRACE) {
          s.fail("expected a metric name before '{' (quoted UTF-8 metric names are not supported)");
        }
        s.fail(`expected a metric name, found ${s.describe()}`);
      }
      const afterName = s.pos < end ? text.charCodeAt(s.pos) : CH_SPACE;
      if (afterName !== CH_SPACE && afterName !== CH_TAB && afterName !== CH_LBRACE) {
        // expfmt reads "a1.5" as a1 = 0.5; textparse demands a blank or '{' after the name, and so do we
        s.fail(
          `invalid character ${s.describe()} in metric name "${name}…" (names match [a-zA-Z_:][a-zA-Z0-9_:]*)`,
        );
      }
      s.skipBlanks();
      if (s.pos < end && text.charCodeAt(s.pos) === CH_LBRACE) {
        labels = s.readLabelSet(false, true);
        const cached = s.rememberSeries(name);
        if (cached !== undefined) {
          labels = cached;
          name = s.seriesName;
        }
      } else {
        labels = {};
        s.clearLabels();
      }
    }
    s.skipBlanks();
    const valueStart = s.pos;
    const valueEnd = tokenEnd(text, valueStart, end);
    if (valueStart === valueEnd) s.fail(`expected a value for "${name}", found ${s.describe()}`);
    const value = parseFloatToken(text, valueStart, valueEnd);
    if (value === undefined) s.fail(invalidNumber('value', text.slice(valueStart, valueEnd)), valueStart);
    s.pos = valueEnd;
    s.skipBlanks();
    let timestampMs: number | undefined;
    if (s.pos === end) {
      if (end > valueEnd) s.fail(trailingBlank(s.describe(valueEnd), 'value'), valueEnd);
    } else {
      const tsStart = s.pos;
      const tsEnd = tokenEnd(text, tsStart, end);
      timestampMs = parseIntegerTimestamp(text, tsStart, tsEnd);
      if (timestampMs === undefined) s.fail(invalidTimestamp(text.slice(tsStart, tsEnd)), tsStart);
      s.pos = tsEnd;
      s.skipBlanks();
      if (s.pos === end && end > tsEnd) s.fail(trailingBlank(s.describe(tsEnd), 'timestamp'), tsEnd);
      if (s.pos < end) {
        s.fail(
          text.charCodeAt(s.pos) === CH_HASH
            ? 'exemplars are not part of the Prometheus text format 0.0.4 (only OpenMetrics has them)'
            : `found ${s.describe()} after the timestamp; a sample line is: name{labels} value [timestamp]`,
        );
      }
    }

    let entry: FamilyEntry;
    if (name === this.lastSampleName && this.lastEntry !== undefined) {
      entry = this.lastEntry;
    } else {
      entry = this.byName.get(name) ?? this.parentFamily(name) ?? this.entryFor(name);
      this.lastSampleName = name;
      this.lastEntry = entry;
    }
    const family = entry.family;
    if (
      family.type === 'histogram' &&
      labels.le !== undefined &&
      name !== family.name &&
      name.endsWith('_bucket')
    ) {
      // expfmt rejects a bucket bound that is not a float; a histogram cannot be read without it
      if (s.leBound(labels.le) === null) {
        s.fail(
          `histogram bucket bound le=${JSON.stringify(labels.le)} is not a number`,
          s.labelValueStart('le'),
        );
      }
    } else if (family.type === 'summary' && labels.quantile !== undefined && name === family.name) {
      if (s.quantileValue(labels.quantile) === null) {
        s.fail(
          `summary quantile=${JSON.stringify(labels.quantile)} is not a number`,
          s.labelValueStart('quantile'),
        );
      }
    }
    const sample: Sample = new ParsedSample(name, labels, value);
    if (timestampMs !== undefined) sample.timestampMs = timestampMs;
    if (family.samples.length === 0) entry.firstSampleLine = s.lineNo;
    family.samples.push(sample);
    this.sampleCount++;
  }

  /** The histogram or summary a suffixed sample belongs to (x_bucket, x_sum, x_count, x_created → x). */
  private parentFamily(name: string): FamilyEntry | undefined {
    const suffix = childSuffix(name);
    if (suffix === 0) return undefined;
    const entry = this.byName.get(name.slice(0, name.length - suffix));
    if (entry === undefined) return undefined;
    const type = entry.family.type;
    if (type === 'histogram') return entry;
    if (type === 'summary' && !name.endsWith('_bucket')) return entry;
    return undefined;
  }
}

/** Length of a _bucket/_count/_sum/_created suffix on `name`, or 0. */
function childSuffix(name: string): number {
  if (name.endsWith('_bucket')) return 7;
  if (name.endsWith('_count')) return 6;
  if (name.endsWith('_sum')) return 4;
  if (name.endsWith('_created')) return 8;
  return 0;
}

function tokenEnd(text: string, i: number, end: number): number {
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === CH_SPACE || c === CH_TAB) break;
    i++;
  }
  return i;
}

// Prometheus (expfmt, and so promtool) rejects a blank after the last field: after a value it expects a
// timestamp, after a timestamp the end of the line.
function trailingBlank(found: string, field: 'value' | 'timestamp'): string {
  return `${found} after the ${field} ends the line; the text format allows no trailing blanks (Prometheus rejects the line)`;
}

function invalidTimestamp(token: string): string {
  if (token.endsWith('\r'))
    return 'invalid timestamp: the line ends with a carriage return (CRLF line endings are not allowed)';
  if (token.startsWith('#'))
    return 'exemplars are not part of the Prometheus text format 0.0.4 (only OpenMetrics has them)';
  return `invalid timestamp ${JSON.stringify(token)}: the text format wants integer milliseconds since the epoch`;
}
