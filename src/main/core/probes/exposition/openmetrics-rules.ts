// The per-family rules of OpenMetrics 1.0 that go beyond the line grammar: which labels a sample of each
// type needs, contiguous metric groups with non-decreasing timestamps, histogram bucket structure, and the
// value rules (counter-like samples neither NaN nor negative). The checks and their order follow the
// reference parser of the OpenMetrics suite (prometheus_client's openmetrics/parser.py).

import type { ExpositionScanner } from './scanner';
import type { Exemplar, MetricType } from './types';
import * as lexical from './lexical';

// Bound once to local constants: loaders that compile ESM to CommonJS (tsx, vite-node) turn every access to an
// imported binding into a getter call, which dominated the profile of the hot loops.
const { codePointLength, isCanonicalInfinity } = lexical;

/** What a sample is within its family, from its name suffix. */
export const ROLE_BASE = 0;
export const ROLE_TOTAL = 1;
export const ROLE_CREATED = 2;
export const ROLE_COUNT = 3;
export const ROLE_SUM = 4;
export const ROLE_BUCKET = 5;
export const ROLE_GCOUNT = 6;
export const ROLE_GSUM = 7;
export const ROLE_INFO = 8;

const ROLE_SUFFIX = ['', '_total', '_created', '_count', '_sum', '_bucket', '_gcount', '_gsum', '_info'];

/** Sample-name suffixes each type allows, as roles. Types not listed allow only the bare family name. */
export const TYPE_ROLES: Readonly<Partial<Record<MetricType, readonly number[]>>> = {
  counter: [ROLE_TOTAL, ROLE_CREATED],
  summary: [ROLE_BASE, ROLE_COUNT, ROLE_SUM, ROLE_CREATED],
  histogram: [ROLE_COUNT, ROLE_SUM, ROLE_BUCKET, ROLE_CREATED],
  gaugehistogram: [ROLE_GCOUNT, ROLE_GSUM, ROLE_BUCKET],
  info: [ROLE_INFO],
};

const BASE_ONLY: readonly number[] = [ROLE_BASE];

export function rolesOf(type: MetricType | undefined): readonly number[] {
  return (type !== undefined && TYPE_ROLES[type]) || BASE_ONLY;
}

export function roleSuffix(role: number): string {
  return ROLE_SUFFIX[role];
}

const MAX_EXEMPLAR_LABEL_CHARS = 128;

export interface OpenMetricsRuleOptions {
  /** Enforce the value rules (see ParseOptions.openMetricsValueRules). */
  valueRules: boolean;
}

export class OpenMetricsFamilyRules {
  private readonly s: ExpositionScanner;
  private readonly valueRules: boolean;
  private name = '';
  private type: MetricType = 'unknown';

  // The metric group (label set without le/quantile/the stateset label) the last sample belonged to.
  private seenGroups = new Set<string>();
  private hasGroup = false;
  private groupNames: string[] = [];
  private groupValues: string[] = [];
  private groupSize = 0;
  private groupExcluded = '';
  private groupTimestamp: number | undefined;

  // One histogram "run": consecutive samples of one group with one timestamp.
  private runActive = false;
  private runLine = 0;
  private runTimestamp: number | undefined;
  private runLastLe = -Infinity;
  private runHasBucket = false;
  private runLastBucketValue = 0;
  private runCount: number | undefined;
  private runCountLine = 0;
  private runSumLine = 0;
  private runGsumLine = 0;
  private runNegativeBuckets = false;
  private runNegativeGsum = false;

  constructor(scanner: ExpositionScanner, options: OpenMetricsRuleOptions) {
    this.s = scanner;
    this.valueRules = options.valueRules;
  }

  /** Starts checking a family; called before its first sample, once its type is final. */
  begin(name: string, type: MetricType): void {
    this.name = name;
    this.type = type;
    this.seenGroups = new Set();
    this.hasGroup = false;
    this.groupTimestamp = undefined;
    this.runActive = false;
  }

  /**
   * Checks one sample of the current line against the family's rules. The scanner still holds the sample's
   * label names and values; `valueStart` is where the value is written (for error columns).
   */
  sample(
    role: number,
    labels: Record<string, string>,
    value: number,
    timestampMs: number | undefined,
    exemplar: Exemplar | undefined,
    valueStart: number,
  ): void {
    const s: ExpositionScanner = this.s;
    const type = this.type;
    const name = this.name;

    if (type === 'stateset' && !Object.prototype.hasOwnProperty.call(labels, name)) {
      s.fail(`a stateset sample needs a label named after its family ("${name}")`, s.lineStart);
    }
    let le = NaN;
    if (role === ROLE_BUCKET) {
      le = this.bucketBound(labels);
      if (!Number.isInteger(value))
        s.fail(`bucket counts must be integers, found ${formatValue(value)}`, valueStart);
    } else if (role === ROLE_COUNT || role === ROLE_GCOUNT) {
      if (!Number.isInteger(value))
        s.fail(`${roleSuffix(role)} must be an integer, found ${formatValue(value)}`, valueStart);
    } else if (type === 'summary' && role === ROLE_BASE) {
      this.checkQuantile(labels);
    }

    this.checkGroup(role, timestampMs);

    if (type === 'stateset' && value !== 0 && value !== 1) {
      s.fail(`stateset values must be 0 or 1, found ${formatValue(value)}`, valueStart);
    }
    if (type === 'info' && value !== 1)
      s.fail(`info values must be 1, found ${formatValue(value)}`, valueStart);
    if (this.valueRules) this.checkValue(role, value, valueStart);
    if (exemplar !== undefined && role !== ROLE_BUCKET && role !== ROLE_TOTAL) {
      s.fail(
        'exemplars are only allowed on the _bucket samples of histograms and gaugehistograms and the _total ' +
          `samples of counters, not on "${name}${roleSuffix(role)}" (${type})`,
        valueStart,
      );
    }
    if (exemplar !== undefined) this.checkExemplarLength(exemplar);

    if (type === 'histogram' || type === 'gaugehistogram') this.histogramSample(role, value, le, valueStart);
  }

  /** Ends the current family: the last histogram run still has to be complete. */
  finish(): void {
    if (this.runActive) this.finishRun();
    this.runActive = false;
  }

  private bucketBound(labels: Record<string, string>): number {
    const s: ExpositionScanner = this.s;
    const raw = labels.le;
    const at = s.labelValueStart('le');
    if (raw === undefined) s.fail(`a ${this.type} _bucket sample needs an "le" label`, s.lineStart);
    const le = s.leBound(raw);
    if (le === null || Number.isNaN(le)) s.fail(`bucket bound le=${JSON.stringify(raw)} is not a number`, at);
    if ((le === Infinity || le === -Infinity) && !isCanonicalInfinity(raw)) {
      s.fail(`bucket bound le=${JSON.stringify(raw)} must be written "+Inf" or "-Inf"`, at);
    }
    return le;
  }

  private checkQuantile(labels: Record<string, string>): void {
    const s: ExpositionScanner = this.s;
    const raw = labels.quantile;
    if (raw === undefined) s.fail('a summary quantile sample needs a "quantile" label', s.lineStart);
    const q = s.quantileValue(raw);
    if (q === null || !(q >= 0 && q <= 1)) {
      s.fail(
        `quantile=${JSON.stringify(raw)} is not a number between 0 and 1`,
        s.labelValueStart('quantile'),
      );
    }
  }

  private checkValue(role: number, value: number, valueStart: number): void {
    const s: ExpositionScanner = this.s;
    if (this.type === 'summary' && role === ROLE_BASE && value < 0) {
      s.fail(`quantile values cannot be negative, found ${formatValue(value)}`, valueStart);
    }
    const counterLike =
      role === ROLE_TOTAL ||
      role === ROLE_SUM ||
      role === ROLE_COUNT ||
      role === ROLE_BUCKET ||
      role === ROLE_GCOUNT ||
      role === ROLE_GSUM;
    if (!counterLike) return;
    if (Number.isNaN(value)) s.fail(`${roleSuffix(role)} is counter-like and cannot be NaN`, valueStart);
    if (value < 0 && role !== ROLE_GSUM) {
      s.fail(
        `${roleSuffix(role)} is counter-like and cannot be negative, found ${formatValue(value)}`,
        valueStart,
      );
    }
  }

  private checkExemplarLength(exemplar: Exemplar): void {
    let chars = 0;
    for (const key of Object.keys(exemplar.labels))
      chars += codePointLength(key) + codePointLength(exemplar.labels[key]);
    if (chars > MAX_EXEMPLAR_LABEL_CHARS) {
      this.s.fail(
        `exemplar labels are ${chars} characters long; OpenMetrics allows at most ${MAX_EXEMPLAR_LABEL_CHARS}`,
        this.s.lineStart,
      );
    }
  }

  /** Samples of one group must be contiguous, with non-decreasing timestamps, all with or all without one. */
  private checkGroup(role: number, timestampMs: number | undefined): void {
    const s: ExpositionScanner = this.s;
    const type = this.type;
    const excluded =
      role === ROLE_BUCKET
        ? 'le'
        : type === 'summary' && role === ROLE_BASE
          ? 'quantile'
          : type === 'stateset'
            ? this.name
            : '';
    const sameGroup = this.hasGroup && (type === 'info' || this.inCurrentGroup(excluded));
    if (sameGroup) {
      if ((timestampMs === undefined) !== (this.groupTimestamp === undefined)) {
        s.fail('some samples of this metric have a timestamp and others do not', s.lineStart);
      }
      if (
        timestampMs !== undefined &&
        this.groupTimestamp !== undefined &&
        this.groupTimestamp > timestampMs
      ) {
        if (type !== 'info') s.fail('timestamp goes backwards within the same metric', s.lineStart);
      }
    } else {
      const key = type === 'info' ? '' : this.groupKey(excluded);
      if (this.seenGroups.has(key)) {
        s.fail(
          `samples of the label set ${this.describeLabels(excluded)} are interleaved with others; ` +
            'OpenMetrics requires each label set of a family to be contiguous',
          s.lineStart,
        );
      }
      this.seenGroups.add(key);
      this.hasGroup = true;
      this.groupExcluded = excluded;
      let n = 0;
      for (let k = 0; k < s.labelCount; k++) {
        if (s.labelNames[k] === excluded) continue;
        this.groupNames[n] = s.labelNames[k];
        this.groupValues[n] = s.labelValues[k];
        n++;
      }
      this.groupSize = n;
      if (this.runActive) this.finishRun();
      this.runActive = false;
    }
    this.groupTimestamp = timestampMs;
  }

  /** Whether the current sample's labels, `excluded` aside, are those of the current group. */
  private inCurrentGroup(excluded: string): boolean {
    const s: ExpositionScanner = this.s;
    const names = this.groupNames;
    const values = this.groupValues;
    // Fast path: the same names in the same order, as exporters write them.
    let j = 0;
    let k = 0;
    for (; k < s.labelCount; k++) {
      const name = s.labelNames[k];
      if (name === excluded) continue;
      if (j >= this.groupSize || name !== names[j]) break;
      if (s.labelValues[k] !== values[j]) return false;
      j++;
    }
    if (k === s.labelCount) return j === this.groupSize;
    // Same set in another order?
    const group = new Map<string, string>();
    for (let g = 0; g < this.groupSize; g++) group.set(names[g], values[g]);
    let n = 0;
    for (k = 0; k < s.labelCount; k++) {
      const name = s.labelNames[k];
      if (name === excluded) continue;
      if (group.get(name) !== s.labelValues[k]) return false;
      n++;
    }
    return n === this.groupSize;
  }

  /**
   * Canonical text of the current sample's group: sorted names, length-prefixed values so that no two
   * groups collide. Memoised per cached series, since it only depends on its labels and `excluded`.
   */
  private groupKey(excluded: string): string {
    const s: ExpositionScanner = this.s;
    const entry = s.seriesEntry;
    if (entry !== undefined && entry.groupKey !== undefined && entry.groupKeyExcluded === excluded) {
      return entry.groupKey;
    }
    const order: number[] = [];
    let sorted = true;
    for (let k = 0; k < s.labelCount; k++) {
      if (s.labelNames[k] === excluded) continue;
      if (order.length > 0 && s.labelNames[order[order.length - 1]] > s.labelNames[k]) sorted = false;
      order.push(k);
    }
    if (!sorted) {
      order.sort((a, b) =>
        s.labelNames[a] < s.labelNames[b] ? -1 : s.labelNames[a] > s.labelNames[b] ? 1 : 0,
      );
    }
    let key = '';
    for (const k of order) key += `${s.labelNames[k]}=${s.labelValues[k].length}:${s.labelValues[k]},`;
    if (entry !== undefined) {
      entry.groupKey = key;
      entry.groupKeyExcluded = excluded;
    }
    return key;
  }

  /** The current sample's labels without `excluded`, for messages. */
  private describeLabels(excluded: string): string {
    const s: ExpositionScanner = this.s;
    const parts: string[] = [];
    for (let k = 0; k < s.labelCount; k++) {
      if (s.labelNames[k] !== excluded) parts.push(`${s.labelNames[k]}=${JSON.stringify(s.labelValues[k])}`);
    }
    return `{${parts.join(',')}}`;
  }

  private histogramSample(role: number, value: number, le: number, valueStart: number): void {
    const s: ExpositionScanner = this.s;
    const timestampMs = this.groupTimestamp;
    if (this.runActive && timestampMs !== this.runTimestamp) this.finishRun();
    if (!this.runActive) {
      this.runActive = true;
      this.runLine = s.lineNo;
      this.runTimestamp = timestampMs;
      this.runLastLe = -Infinity;
      this.runHasBucket = false;
      this.runLastBucketValue = 0;
      this.runCount = undefined;
      this.runCountLine = 0;
      this.runSumLine = 0;
      this.runGsumLine = 0;
      this.runNegativeBuckets = false;
      this.runNegativeGsum = false;
    }
    switch (role) {
      case ROLE_BUCKET:
        if (this.runHasBucket && le <= this.runLastLe) {
          s.fail(
            `bucket le="${formatValue(le)}" is out of order; buckets must be sorted by increasing le`,
            s.lineStart,
          );
        }
        if (value < this.runLastBucketValue) {
          s.fail(
            `bucket le="${formatValue(le)}" counts ${formatValue(value)}, fewer than the previous bucket ` +
              `(${formatValue(this.runLastBucketValue)}); bucket counts are cumulative`,
            valueStart,
          );
        }
        if (le < 0) this.runNegativeBuckets = true;
        this.runHasBucket = true;
        this.runLastLe = le;
        this.runLastBucketValue = value;
        break;
      case ROLE_COUNT:
      case ROLE_GCOUNT:
        this.runCount = value;
        this.runCountLine = s.lineNo;
        break;
      case ROLE_SUM:
        this.runSumLine = s.lineNo;
        break;
      case ROLE_GSUM:
        this.runGsumLine = s.lineNo;
        if (value < 0) this.runNegativeGsum = true;
        break;
    }
  }

  private finishRun(): void {
    const s: ExpositionScanner = this.s;
    const what = `${this.type} "${this.name}"`;
    const count = this.runCount;
    if (this.runLastLe !== Infinity) s.failAt(this.runLine, 1, `${what} has no le="+Inf" bucket`);
    if (count !== undefined && count !== this.runLastBucketValue) {
      s.failAt(
        this.runCountLine,
        1,
        `${what}: the count ${formatValue(count)} differs from the +Inf bucket ${formatValue(this.runLastBucketValue)}`,
      );
    }
    const sumSuffix = this.type === 'histogram' ? '_sum' : '_gsum';
    const countSuffix = this.type === 'histogram' ? '_count' : '_gcount';
    const sumLine = this.type === 'histogram' ? this.runSumLine : this.runGsumLine;
    if (sumLine > 0 && count === undefined)
      s.failAt(sumLine, 1, `${what} has ${sumSuffix} but no ${countSuffix}`);
    if (this.runSumLine === 0 && this.runGsumLine === 0 && count !== undefined) {
      s.failAt(this.runCountLine, 1, `${what} has ${countSuffix} but no ${sumSuffix}`);
    }
    if (this.valueRules && this.runNegativeBuckets && this.runSumLine > 0) {
      s.failAt(
        this.runSumLine,
        1,
        `${what} has negative buckets, so it must not have a _sum (OpenMetrics 1.0)`,
      );
    }
    if (this.valueRules && !this.runNegativeBuckets && this.runNegativeGsum) {
      s.failAt(this.runGsumLine, 1, `${what} has a negative _gsum but no negative bucket`);
    }
  }
}

function formatValue(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}
