// OpenMetrics 1.0 text format: the strict line grammar (single spaces, "# EOF", HELP/TYPE/UNIT only,
// exemplars, timestamps in seconds) and family boundaries; per-family rules live in openmetrics-rules.ts.

import { ParsedFamily, ParsedSample } from './parsed';
import { ExpositionScanner } from './scanner';
import type { SeriesCache } from './series-cache';
import type { Exemplar, Exposition, MetricFamily, MetricType, Sample } from './types';
import * as lexical from './lexical';
import { OpenMetricsFamilyRules, ROLE_BASE, roleSuffix, rolesOf } from './openmetrics-rules';
import type { InvalidUtf8 } from './utf8';

// Bound once to local constants: loaders that compile ESM to CommonJS (tsx, vite-node) turn every access to an
// imported binding into a getter call, which dominated the profile of the hot loops.
const {
  CH_HASH,
  CH_LBRACE,
  CH_SPACE,
  invalidNumber,
  parseFloatToken,
  parseSecondsTimestampMs,
  unescapeHelp,
} = lexical;

const OPENMETRICS_TYPES: ReadonlySet<string> = new Set([
  'counter',
  'gauge',
  'histogram',
  'gaugehistogram',
  'summary',
  'info',
  'stateset',
  'unknown',
]);

export interface OpenMetricsOptions {
  valueRules: boolean;
}

interface FamilyEntry {
  family: MetricFamily;
  declaredType: MetricType | undefined;
  /** Sample names this family accepts (name + suffix per role), with their roles. */
  sampleNames: string[];
  sampleRoles: number[];
  firstLine: number;
  helpLine: number;
  typeLine: number;
  unitLine: number;
  checking: boolean;
}

export function parseOpenMetrics(
  text: string,
  options: OpenMetricsOptions,
  invalidUtf8?: InvalidUtf8,
  cache?: SeriesCache,
): Exposition {
  return new OpenMetricsParser(text, options, invalidUtf8, cache).parse();
}

class OpenMetricsParser {
  private readonly s: ExpositionScanner;
  private readonly rules: OpenMetricsFamilyRules;
  private readonly families: MetricFamily[] = [];
  /** Every sample name a closed family could produce, with the first line of that family. */
  private readonly claimedNames = new Map<string, number>();
  private current: FamilyEntry | undefined;
  private sampleCount = 0;
  private lastSampleName = '';
  private lastRole = -1;

  constructor(
    text: string,
    options: OpenMetricsOptions,
    invalidUtf8: InvalidUtf8 | undefined,
    cache: SeriesCache | undefined,
  ) {
    this.s = new ExpositionScanner(text, 'openmetrics', invalidUtf8, cache);
    this.rules = new OpenMetricsFamilyRules(this.s, { valueRules: options.valueRules });
  }

  parse(): Exposition {
    const s: ExpositionScanner = this.s;
    const text = s.text;
    let eofLine = 0;
    while (s.nextLine()) {
      if (eofLine > 0) {
        s.fail(`text after "# EOF" (line ${eofLine}); "# EOF" must be the last line`, s.lineStart);
      }
      if (s.lineStart === s.lineEnd) s.fail('blank line; OpenMetrics does not allow empty lines');
      // every OpenMetrics line counts (there are no free comments), so none may hold invalid UTF-8
      s.checkUtf8();
      if (s.lineEnd - s.lineStart === 5 && text.startsWith('# EOF', s.lineStart)) {
        this.closeFamily();
        eofLine = s.lineNo;
        continue;
      }
      if (s.unterminated) {
        s.fail(
          'the last line has no terminating newline and no "# EOF" follows; the exposition was probably truncated',
          s.lineEnd,
        );
      }
      if (text.charCodeAt(s.lineStart) === CH_HASH) this.metadata();
      else this.sample();
    }
    if (eofLine === 0) {
      this.closeFamily();
      const endsWithNewline = text.length > 0 && text.charCodeAt(text.length - 1) === 10;
      s.failAt(
        endsWithNewline || text.length === 0 ? s.lineNo + 1 : s.lineNo,
        1,
        'missing "# EOF": an OpenMetrics exposition must end with it (was the response truncated?)',
      );
    }
    return { format: 'openmetrics', families: this.families, sampleCount: this.sampleCount };
  }

  private openFamily(name: string): FamilyEntry {
    const s = this.s;
    const earlier = this.claimedNames.get(name);
    if (earlier !== undefined) {
      s.fail(
        `metric family "${name}" was already exposed by the family starting on line ${earlier}; ` +
          'OpenMetrics requires each family to appear once, with all its lines together',
        s.lineStart,
      );
    }
    const family: MetricFamily = new ParsedFamily(name, 'unknown');
    const entry: FamilyEntry = {
      family,
      declaredType: undefined,
      sampleNames: [name],
      sampleRoles: [ROLE_BASE],
      firstLine: s.lineNo,
      helpLine: 0,
      typeLine: 0,
      unitLine: 0,
      checking: false,
    };
    this.families.push(family);
    this.current = entry;
    this.lastSampleName = '';
    this.lastRole = -1;
    return entry;
  }

  private closeFamily(): void {
    const entry = this.current;
    if (entry === undefined) return;
    this.current = undefined;
    if (entry.checking) this.rules.finish();
    const { name, type } = entry.family;
    const roles = rolesOf(type);
    const names = roles.includes(ROLE_BASE) ? roles.map(roleSuffix) : [...roles.map(roleSuffix), ''];
    for (const suffix of names) {
      const claimed = name + suffix;
      const earlier = this.claimedNames.get(claimed);
      if (earlier !== undefined) {
        this.s.failAt(
          entry.firstLine,
          1,
          `metric family "${name}" (${type}) would expose "${claimed}", which the family starting on line ${earlier} ` +
            'already uses',
        );
      }
      this.claimedNames.set(claimed, entry.firstLine);
    }
  }

  private metadata(): void {
    const s: ExpositionScanner = this.s;
    const text = s.text;
    const end = s.lineEnd;
    const start = s.lineStart;
    const keywordStart = start + 2;
    let keyword = '';
    if (text.charCodeAt(start + 1) === CH_SPACE && keywordStart + 4 <= end) {
      const candidate = text.slice(keywordStart, keywordStart + 4);
      if (candidate === 'HELP' || candidate === 'TYPE' || candidate === 'UNIT') keyword = candidate;
    }
    if (keyword === '' || (keywordStart + 4 < end && text.charCodeAt(keywordStart + 4) !== CH_SPACE)) {
      s.fail(
        'a line starting with "#" must be "# HELP", "# TYPE", "# UNIT" or "# EOF"; OpenMetrics has no comments',
      );
    }
    s.pos = keywordStart + 5;
    if (s.pos > end) s.fail(`expected a metric name after "# ${keyword}"`, end);
    const name = s.readMetricName();
    if (name === '') s.fail(`expected a metric name after "# ${keyword} ", found ${s.describe()}`);
    if (s.pos >= end || text.charCodeAt(s.pos) !== CH_SPACE) {
      const what = keyword === 'HELP' ? 'help text' : keyword === 'TYPE' ? 'type' : 'unit';
      s.fail(`expected a space and the ${what} after "# ${keyword} ${name}", found ${s.describe()}`);
    }
    const restStart = s.pos + 1;

    let entry = this.current;
    if (entry !== undefined && entry.family.name === name) {
      if (entry.family.samples.length > 0) {
        s.fail(`# ${keyword} for "${name}" comes after its samples; metadata must precede them`, start);
      }
    } else {
      this.closeFamily();
      entry = this.openFamily(name);
    }
    const family = entry.family;
    if (keyword === 'HELP') {
      if (entry.helpLine > 0)
        s.fail(`second # HELP for "${name}" (the first is on line ${entry.helpLine})`, start);
      family.help = s.own(
        s.hasBackslash(restStart, end)
          ? unescapeHelp(text, restStart, end, true)
          : text.slice(restStart, end),
      );
      entry.helpLine = s.lineNo;
    } else if (keyword === 'UNIT') {
      if (entry.unitLine > 0)
        s.fail(`second # UNIT for "${name}" (the first is on line ${entry.unitLine})`, start);
      const unit = s.own(text.slice(restStart, end));
      if (unit !== '' && !name.endsWith('_' + unit)) {
        s.fail(
          `the metric name "${name}" must end with "_${unit}" to carry the unit ${JSON.stringify(unit)}`,
          restStart,
        );
      }
      this.checkUnitAllowed(unit, entry.declaredType, restStart);
      family.unit = unit;
      entry.unitLine = s.lineNo;
    } else {
      if (entry.typeLine > 0)
        s.fail(`second # TYPE for "${name}" (the first is on line ${entry.typeLine})`, start);
      const type = text.slice(restStart, end);
      if (!OPENMETRICS_TYPES.has(type)) {
        s.fail(
          `unknown metric type ${JSON.stringify(type)}` +
            (type === 'untyped' ? ' (OpenMetrics calls it "unknown")' : '') +
            '; OpenMetrics knows counter, gauge, histogram, gaugehistogram, summary, info, stateset and unknown',
          restStart,
        );
      }
      entry.declaredType = type as MetricType;
      family.type = entry.declaredType;
      if (family.unit !== undefined) this.checkUnitAllowed(family.unit, entry.declaredType, restStart);
      const roles = rolesOf(entry.declaredType);
      entry.sampleNames = roles.map((role) => name + roleSuffix(role));
      entry.sampleRoles = [...roles];
      entry.typeLine = s.lineNo;
      this.lastSampleName = '';
      this.lastRole = -1;
    }
  }

  private checkUnitAllowed(unit: string, type: MetricType | undefined, at: number): void {
    if (unit !== '' && (type === 'info' || type === 'stateset')) {
      this.s.fail(`${type} metrics cannot have a unit`, at);
    }
  }

  private sample(): void {
    const s: ExpositionScanner = this.s;
    const text = s.text;
    const end = s.lineEnd;
    let name: string;
    let labels = s.lookupSeries();
    if (labels !== undefined) {
      name = s.seriesName;
    } else {
      name = s.readMetricName();
      if (name === '') {
        s.fail(
          text.charCodeAt(s.pos) === CH_LBRACE
            ? "expected a metric name before '{' (quoted UTF-8 metric names are not supported)"
            : `expected a metric name, found ${s.describe()}`,
        );
      }
      if (s.pos < end && text.charCodeAt(s.pos) === CH_LBRACE) {
        labels = s.readLabelSet(true, true);
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
    if (s.pos >= end || text.charCodeAt(s.pos) !== CH_SPACE) {
      s.fail(
        `expected a single space and the value after "${name}", found ${s.describe()}${nameHint(text, s.pos, end)}`,
      );
    }
    const valueStart = s.pos + 1;
    const valueEnd = spaceOrEnd(text, valueStart, end);
    if (valueStart === valueEnd)
      s.fail(`expected a value after "${name}", found ${s.describe(valueStart)}`, valueStart);
    const value = parseFloatToken(text, valueStart, valueEnd);
    if (value === undefined) s.fail(invalidNumber('value', text.slice(valueStart, valueEnd)), valueStart);

    let timestampMs: number | undefined;
    let exemplar: Exemplar | undefined;
    let i = valueEnd;
    if (i < end) {
      i++;
      if (text.charCodeAt(i) !== CH_HASH) {
        const tsEnd = spaceOrEnd(text, i, end);
        timestampMs = this.timestamp(i, tsEnd);
        i = tsEnd;
        if (i < end) {
          i++;
          if (i === end) s.fail('trailing blank after the timestamp', i - 1);
          if (text.charCodeAt(i) !== CH_HASH) {
            s.fail(
              `found ${s.describe(i)} after the timestamp; only an exemplar (" # {labels} value") may follow it`,
              i,
            );
          }
        }
      }
      if (i < end) exemplar = this.exemplar(i);
    }

    let entry = this.current;
    let role = -1;
    if (entry !== undefined) {
      if (name === this.lastSampleName) {
        role = this.lastRole;
      } else {
        const at = entry.sampleNames.indexOf(name);
        if (at >= 0) role = entry.sampleRoles[at];
      }
    }
    if (entry === undefined || role < 0) {
      // Not a sample of the current family: it starts an unknown family of its own.
      this.closeFamily();
      entry = this.openFamily(name);
      entry.declaredType = 'unknown';
      role = ROLE_BASE;
    }
    this.lastSampleName = name;
    this.lastRole = role;
    const family = entry.family;
    if (!entry.checking) {
      this.rules.begin(family.name, family.type);
      entry.checking = true;
    }
    this.rules.sample(role, labels, value, timestampMs, exemplar, valueStart);

    const sample: Sample = new ParsedSample(name, labels, value);
    if (timestampMs !== undefined) sample.timestampMs = timestampMs;
    if (exemplar !== undefined) sample.exemplar = exemplar;
    family.samples.push(sample);
    this.sampleCount++;
  }

  private timestamp(start: number, end: number): number {
    const s: ExpositionScanner = this.s;
    if (start === end) {
      s.fail(
        `expected a timestamp after the space, found ${s.describe(start)} (trailing blanks are not allowed)`,
        start,
      );
    }
    const ms = parseSecondsTimestampMs(s.text, start, end);
    if (ms === undefined) {
      s.fail(
        `invalid timestamp ${JSON.stringify(s.text.slice(start, end))}: OpenMetrics wants seconds since the epoch ` +
          'as a decimal number (no NaN or Inf)',
        start,
      );
    }
    return ms;
  }

  /** Reads " # {labels} value [timestamp]" from the '#' at `at` to the end of the line. */
  private exemplar(at: number): Exemplar {
    const s: ExpositionScanner = this.s;
    const text = s.text;
    const end = s.lineEnd;
    if (text.charCodeAt(at + 1) !== CH_SPACE || at + 2 >= end || text.charCodeAt(at + 2) !== CH_LBRACE) {
      s.fail('an exemplar is written " # {labels} value [timestamp]"', at);
    }
    s.pos = at + 2;
    const labels = s.readLabelSet(true, false);
    if (s.pos >= end || text.charCodeAt(s.pos) !== CH_SPACE) {
      s.fail(`expected a space and the exemplar value, found ${s.describe()}`);
    }
    const valueStart = s.pos + 1;
    const valueEnd = spaceOrEnd(text, valueStart, end);
    if (valueStart === valueEnd)
      s.fail(`expected the exemplar value, found ${s.describe(valueStart)}`, valueStart);
    const value = parseFloatToken(text, valueStart, valueEnd);
    if (value === undefined)
      s.fail(invalidNumber('exemplar value', text.slice(valueStart, valueEnd)), valueStart);
    const exemplar: Exemplar = { labels, value };
    if (valueEnd < end) {
      const tsStart = valueEnd + 1;
      const tsEnd = spaceOrEnd(text, tsStart, end);
      exemplar.timestampMs = this.timestamp(tsStart, tsEnd);
      if (tsEnd < end)
        s.fail(`found ${s.describe(tsEnd)} after the exemplar timestamp, which must end the line`, tsEnd);
    }
    return exemplar;
  }
}

function spaceOrEnd(text: string, i: number, end: number): number {
  while (i < end && text.charCodeAt(i) !== CH_SPACE) i++;
  return i;
}

/** Hint for a character that ended a metric name early ("a.b 1"). */
function nameHint(text: string, at: number, end: number): string {
  if (at >= end) return '';
  const c = text.charCodeAt(at);
  return c > 32 && c !== 123 && c < 127 ? '; metric names match [a-zA-Z_:][a-zA-Z0-9_:]*' : '';
}
