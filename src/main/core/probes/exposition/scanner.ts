// Line cursor over an exposition, with what both dialects share: metric-name and label-set readers and the
// series-cache lookup. Positions are UTF-16 indexes into the input; errors carry 1-based line and column.

import { ExpositionParseError, type ExpositionFormat } from './types';
import { detach, type CachedSeries, type SeriesCache } from './series-cache';
import * as lexical from './lexical';
import { describeInvalidUtf8, utf16Column, type InvalidUtf8 } from './utf8';

// Bound once to local constants: loaders that compile ESM to CommonJS (tsx, vite-node) turn every access to an
// imported binding into a getter call, which dominated the profile of the hot loops.
const {
  CH_BACKSLASH,
  CH_COMMA,
  CH_EQUALS,
  CH_QUOTE,
  CH_RBRACE,
  CH_SPACE,
  CH_TAB,
  describeChar,
  isLabelNameChar,
  isLabelNameStart,
  isMetricNameChar,
  isMetricNameStart,
  parseFloatToken,
  unescapeLabelValue,
} = lexical;

const hasOwn = Object.prototype.hasOwnProperty;

export class ExpositionScanner {
  readonly text: string;
  readonly format: ExpositionFormat;
  private readonly length: number;

  /** 1-based number of the current line (0 before the first call to nextLine). */
  lineNo = 0;
  /** Index of the first character of the current line. */
  lineStart = 0;
  /** Index of the current line's '\n', or the text length for an unterminated last line. */
  lineEnd = -1;
  /** True when the current line is the last one and no '\n' ends it. */
  unterminated = false;
  /** Read position inside the current line. */
  pos = 0;

  /** Names, raw-value positions and values of the last sample label set read, in text order. */
  labelNames: string[] = [];
  labelValues: string[] = [];
  labelValueStarts: number[] = [];
  labelCount = 0;
  // The previous sample's label set (the arrays are swapped, not reallocated, for each sample). Consecutive
  // lines usually repeat the same names: reusing those strings and copying the previous object is cheaper
  // than building a new one.
  private spareNames: string[] = [];
  private spareValues: string[] = [];
  private spareValueStarts: number[] = [];
  private previousLabels: Record<string, string> | undefined;
  private exemplarNames: string[] = [];
  private exemplarValues: string[] = [];
  private exemplarValueStarts: number[] = [];
  /** Index of the next backslash at or after the last query, -1 when none is left (see hasBackslash). */
  private nextBackslash: number;
  /** Same for '}', which ends the series text of a labeled sample (see lookupSeries). */
  private nextBrace: number;
  // The series text of the current line that missed the cache, to be remembered once it parsed.
  private seriesStart = -1;
  private seriesClose = -1;
  private seriesKey = '';
  /** Metric name of the series found by lookupSeries or stored by rememberSeries. */
  seriesName = '';
  /** Cache entry of the current sample's series, if it has one. */
  seriesEntry: CachedSeries | undefined;
  /** Cache entry of the previous labeled sample. */
  private lastEntry: CachedSeries | undefined;
  /** Lines of the input bytes that were not UTF-8 (see checkUtf8), and the next one not yet passed. */
  private readonly invalidUtf8: InvalidUtf8 | undefined;
  private invalidIndex = 0;
  private nextInvalidLine: number;
  /** The target's series cache; undefined parses uncached (a one-off parse, or a disposed cache). */
  private readonly cache: SeriesCache | undefined;
  private readonly parseNumber: number;

  constructor(
    text: string,
    format: ExpositionFormat,
    invalidUtf8: InvalidUtf8 | undefined,
    cache: SeriesCache | undefined,
  ) {
    this.text = text;
    this.format = format;
    this.length = text.length;
    this.cache = cache !== undefined && cache.beginParse(format) ? cache : undefined;
    this.parseNumber = this.cache?.parseNumber ?? 0;
    this.nextBackslash = text.indexOf('\\');
    this.nextBrace = text.indexOf('}');
    this.invalidUtf8 = invalidUtf8;
    this.nextInvalidLine = invalidUtf8?.lines[0] ?? Infinity;
  }

  /**
   * Fails when the current line held bytes that are not UTF-8 (the text was decoded from bytes and they became
   * U+FFFD). Called for every line whose content counts; lines it is not called for (plain comments in
   * Prometheus text, which Prometheus does not check either) may hold such bytes.
   */
  checkUtf8(): void {
    if (this.nextInvalidLine > this.lineNo) return;
    const invalid = this.invalidUtf8 as InvalidUtf8;
    let k = this.invalidIndex;
    while (k < invalid.lines.length && invalid.lines[k] < this.lineNo) k++;
    this.invalidIndex = k;
    this.nextInvalidLine = k < invalid.lines.length ? invalid.lines[k] : Infinity;
    if (this.nextInvalidLine !== this.lineNo) return;
    const offset = invalid.byteOffsets[k];
    throw new ExpositionParseError(
      `invalid UTF-8: ${describeInvalidUtf8(invalid.bytes, offset)} (byte offset ${offset}). An exposition ` +
        'must be UTF-8 text; read as U+FFFD, label values that differ in such bytes would become one series. ' +
        'Fix what the exporter writes here.',
      this.lineNo,
      utf16Column(invalid.bytes, offset),
      this.format,
    );
  }

  /** Advances to the next line; false at the end of the input. */
  nextLine(): boolean {
    const start = this.lineEnd + 1;
    if (start >= this.length) return false;
    let end = this.text.indexOf('\n', start);
    this.unterminated = end === -1;
    if (end === -1) end = this.length;
    this.lineNo++;
    this.lineStart = start;
    this.lineEnd = end;
    this.pos = start;
    return true;
  }

  /** Throws an ExpositionParseError at index `at` of the current line. */
  fail(message: string, at: number = this.pos): never {
    throw new ExpositionParseError(message, this.lineNo, at - this.lineStart + 1, this.format);
  }

  /** Throws an ExpositionParseError at a remembered place (for rules checked after the offending line). */
  failAt(line: number, column: number, message: string): never {
    throw new ExpositionParseError(message, line, column, this.format);
  }

  /** Describes the character at `at` (default: the read position) for error messages. */
  describe(at: number = this.pos): string {
    return describeChar(this.text, at, this.lineEnd);
  }

  charAt(at: number): number {
    return at < this.lineEnd ? this.text.charCodeAt(at) : -1;
  }

  skipBlanks(): void {
    const text = this.text;
    const end = this.lineEnd;
    let i = this.pos;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c !== CH_SPACE && c !== CH_TAB) break;
      i++;
    }
    this.pos = i;
  }

  /**
   * Reads a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) at the read position. Returns '' and leaves the position
   * unchanged when no name starts there.
   */
  readMetricName(): string {
    const text = this.text;
    const start = this.pos;
    const end = this.lineEnd;
    if (start >= end || !isMetricNameStart(text.charCodeAt(start))) return '';
    let i = start + 1;
    while (i < end && isMetricNameChar(text.charCodeAt(i))) i++;
    this.pos = i;
    return this.own(text.slice(start, i));
  }

  /** A string read from the text that outlives the parse, as the target's own copy (see SeriesCache.intern). */
  own(s: string): string {
    return this.cache === undefined ? s : this.cache.intern(s);
  }

  /** Marks the current sample as having no labels. */
  clearLabels(): void {
    this.labelCount = 0;
    this.previousLabels = undefined;
    this.seriesEntry = undefined;
  }

  /**
   * Reads a label set starting at the '{' under the read position and returns it as an object; the position
   * ends after the '}'. `strict` is OpenMetrics: no blanks anywhere and no trailing comma. Prometheus text
   * (expfmt) allows blanks around names, '=' and ',' and one trailing comma. When `record` is true the
   * names and values are also left in labelNames/labelValues (sample labels; exemplar labels pass false).
   */
  readLabelSet(strict: boolean, record: boolean): Record<string, string> {
    const text = this.text;
    const end = this.lineEnd;
    const previousNames = this.labelNames;
    const previousValues = this.labelValues;
    const previousCount = record ? this.labelCount : 0;
    let names: string[];
    let values: string[];
    let valueStarts: number[];
    if (record) {
      this.takeScratch();
      names = this.labelNames;
      values = this.labelValues;
      valueStarts = this.labelValueStarts;
    } else {
      names = this.exemplarNames;
      values = this.exemplarValues;
      valueStarts = this.exemplarValueStarts;
    }
    const openBrace = this.pos;
    let count = 0;
    // True while every name so far is the previous label set's name in the same slot.
    let sameNames = true;
    let i = openBrace + 1;
    if (!strict) i = this.skipBlanksFrom(i);
    if (i < end && text.charCodeAt(i) === CH_RBRACE) {
      this.pos = i + 1;
      return {};
    }
    for (;;) {
      // Label name; the previous line's string when it is the same name in the same slot, which keeps the
      // object keys pointer-equal (cheap property stores) and tells whether the previous object can be copied.
      const nameStart = i;
      if (i >= end) this.fail("unterminated label set: expected '}' before the end of the line", openBrace);
      if (!isLabelNameStart(text.charCodeAt(i)))
        this.fail(`expected a label name, found ${this.describe(i)}`, i);
      i++;
      while (i < end && isLabelNameChar(text.charCodeAt(i))) i++;
      let name = text.slice(nameStart, i);
      if (count < previousCount && name === previousNames[count]) {
        name = previousNames[count];
      } else {
        sameNames = false;
        if (name === '__name__')
          this.fail('label name "__name__" is reserved for the metric name', nameStart);
      }
      if (!strict) i = this.skipBlanksFrom(i);
      if (i >= end || text.charCodeAt(i) !== CH_EQUALS) {
        this.fail(`expected '=' after label name "${name}", found ${this.describe(i)}`, i);
      }
      i++;
      if (!strict) i = this.skipBlanksFrom(i);
      if (i >= end || text.charCodeAt(i) !== CH_QUOTE) {
        this.fail(`expected '"' to open the value of label "${name}", found ${this.describe(i)}`, i);
      }
      const openQuote = i;
      const valueStart = i + 1;
      // Find the closing quote natively; only a backslash before it needs the character-by-character path.
      let valueEnd = text.indexOf('"', valueStart);
      const escaped = valueEnd !== -1 && this.hasBackslash(valueStart, valueEnd);
      if (escaped) valueEnd = closingQuote(text, valueStart, end);
      if (valueEnd === -1 || valueEnd >= end) {
        this.fail(`unterminated value of label "${name}": no closing '"' on this line`, openQuote);
      }
      const value = escaped
        ? unescapeLabelValue(text, valueStart, valueEnd)
        : text.slice(valueStart, valueEnd);
      i = valueEnd + 1;
      names[count] = name;
      values[count] = value;
      valueStarts[count] = valueStart;
      count++;
      if (!strict) i = this.skipBlanksFrom(i);
      const c = i < end ? text.charCodeAt(i) : -1;
      if (c === CH_RBRACE) {
        i++;
        break;
      }
      if (c !== CH_COMMA) {
        this.fail(`expected ',' or '}' after the value of label "${name}", found ${this.describe(i)}`, i);
      }
      i++;
      if (!strict) {
        i = this.skipBlanksFrom(i);
        if (i < end && text.charCodeAt(i) === CH_RBRACE) {
          i++;
          break;
        }
      }
    }
    this.pos = i;
    let labels: Record<string, string>;
    if (sameNames && count === previousCount && this.previousLabels !== undefined) {
      // Same names as the previous sample (buckets of one series, gauges sharing a label set): copying its
      // object keeps V8's hidden class and is much cheaper than adding the properties one by one.
      labels = { ...this.previousLabels };
      for (let k = 0; k < count; k++) {
        if (values[k] !== previousValues[k]) setLabel(labels, names[k], values[k]);
      }
    } else {
      labels = {};
      for (let k = 0; k < count; k++) {
        const name = names[k];
        if (labels[name] !== undefined && hasOwn.call(labels, name)) {
          this.fail(`label "${name}" appears twice in one label set`, valueStarts[k] - name.length - 2);
        }
        setLabel(labels, name, values[k]);
      }
    }
    if (record) {
      this.labelCount = count;
      this.previousLabels = labels;
    }
    return labels;
  }

  /** Makes the spare label arrays current (to be filled) and keeps the current ones as the previous set. */
  private takeScratch(): void {
    const names = this.spareNames;
    const values = this.spareValues;
    const valueStarts = this.spareValueStarts;
    this.spareNames = this.labelNames;
    this.spareValues = this.labelValues;
    this.spareValueStarts = this.labelValueStarts;
    this.labelNames = names;
    this.labelValues = values;
    this.labelValueStarts = valueStarts;
    this.labelCount = 0;
  }

  /**
   * Looks up the series text at the read position (from the metric name through the line's first '}') in
   * the series cache; without one it returns undefined at once. On a hit the read position moves past it,
   * the label arrays are filled, seriesName is set and the entry's (frozen, shared) labels are returned. On
   * a miss nothing moves; rememberSeries may store the parse afterwards. A key is only ever stored as the
   * complete series text of a line whose label set closed at its first '}', so equal text parses identically
   * whatever follows it.
   */
  lookupSeries(): Record<string, string> | undefined {
    this.seriesStart = -1;
    this.seriesEntry = undefined;
    const cache = this.cache;
    if (cache === undefined) return undefined;
    const start = this.pos;
    let close = this.nextBrace;
    if (close !== -1 && close < start) close = this.nextBrace = this.text.indexOf('}', start);
    if (close === -1 || close >= this.lineEnd) return undefined;
    const key = this.text.slice(start, close + 1);
    // Series come in the same order scrape after scrape, so the series that followed the previous one last
    // time is usually this one: comparing with it costs no hashing of the key.
    const predicted = this.lastEntry?.next;
    let hit: CachedSeries | undefined;
    if (predicted !== undefined && predicted.key === key) {
      hit = predicted;
    } else {
      hit = cache.get(key);
      if (hit !== undefined && this.lastEntry !== undefined) this.lastEntry.next = hit;
    }
    if (hit === undefined) {
      if (!cache.admit(key)) return undefined;
      this.seriesStart = start;
      this.seriesClose = close;
      this.seriesKey = key;
      return undefined;
    }
    hit.seen = this.parseNumber;
    cache.hits++;
    this.lastEntry = hit;
    this.seriesEntry = hit;
    this.takeScratch();
    const names = this.labelNames;
    const values = this.labelValues;
    const valueStarts = this.labelValueStarts;
    const count = hit.names.length;
    for (let k = 0; k < count; k++) {
      names[k] = hit.names[k];
      values[k] = hit.values[k];
      valueStarts[k] = start + hit.valueOffsets[k];
    }
    this.labelCount = count;
    this.pos = close + 1;
    this.seriesName = hit.name;
    // The entry's own frozen label set: every sample of this series, in this scrape and the next ones, gets
    // the same object instead of a copy per sample per scrape.
    this.previousLabels = hit.labels;
    return hit.labels;
  }

  /**
   * After a miss of lookupSeries, stores the series just read (name and label set ending at the read
   * position) and returns its labels (frozen, shared by later hits) that share no memory with the scrape;
   * seriesName is set.
   * Returns undefined when the label set did not end at the line's first '}' (a '}' inside a value).
   */
  rememberSeries(name: string): Record<string, string> | undefined {
    const start = this.seriesStart;
    const cache = this.cache;
    if (start === -1 || cache === undefined || this.pos !== this.seriesClose + 1) return undefined;
    this.seriesStart = -1;
    const count = this.labelCount;
    const names: string[] = new Array<string>(count);
    const values: string[] = new Array<string>(count);
    const valueOffsets: number[] = new Array<number>(count);
    const template: Record<string, string> = {};
    for (let k = 0; k < count; k++) {
      names[k] = detach(this.labelNames[k]);
      values[k] = detach(this.labelValues[k]);
      valueOffsets[k] = this.labelValueStarts[k] - start;
      setLabel(template, names[k], values[k]);
      // later lines compare against these copies, so that they too stop referring to the scrape
      this.labelNames[k] = names[k];
      this.labelValues[k] = values[k];
    }
    // Frozen: samples share it (see CachedSeries.labels), so a caller that tried to change one would change
    // them all; freezing makes that an error instead.
    Object.freeze(template);
    const entry: CachedSeries = {
      key: detach(this.seriesKey),
      // Already the cache's own copy: readMetricName interns what it reads (see own).
      name,
      labels: template,
      names,
      values,
      valueOffsets,
      le: undefined,
      quantile: undefined,
      next: undefined,
      seen: this.parseNumber,
      groupKey: undefined,
      groupKeyExcluded: '',
    };
    cache.set(entry);
    if (this.lastEntry !== undefined) this.lastEntry.next = entry;
    this.lastEntry = entry;
    this.seriesEntry = entry;
    this.seriesName = entry.name;
    this.previousLabels = template;
    return template;
  }

  /** The `le` label value `raw` of the current sample read as a float, or null; memoised per cached series. */
  leBound(raw: string): number | null {
    const entry = this.seriesEntry;
    if (entry !== undefined && entry.le !== undefined) return entry.le;
    const value = parseFloatToken(raw, 0, raw.length) ?? null;
    if (entry !== undefined) entry.le = value;
    return value;
  }

  /** The `quantile` label value `raw` of the current sample read as a float, or null; memoised likewise. */
  quantileValue(raw: string): number | null {
    const entry = this.seriesEntry;
    if (entry !== undefined && entry.quantile !== undefined) return entry.quantile;
    const value = parseFloatToken(raw, 0, raw.length) ?? null;
    if (entry !== undefined) entry.quantile = value;
    return value;
  }

  /**
   * Whether text[start, end) holds a backslash. Queries move forward through the text, so remembering the
   * next backslash keeps the whole parse linear while most queries cost one comparison.
   */
  hasBackslash(start: number, end: number): boolean {
    let next = this.nextBackslash;
    if (next !== -1 && next < start) next = this.nextBackslash = this.text.indexOf('\\', start);
    return next !== -1 && next < end;
  }

  /** Index in the line of the raw value of recorded label `name`, or -1. */
  labelValueStart(name: string): number {
    for (let k = 0; k < this.labelCount; k++)
      if (this.labelNames[k] === name) return this.labelValueStarts[k];
    return -1;
  }

  private skipBlanksFrom(i: number): number {
    const text = this.text;
    const end = this.lineEnd;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c !== CH_SPACE && c !== CH_TAB) break;
      i++;
    }
    return i;
  }
}

/** Closing quote of a label value that contains escapes, or -1 when the line ends first. */
function closingQuote(text: string, i: number, end: number): number {
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === CH_QUOTE) return i;
    i += c === CH_BACKSLASH ? 2 : 1;
  }
  return -1;
}

function setLabel(labels: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__') {
    // A plain assignment would hit the prototype setter and silently drop the label.
    Object.defineProperty(labels, name, { value, enumerable: true, writable: true, configurable: true });
  } else {
    labels[name] = value;
  }
}
