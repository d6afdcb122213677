// The signal table of a 1.3 overview (docs/recording-format.md §1.3): while a session is recorded, every overview
// segment (10 min) the writer hands this builder's take() the end of a segment, and it evaluates the segment at full
// resolution with the one evaluator review uses (buildReviewData over the segment's scrapes, with the 6 minutes
// before it so that 60 s rates and the 5-minute KV regression see the same rows as a full read), then keeps one
// row per group every stepMs. A review of a file never opened before reads these rows and nothing else: no
// scrape to decode, no signal to evaluate, and the values at those rows are the ones the full read computes.
import { serviceId, type HealthResult, type Role, type UnitState } from '@shared/domain';
import { workerTarget } from '../recording/fleet-targets';
import type { SignalMissing } from '@shared/contract';
import type { Exposition, MetricFamily, Sample } from '../probes/exposition/types';
import type { OverviewTable } from '../recording/overview-stream';
import { adoptLabels, sameLabels } from '../probes/exposition/label-sets';
import { doubled } from '../recording/typed-growth';
import type {
  Recording,
  RecordedSeries,
  StoredHeader,
  TimedHealth,
  TimedUnitState,
} from '../recording/types';
import type { KvMeta } from '../signals/evaluate';
import { buildReviewData, reviewDataOf, type ReviewData, type RoleInfo } from './review-data';
import type { GroupColumns } from './signal-table';
import { isReviewInput } from './review-inputs';

/** Kind of the overview line that carries a segment's signal rows. */
export const TABLE_KIND = 'o.tbl';
/** What a segment is evaluated with before its own rows: the longest window a signal reads (kv_ttf_s, 5 min) + 1 min. */
const LOOKBACK_MS = 6 * 60_000;

/**
 * One group's rows of a segment. A column is its float32 values, little-endian, in base64 (exact, and read
 * without parsing a number); a column with one value throughout is that value (null: no value, NaN).
 */
interface StoredGroup {
  t: number[];
  c: Record<string, string | number | null>;
  /** Index into `m` per row (−1: none). */
  kv?: number[] | number;
  m?: KvMeta[];
}

export interface TableRecord {
  k: typeof TABLE_KIND;
  /** Time of the segment's last row. */
  t: number;
  g: Record<string, StoredGroup>;
  /** What the servers did not expose in this segment (a key is "not exposed" in review when no segment had it). */
  x: Record<string, SignalMissing>;
  /** Per role: [families, series] of its largest scrape so far. */
  i: Record<string, [number, number]>;
}

/**
 * One series' points of the segment and its lookback: `n` of them at the start of `t` and `v`, typed arrays
 * grown by doubling. Every kept sample of every scrape lands here, so no JS array grows (and is copied on the
 * JS heap) per point.
 */
interface SeriesAcc {
  info: Omit<RecordedSeries, 't' | 'v'>;
  n: number;
  t: Float64Array;
  v: Float64Array;
}

/** Points a new series has room for before its arrays double. */
const FIRST_POINTS = 64;

function addPoint(acc: SeriesAcc, ts: number, v: number): void {
  if (acc.n === acc.t.length) {
    acc.t = doubled(acc.t);
    acc.v = doubled(acc.v);
  }
  acc.t[acc.n] = ts;
  acc.v[acc.n++] = v;
}

/** The writer side: fed every accepted scrape, unit state and health result; one TableRecord line per segment. */
export class OverviewTableBuilder implements OverviewTable {
  private readonly series = new Map<string, SeriesAcc>();
  /** Per target: the time of every scrape still held (its rows), plus the old points trim() keeps. */
  private readonly times = new Map<string, number[]>();
  private readonly slots = new Map<
    string,
    { name: string; labels: Record<string, string>; count: number; acc: SeriesAcc | null; adopt: number }[]
  >();
  private units: TimedUnitState[] = [];
  private healths: TimedHealth[] = [];
  private readonly lastTaken = new Map<string, number>();
  private readonly sizes = new Map<string, [number, number]>();
  private covered = -Infinity;
  private first = Infinity;
  private last = -Infinity;
  private nextId = 0;

  constructor(
    private readonly header: StoredHeader,
    private readonly stepMs: number,
    private readonly keep: (name: string) => boolean = isReviewInput,
  ) {}

  scrape(ts: number, target: string, exp: Exposition): void {
    if (ts < this.first) this.first = ts;
    if (ts > this.last) this.last = ts;
    // A target lists its samples in the same order every scrape: each position remembers its series (or that
    // the overview does not keep it), so a sample costs a comparison, not a key and a lookup.
    let slots = this.slots.get(target);
    if (!slots) this.slots.set(target, (slots = []));
    let times = this.times.get(target);
    if (!times) this.times.set(target, (times = []));
    times.push(ts);
    let n = 0;
    for (const f of exp.families)
      for (const s of f.samples) {
        let slot = slots[n];
        if (!slot || slot.name !== s.name || !sameLabels(s.labels, slot.labels, slot.count))
          slots[n] = slot = {
            name: s.name,
            labels: s.labels,
            count: Object.keys(s.labels).length,
            acc: this.seriesOf(target, f, s),
            adopt: 3,
          };
        else {
          // The parser hands a series it has cached the same name and label value strings every scrape (from
          // its third): kept here, later comparisons are of identical strings (or one identity check).
          slot.name = s.name;
          if (slot.adopt > 0) {
            slot.adopt--;
            slot.labels = adoptLabels(s.labels);
          }
        }
        n++;
        if (slot.acc) addPoint(slot.acc, ts, s.value);
      }
    const size = this.sizes.get(target);
    if (!size || exp.families.length > size[0] || n > size[1])
      this.sizes.set(target, [Math.max(size?.[0] ?? 0, exp.families.length), Math.max(size?.[1] ?? 0, n)]);
  }

  private seriesOf(target: string, f: MetricFamily, s: Sample): SeriesAcc | null {
    if (!this.keep(s.name)) return null;
    let key = target + '\u0000' + s.name;
    for (const l in s.labels) key += '\u0001' + l + '=' + s.labels[l];
    let acc = this.series.get(key);
    if (!acc) {
      acc = {
        info: { id: this.nextId++, target, name: s.name, labels: s.labels, family: f.name, type: f.type },
        n: 0,
        t: new Float64Array(FIRST_POINTS),
        v: new Float64Array(FIRST_POINTS),
      };
      this.series.set(key, acc);
    }
    return acc;
  }

  unit(ts: number, source: string, state: UnitState): void {
    this.units.push({ ts, source, state });
    if (ts > this.last) this.last = ts;
  }

  health(ts: number, source: string, health: HealthResult): void {
    this.healths.push({ ts, source, health });
    if (ts > this.last) this.last = ts;
  }

  take(final: boolean): string {
    if (!(this.last > this.covered) || this.series.size === 0) return '';
    const rec = this.segment();
    const data = buildReviewData(rec, seenOf(this.sizes));
    const out: TableRecord = { k: TABLE_KIND, t: this.last, g: {}, x: data.notExposed, i: {} };
    for (const [name, g] of data.table.groups) {
      const rows: number[] = [];
      let prev = this.lastTaken.get(name);
      for (let k = 0; k < g.t.length; k++) {
        const t = g.t[k];
        if (t <= this.covered) continue;
        if (prev === undefined || t - prev >= this.stepMs || (final && k === g.t.length - 1)) {
          rows.push(k);
          prev = t;
        }
      }
      if (prev !== undefined) this.lastTaken.set(name, prev);
      if (!rows.length) continue;
      const sg: StoredGroup = { t: rows.map((k) => g.t[k]), c: {} };
      for (const [key, col] of g.cols) sg.c[key] = column(col, rows);
      const kv = data.kv.get(name as Role);
      if (kv) {
        sg.kv = packed(rows.map((k) => kv.source[k])) as number[] | number;
        sg.m = kv.metas;
      }
      out.g[name] = sg;
    }
    for (const [target, size] of this.sizes) out.i[target] = size;
    this.covered = this.last;
    this.trim(this.last - LOOKBACK_MS);
    return JSON.stringify(out) + '\n';
  }

  /** The segment and its lookback as a Recording, as the reader would return it. */
  private segment(): Recording {
    // As the reader does: a series present in every row since it appeared is a view of its target's time axis,
    // which the evaluator reads without looking rows up.
    const axes = new Map<string, Float64Array>();
    for (const [target, times] of this.times) axes.set(target, Float64Array.from(times));
    const series: RecordedSeries[] = [];
    for (const s of this.series.values()) {
      const n = s.n;
      if (!n) continue;
      const axis = axes.get(s.info.target)!;
      const start = axis.length - n;
      const whole = start >= 0 && axis[start] === s.t[0] && axis[axis.length - 1] === s.t[n - 1];
      series.push({
        ...s.info,
        t: whole ? axis.subarray(start) : s.t.slice(0, n),
        v: s.v.slice(0, n),
      });
    }
    return {
      path: '',
      header: this.header,
      firstTs: Math.max(this.first, this.covered - LOOKBACK_MS),
      lastTs: this.last,
      closedCleanly: false,
      series,
      events: [],
      unitStates: this.units,
      health: this.healths,
      journal: [],
      warnings: [],
      derivedDamage: [],
      stats: { fileBytes: 0, decodedBytes: 0, records: 0, scrapes: 0, samples: 0 },
    };
  }

  /**
   * Drops what the next segment's evaluation no longer reads: points before `cutoff`, except each series' and
   * each source's last one before it (a /server_info capacity read once, a unit state that has not changed since).
   */
  private trim(cutoff: number): void {
    const old = new Map<string, Set<number>>();
    for (const s of this.series.values()) {
      let k = 0;
      while (k < s.n && s.t[k] < cutoff) k++;
      if (k === s.n) {
        k--;
        let set = old.get(s.info.target);
        if (!set) old.set(s.info.target, (set = new Set()));
        set.add(s.t[k]);
      }
      if (k > 0) {
        s.t.copyWithin(0, k, s.n);
        s.v.copyWithin(0, k, s.n);
        s.n -= k;
      }
    }
    for (const [target, times] of this.times) {
      const kept = [...(old.get(target) ?? [])].sort((a, b) => a - b);
      let k = 0;
      while (k < times.length && times[k] < cutoff) k++;
      this.times.set(target, kept.concat(times.slice(k)));
    }
    this.units = lastBefore(this.units, cutoff);
    this.healths = lastBefore(this.healths, cutoff);
  }
}

function lastBefore<T extends { ts: number; source: string }>(list: T[], cutoff: number): T[] {
  const keep = new Map<string, T>();
  const out: T[] = [];
  for (const r of list)
    if (r.ts < cutoff) keep.set(r.source, r);
    else out.push(r);
  return [...keep.values(), ...out];
}

function seenOf(
  sizes: Map<string, [number, number]>,
): Map<string, { families: Set<string>; series: number }> {
  const out = new Map<string, { families: Set<string>; series: number }>();
  for (const [target, [families, series]] of sizes)
    out.set(target, { families: new Set(Array.from({ length: families }, (_, i) => String(i))), series });
  return out;
}

function column(col: Float32Array, rows: number[]): string | number | null {
  const first = col[rows[0]];
  let same = true;
  for (const k of rows) if (!(col[k] === first || (col[k] !== col[k] && first !== first))) same = false;
  if (same) return Number.isFinite(first) ? first : null;
  const out = new Float32Array(rows.length);
  rows.forEach((k, i) => (out[i] = col[k]));
  return Buffer.from(out.buffer).toString('base64');
}

function packed<T extends number | null>(values: T[]): T[] | T {
  for (let k = 1; k < values.length; k++) if (values[k] !== values[0]) return values;
  return values[0];
}

/**
 * The review's data from the table rows of an overview (plus its header, events, unit states and health, which
 * the overview carries in full): what the first screen draws, until the full read replaces it.
 */
export function tableReviewData(rec: Recording, lines: readonly TableRecord[]): ReviewData {
  const stepMs = rec.header.overview?.stepMs ?? 30_000;
  // Rows per group first, so that every column is one typed array filled in place.
  const total = new Map<string, number>();
  for (const r of lines)
    for (const [name, sg] of Object.entries(r.g)) total.set(name, (total.get(name) ?? 0) + sg.t.length);
  const acc = new Map<
    string,
    {
      t: Float64Array;
      n: number;
      cols: Map<string, Float32Array>;
      kv: Int8Array;
      metas: KvMeta[];
      ids: Map<string, number>;
    }
  >();
  for (const [name, n] of total)
    acc.set(name, {
      t: new Float64Array(n),
      n: 0,
      cols: new Map(),
      kv: new Int8Array(n).fill(-1),
      metas: [],
      ids: new Map(),
    });
  let notExposed: Record<string, SignalMissing> | null = null;
  const sizes = new Map<string, [number, number]>();
  for (const r of lines) {
    // Not exposed in the session = not exposed in any segment.
    if (notExposed === null) notExposed = { ...r.x };
    else for (const key of Object.keys(notExposed)) if (!r.x[key]) delete notExposed[key];
    for (const [target, size] of Object.entries(r.i)) sizes.set(target, size);
    for (const [name, sg] of Object.entries(r.g)) {
      const a = acc.get(name)!;
      const at = a.n;
      const n = sg.t.length;
      a.t.set(sg.t, at);
      for (const key in sg.c) {
        const v = sg.c[key];
        let col = a.cols.get(key);
        if (!col) a.cols.set(key, (col = new Float32Array(a.t.length).fill(NaN)));
        if (typeof v === 'string') {
          const bytes = Buffer.from(v, 'base64');
          if (bytes.length !== n * 4)
            throw new Error(`overview column ${key} holds ${bytes.length / 4} values for ${n} rows`);
          new Uint8Array(col.buffer, at * 4, n * 4).set(bytes);
        } else col.fill(v ?? NaN, at, at + n);
      }
      // Each segment numbers its own KV sources: map them onto one list for the whole session.
      const local = (sg.m ?? []).map((m) => {
        const id = JSON.stringify(m);
        let j = a.ids.get(id);
        if (j === undefined) {
          j = a.metas.length;
          a.metas.push(m);
          a.ids.set(id, j);
        }
        return j;
      });
      if (sg.kv !== undefined)
        for (let k = 0; k < n; k++) {
          const src = Array.isArray(sg.kv) ? sg.kv[k] : sg.kv;
          a.kv[at + k] = src >= 0 ? (local[src] ?? -1) : -1;
        }
      a.n += n;
    }
  }
  const groups = new Map<string, GroupColumns>();
  const kv = new Map<Role, { source: Int8Array; metas: KvMeta[] }>();
  const roleInfo = new Map<string, RoleInfo>();
  let lastScrapeTs = -Infinity;
  for (const [name, a] of acc) {
    const { t, cols } = a;
    groups.set(name, { t, cols });
    // A fleet worker's group `decode@decode-1` keys its columns `decode.metrics_ok@decode-1`.
    const at = name.indexOf('@');
    const ok = cols.get(at < 0 ? `${name}.metrics_ok` : `${name.slice(0, at)}.metrics_ok${name.slice(at)}`);
    if (ok)
      for (let k = t.length - 1; k >= 0; k--)
        if (ok[k] === 1) {
          lastScrapeTs = Math.max(lastScrapeTs, t[k]);
          break;
        }
    if (a.metas.length) kv.set(name as Role, { source: a.kv, metas: a.metas });
  }
  const services = rec.header.deployment.services;
  const roles: Role[] = [...new Set(services.map((s) => s.role))];
  // A row every stepMs: the cursor's "scraped at this moment" allows for that spacing. Each worker is its own
  // target; a role holds the most any of its workers served, as the full read says.
  for (const role of roles) {
    const of = services
      .filter((s) => s.role === role)
      .map((s) => sizes.get(workerTarget(role, serviceId(s))));
    roleInfo.set(role, {
      families: Math.max(0, ...of.map((x) => x?.[0] ?? 0)),
      series: Math.max(0, ...of.map((x) => x?.[1] ?? 0)),
      stepMs,
    });
  }
  for (const s of services) {
    const target = workerTarget(s.role, serviceId(s));
    const size = sizes.get(target);
    roleInfo.set(target, { families: size?.[0] ?? 0, series: size?.[1] ?? 0, stepMs });
  }
  return reviewDataOf(rec, {
    lastScrapeTs,
    roles,
    groups,
    kv,
    notExposed: notExposed ?? {},
    roleInfo,
  });
}

/** The overview the app writes (recorder, re-save, benchmark): review's signal table. */
export const REVIEW_OVERVIEW = {
  table: (header: StoredHeader, stepMs: number): OverviewTable => new OverviewTableBuilder(header, stepMs),
};
