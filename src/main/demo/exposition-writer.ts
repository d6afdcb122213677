// Writers for the two Prometheus text dialects the demo serves:
// - SGLang's prometheus_client in multiprocess mode (Python float repr via floatToGoString, labels sorted
//   alphabetically including `le`, histogram `_sum` before the buckets, no `_created`);
// - the router's Rust metrics-exporter-prometheus (labels in registration order, integers without ".0",
//   buckets then `_sum` then `_count`).
import type { Histogram } from './histogram';

export type Labels = Record<string, string>;

/** Python's repr(float). */
export function pyRepr(d: number): string {
  if (Number.isNaN(d)) return 'nan';
  if (d === Infinity) return 'inf';
  if (d === -Infinity) return '-inf';
  if (Object.is(d, -0)) return '-0.0';
  // Python switches to exponent notation below 1e-4 and from 1e16 up; JS at different points.
  const [mant, e] = d.toExponential().split('e');
  const e10 = Number(e);
  if (e10 < -4 || e10 >= 16) {
    const sign = e10 < 0 ? '-' : '+';
    return `${mant}e${sign}${String(Math.abs(e10)).padStart(2, '0')}`;
  }
  const digits = mant.replace('-', '').replace('.', '');
  const neg = d < 0 ? '-' : '';
  let s: string;
  if (e10 >= 0) {
    const intLen = e10 + 1;
    s =
      digits.length <= intLen
        ? `${digits}${'0'.repeat(intLen - digits.length)}.0`
        : `${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
  } else {
    s = `0.${'0'.repeat(-e10 - 1)}${digits}`;
  }
  return neg + s;
}

/** prometheus_client.utils.floatToGoString */
export function floatToGoString(d: number): string {
  if (d === Infinity) return '+Inf';
  if (d === -Infinity) return '-Inf';
  if (Number.isNaN(d)) return 'NaN';
  const s = pyRepr(d);
  const dot = s.indexOf('.');
  if (d > 0 && dot > 6) {
    const mantissa = `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, '');
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function pyLabels(labels: Labels): string {
  const keys = Object.keys(labels).sort();
  if (!keys.length) return '';
  return `{${keys.map((k) => `${k}="${escapeLabel(labels[k])}"`).join(',')}}`;
}

/** Accumulates one prometheus_client (multiprocess) exposition. */
export class PyExposition {
  private readonly out: string[] = [];

  private header(name: string, help: string, type: string): void {
    this.out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }

  gauge(name: string, help: string, series: Array<[Labels, number]>): void {
    if (!series.length) return;
    this.header(name, help, 'gauge');
    for (const [l, v] of series) this.out.push(`${name}${pyLabels(l)} ${floatToGoString(v)}`);
  }

  /** `name` includes the _total suffix, as prometheus_client prints it for counters. */
  counter(name: string, help: string, series: Array<[Labels, number]>): void {
    if (!series.length) return;
    this.header(name, help, 'counter');
    for (const [l, v] of series) this.out.push(`${name}${pyLabels(l)} ${floatToGoString(v)}`);
  }

  /** MultiProcessCollector order: `_sum` (read from the files first), cumulative buckets, then `_count`. */
  histogram(name: string, help: string, series: Array<[Labels, Histogram]>): void {
    if (!series.length) return;
    this.header(name, help, 'histogram');
    for (const [l, h] of series) {
      this.out.push(`${name}_sum${pyLabels(l)} ${floatToGoString(h.sum)}`);
      for (const [le, c] of h.cumulative()) {
        this.out.push(`${name}_bucket${pyLabels({ ...l, le: floatToGoString(le) })} ${floatToGoString(c)}`);
      }
      this.out.push(`${name}_count${pyLabels(l)} ${floatToGoString(h.count)}`);
    }
  }

  text(): string {
    return this.out.length ? `${this.out.join('\n')}\n` : '';
  }
}

/** Rust `metrics-exporter-prometheus` number formatting: integers bare, floats shortest. */
export function rustNumber(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Number.isNaN(v)) return 'NaN';
  return String(v);
}

function rustLabels(labels: Array<[string, string]>): string {
  if (!labels.length) return '';
  return `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

/** Accumulates one metrics-exporter-prometheus exposition. */
export class RustExposition {
  private readonly out: string[] = [];

  private header(name: string, help: string | undefined, type: string): void {
    if (help) this.out.push(`# HELP ${name} ${help}`);
    this.out.push(`# TYPE ${name} ${type}`);
  }

  gauge(name: string, help: string | undefined, series: Array<[Array<[string, string]>, number]>): void {
    if (!series.length) return;
    this.header(name, help, 'gauge');
    for (const [l, v] of series) this.out.push(`${name}${rustLabels(l)} ${rustNumber(v)}`);
    this.out.push('');
  }

  counter(name: string, help: string | undefined, series: Array<[Array<[string, string]>, number]>): void {
    if (!series.length) return;
    this.header(name, help, 'counter');
    for (const [l, v] of series) this.out.push(`${name}${rustLabels(l)} ${rustNumber(Math.floor(v))}`);
    this.out.push('');
  }

  histogram(
    name: string,
    help: string | undefined,
    series: Array<[Array<[string, string]>, Histogram]>,
  ): void {
    if (!series.length) return;
    this.header(name, help, 'histogram');
    for (const [l, h] of series) {
      for (const [le, c] of h.cumulative()) {
        this.out.push(
          `${name}_bucket${rustLabels([...l, ['le', le === Infinity ? '+Inf' : String(le)]])} ${c}`,
        );
      }
      this.out.push(`${name}_sum${rustLabels(l)} ${rustNumber(h.sum)}`);
      this.out.push(`${name}_count${rustLabels(l)} ${h.count}`);
    }
    this.out.push('');
  }

  text(): string {
    return this.out.length ? `${this.out.join('\n')}\n` : '';
  }
}
