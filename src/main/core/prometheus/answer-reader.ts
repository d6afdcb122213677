// A Prometheus HTTP API answer read as it arrives: the envelope's fields, and for a query the series point by
// point, bounded as they come in — at most `maxSeries` series, at most one point per step of the asked grid
// (more is decimated, and said), at most `maxPoints` kept in all (more is refused and reading stops) — so neither
// the body text nor a parsed tree of a hostile answer is ever held whole. @streamparser/json does the JSON
// (a maintained, dependency-free streaming parser): it hands over only the paths asked for, and with
// keepStack off it keeps nothing of what it handed over. Values that are not numbers become gaps, counted.
import { JSONParser } from '@streamparser/json';
import { z } from 'zod';
import type { PromRangeSeries } from './prom-api';

export interface AnswerBounds {
  /** How the data is read: `series` point by point (query, query_range), `whole` as one value (small answers). */
  shape: 'series' | 'whole';
  /** The grid a range query asked for: points per series are kept to one per step of it. */
  grid?: { startS: number; endS: number; stepS: number };
  maxSeries: number;
  maxPoints: number;
}

/** An answer past a bound: reading stopped; `fix` says what to ask instead. */
export class AnswerLimitError extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
    this.name = 'AnswerLimitError';
  }
}

/** A part of the answer that is not in the Prometheus API's shape. */
export class AnswerShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerShapeError';
  }
}

/** The first bytes of a body, kept for quoting an answer that is not JSON and for the tiny scalar answers. */
const HEAD_BYTES = 64 * 1024;

const labels = z.record(z.string(), z.string());

/** A sample value as Prometheus (Go's strconv) writes it; null for anything else. */
export function promNumber(text: string): number | null {
  if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) return Number(text);
  if (/^nan$/i.test(text)) return NaN;
  const inf = /^([+-]?)inf(?:inity)?$/i.exec(text);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  return null;
}

interface Building {
  metric?: Record<string, string>;
  values: [number, number][];
  /** Grid index of the last kept point (decimation keeps the first point of each step). */
  lastK: number;
  /** Whether points came as `values` (matrix), `value` (vector) or both (neither shape). */
  kind?: 'values' | 'value' | 'mixed';
}

export interface ReadAnswer {
  /** The body was one JSON object. */
  json: boolean;
  /** The first 64 KB as text (the whole body when `complete`). */
  head: string;
  complete: boolean;
  status?: unknown;
  errorType?: unknown;
  error?: unknown;
  warnings?: unknown;
  infos?: unknown;
  /** `whole`: the data field as parsed. */
  data?: unknown;
  /** `series`: the result type and the series read (data absent when neither came). */
  resultType?: unknown;
  series: PromRangeSeries[];
  seriesKind: 'values' | 'value' | 'mixed' | null;
  /** What reading changed, for the result's warnings: points decimated, values that were not numbers. */
  notes: string[];
}

const SERIES_PATHS = [
  '$.status',
  '$.errorType',
  '$.error',
  '$.warnings',
  '$.infos',
  '$.data.resultType',
  '$.data.result.*.metric',
  '$.data.result.*.values.*',
  '$.data.result.*.value',
  '$.data.result.*.histogram',
  '$.data.result.*.histograms.*',
];
const WHOLE_PATHS = ['$.status', '$.errorType', '$.error', '$.warnings', '$.infos', '$.data'];

export class AnswerReader {
  private readonly parser: JSONParser;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private total = 0;
  /** Not JSON (or not whole): the parser stopped, the head is kept for quoting. */
  private broken = false;
  private readonly envelope: Record<string, unknown> = {};
  private readonly building: Building[] = [];
  private kept = 0;
  private offered = 0;
  private dropped = 0;
  private odd = 0;
  private histograms = 0;
  private oddExample = '';

  constructor(private readonly bounds: AnswerBounds) {
    this.parser = new JSONParser({
      paths: bounds.shape === 'series' ? SERIES_PATHS : WHOLE_PATHS,
      keepStack: false,
    });
    this.parser.onValue = ({ value, key, stack }) => {
      if (stack.length === 1 && typeof key === 'string') this.envelope[key] = value;
      else if (stack.length === 2 && stack[1]!.key === 'data' && key === 'resultType')
        this.envelope.resultType = value;
      else this.seriesPart(stack, key, value);
    };
  }

  /** Takes the next chunk; throws AnswerLimitError or AnswerShapeError once the answer is past use. */
  write(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < HEAD_BYTES) {
      const part = chunk.subarray(0, HEAD_BYTES - this.headBytes);
      this.head.push(part);
      this.headBytes += part.length;
    }
    if (!this.broken) this.feed(() => this.parser.write(chunk));
  }

  end(): void {
    if (!this.broken && !this.parser.isEnded) this.feed(() => this.parser.end());
  }

  /** The parser's own errors mean "not JSON"; ours (thrown from onValue, passed through) end the exchange. */
  private feed(step: () => void): void {
    try {
      step();
    } catch (e) {
      this.broken = true;
      if (e instanceof AnswerLimitError || e instanceof AnswerShapeError) throw e;
    }
  }

  result(): ReadAnswer {
    const head = Buffer.concat(this.head).toString('utf8');
    const complete = this.total === this.headBytes;
    const json = !this.broken && this.parser.isEnded && this.isObjectBody(head);
    const kinds = new Set(this.building.flatMap((b) => (b.kind ? [b.kind] : [])));
    const series: PromRangeSeries[] = [];
    for (const [i, b] of this.building.entries()) {
      if (!b?.metric) throw new AnswerShapeError(`series ${i + 1} came without its labels (metric)`);
      series.push({ metric: b.metric, values: b.values });
    }
    const notes: string[] = [];
    if (this.dropped > 0 && this.bounds.grid) {
      const { startS, endS, stepS } = this.bounds.grid;
      const n = Math.floor((endS - startS) / stepS) + 1;
      notes.push(
        `the answer held ${this.offered.toLocaleString('en')} points where the query's grid has ${n.toLocaleString('en')} per series (${series.length.toLocaleString('en')} series): one point per step was kept and ${this.dropped.toLocaleString('en')} were left out (off the grid, repeated or out of order)`,
      );
    }
    if (this.odd > 0)
      notes.push(
        `${this.odd.toLocaleString('en')} value${this.odd === 1 ? ' was' : 's were'} not a number (e.g. ${this.oddExample}) and ${this.odd === 1 ? 'is' : 'are'} shown as gaps`,
      );
    if (this.histograms > 0)
      notes.push(
        `${this.histograms.toLocaleString('en')} native histogram sample${this.histograms === 1 ? ' was' : 's were'} left out (the console reads float samples only)`,
      );
    return {
      json,
      head,
      complete,
      ...this.envelope,
      series,
      seriesKind: kinds.size === 0 ? null : kinds.size > 1 ? 'mixed' : [...kinds][0]!,

      notes,
    };
  }

  /** The body starts with `{` (a JSON array or string at the root is not the API's envelope). */
  private isObjectBody(head: string): boolean {
    return /^\s*\{/.test(head);
  }

  private seriesPart(
    stack: { key?: string | number }[],
    key: string | number | undefined,
    value: unknown,
  ): void {
    // Paths: .data.result.<i>.metric | .data.result.<i>.value | .data.result.<i>.values.<j>
    if (stack[1]?.key !== 'data' || stack[2]?.key !== 'result' || typeof stack[3]?.key !== 'number') return;
    if (stack.length === 4 && typeof key !== 'string') return;
    const index = stack[3].key;
    const b = this.series(index);
    if (stack.length === 4 && key === 'metric') {
      const m = labels.safeParse(value);
      if (!m.success)
        throw new AnswerShapeError(`the labels of series ${index + 1} are not a name → text map`);
      b.metric = m.data;
      return;
    }
    if (
      (stack.length === 4 && key === 'histogram') ||
      (stack.length === 5 && stack[4]?.key === 'histograms')
    ) {
      // Native histogram samples: no signal of the app is one; counted and said, not kept.
      this.histograms++;
      return;
    }
    if (stack.length === 4 && key === 'value') {
      b.kind = b.kind === undefined || b.kind === 'value' ? 'value' : 'mixed';
      this.point(b, value, false);
      return;
    }
    if (stack.length === 5 && stack[4]?.key === 'values') {
      b.kind = b.kind === undefined || b.kind === 'values' ? 'values' : 'mixed';
      this.point(b, value, true);
    }
  }

  private series(index: number): Building {
    let b = this.building[index];
    if (b) return b;
    if (index >= this.bounds.maxSeries)
      throw new AnswerLimitError(
        `the answer holds more than ${this.bounds.maxSeries.toLocaleString('en')} series; stopped reading`,
        'Narrow the query to the series you need (more label matchers, or aggregate with sum/max by the labels you want).',
      );
    b = { values: [], lastK: -Infinity };
    this.building[index] = b;
    return b;
  }

  private point(b: Building, p: unknown, onGrid: boolean): void {
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'number' || typeof p[1] !== 'string')
      throw new AnswerShapeError('a sample is not a [time, "value"] pair');
    this.offered++;
    const t = p[0];
    const grid = onGrid ? this.bounds.grid : undefined;
    if (grid) {
      // The step a point falls in (the epsilon keeps a grid instant computed in floating point in its own step).
      const k = Math.floor((t - grid.startS) / grid.stepS + 1e-6);
      const last = Math.floor((grid.endS - grid.startS) / grid.stepS);
      // One step of slack at each end: engines that align the range to the step (VictoriaMetrics) shift it.
      if (k < -1 || k > last + 1 || k <= b.lastK) {
        this.dropped++;
        return;
      }
      b.lastK = k;
    }
    const v = promNumber(p[1]);
    if (v === null) {
      if (this.odd++ === 0) this.oddExample = JSON.stringify(p[1].slice(0, 24));
      return;
    }
    if (++this.kept > this.bounds.maxPoints)
      throw new AnswerLimitError(
        `the answer holds more than ${this.bounds.maxPoints.toLocaleString('en')} points${grid ? ' on the query\u2019s grid' : ''} (${this.building.length.toLocaleString('en')} series so far); stopped reading`,
        'Choose a coarser step, a shorter range or a narrower query (fewer series).',
      );
    b.values.push([t, v]);
  }
}
