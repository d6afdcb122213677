// The last minutes of one scrape target as columns: each scrape appends a row of the samples the evaluator
// reads, rows older than the evaluation window fall off, and columns() hands the evaluator the same shape a
// recording gives review — so the live push and a chart of a recording are computed by the same code.
//
// Values, point times and running counter increases live in typed buffers that are appended to and compacted
// now and then, so columns() hands out views instead of copies and the window scans find their prefix sums
// ready: a scrape costs O(its samples), not O(samples × rows in the window).
import type { Exposition } from '../probes/exposition/types';
import { TargetColumns, type AlignedSeries, type BufferedValues } from '../review/target-columns';
import { seedPrepared, type Prepared } from './window-math';
import { adoptLabels, sameLabels } from '../probes/exposition/label-sets';

/** A growable window of (absolute row, time, value, running increase) per point. */
class PointBuffer {
  rows: Int32Array;
  times: Float64Array;
  v: Float64Array;
  prefix: Float64Array;
  start = 0;
  end = 0;

  constructor(capacity: number) {
    this.rows = new Int32Array(capacity);
    this.times = new Float64Array(capacity);
    this.v = new Float64Array(capacity);
    this.prefix = new Float64Array(capacity);
  }

  get length(): number {
    return this.end - this.start;
  }

  push(row: number, t: number, value: number): void {
    if (this.end === this.v.length) this.makeRoom();
    const i = this.end++;
    this.rows[i] = row;
    this.times[i] = t;
    this.v[i] = value;
    if (i === this.start) this.prefix[i] = 0;
    else {
      const prev = this.v[i - 1];
      this.prefix[i] = this.prefix[i - 1] + (value >= prev ? value - prev : value);
    }
  }

  /** Drops the points of rows before `firstRow`. */
  dropBefore(firstRow: number): void {
    while (this.start < this.end && this.rows[this.start] < firstRow) this.start++;
  }

  /** Moves the kept points to the front, or doubles the buffers when they are more than half full. */
  private makeRoom(): void {
    const n = this.length;
    const cap = this.v.length;
    const grow = n * 2 > cap;
    const size = grow ? cap * 2 : cap;
    const move = <T extends Int32Array | Float64Array>(a: T, make: (k: number) => T): T => {
      const out = grow ? make(size) : a;
      if (grow) out.set(a.subarray(this.start, this.end));
      else a.copyWithin(0, this.start, this.end);
      return out;
    };
    this.rows = move(this.rows, (k) => new Int32Array(k));
    this.times = move(this.times, (k) => new Float64Array(k));
    this.v = move(this.v, (k) => new Float64Array(k));
    this.prefix = move(this.prefix, (k) => new Float64Array(k));
    this.start = 0;
    this.end = n;
  }
}

/**
 * A series as columns() hands it to the evaluator, refreshed in place every scrape. It makes no typed-array
 * view per scrape: the window scans read its values and running increases in the point buffers at `off`
 * (`Prepared`), its point times are one view per run of series over the same rows, and `v` is made when first
 * read after a refresh (the point-in-time signals read the newest row's own columns, so most never are). Views
 * of every series per scrape were the largest allocation of the live push. A refresh keeps the buffers and
 * range it stands for, so a view made later shows what one made at the refresh would.
 */
class LiveAligned implements AlignedSeries, Prepared, BufferedValues {
  rows: Int32Array | null = null;
  row0 = 0;
  vBuf: Float64Array;
  prefixBuf: Float64Array;
  off = 0;
  private timesBuf: Float64Array;
  private end = 0;
  private vView: Float64Array | null = null;
  private timesView: Float64Array | null = null;
  /** A series over the same rows (earlier in this columns() call) whose times view this one shares. */
  private timesOf: LiveAligned | null = null;

  constructor(
    readonly name: string,
    readonly labels: Record<string, string>,
    p: PointBuffer,
  ) {
    this.vBuf = p.v;
    this.prefixBuf = p.prefix;
    this.timesBuf = p.times;
  }

  /** Stands for the points of `p` now; `timesOf` shares its point times (same rows), else null. */
  refresh(p: PointBuffer, timesOf: LiveAligned | null): void {
    this.vBuf = p.v;
    this.prefixBuf = p.prefix;
    this.timesBuf = p.times;
    this.off = p.start;
    this.end = p.end;
    this.vView = this.timesView = null;
    this.timesOf = timesOf;
  }

  get count(): number {
    return this.end - this.off;
  }

  get v(): Float64Array {
    return (this.vView ??= this.vBuf.subarray(this.off, this.end));
  }

  get times(): Float64Array {
    if (this.timesOf) return this.timesOf.times;
    return (this.timesView ??= this.timesBuf.subarray(this.off, this.end));
  }
}

interface LiveSeries {
  key: string;
  name: string;
  labels: Record<string, string>;
  labelCount: number;
  points: PointBuffer;
  /** Handed to the evaluator by every columns() call, refreshed in place (its views move with the buffers). */
  aligned: LiveAligned;
  /** The series in the newest row's own columns: its value there, rewritten by every append. */
  newest: AlignedSeries;
  /** Row of its newest point (a sample listed twice in one scrape keeps the first). */
  lastRow: number;
  /** Scrapes left in which the labels matched against are replaced by an equal copy (see append). */
  adopt: number;
}

/** The parser's cache stores a series the second time it sees it and answers from the third on. */
const ADOPT_LABELS_SCRAPES = 3;

export interface LiveColumnsOptions {
  /** How far back rows are kept (ms): the longest window the evaluator reads. */
  keepMs: number;
  /** Which sample names to keep. */
  track: (sampleName: string) => boolean;
  /** Bound on distinct series; new series beyond it are dropped and counted. Default 5000. */
  maxSeries?: number;
}

const INITIAL_POINTS = 64;

export class LiveColumns {
  private readonly axis = new PointBuffer(INITIAL_POINTS);
  private rowCount = 0;
  private readonly series = new Map<string, LiveSeries>();
  /** The tracked series in the order of the last scrape. */
  private readonly order: LiveSeries[] = [];
  private readonly maxSeries: number;
  /** Series refused because maxSeries was reached (a label explosion upstream). */
  droppedSeries = 0;
  /**
   * Bumped whenever a series comes or goes: while it stands still, columns() lists the same names in the same
   * order, so a caller can skip comparing them.
   */
  seriesGeneration = 0;
  /** The series grouped by name (names as the series map first meets them), as of `groupsGeneration`. */
  private groups: LiveSeries[][] = [];
  private groupsGeneration = -1;
  /**
   * The same grouping as columns() hands it out (the window's series, and each series' newest-row column), as of
   * `groupsGeneration`: the series objects are refreshed in place, so the lists stand while no series comes or
   * goes instead of being built again every scrape.
   */
  private windowByName = new Map<string, AlignedSeries[]>();
  private newestByName = new Map<string, AlignedSeries[]>();

  constructor(private readonly opts: LiveColumnsOptions) {
    this.maxSeries = opts.maxSeries ?? 5000;
  }

  get rows(): number {
    return this.axis.length;
  }

  /** Appends the scrape taken at `t`; false (and nothing appended) when it is not newer than the last one. */
  append(t: number, exp: Exposition): boolean {
    const a = this.axis;
    if (a.length > 0 && !(t > a.times[a.end - 1])) return false;
    const row = this.rowCount++;
    a.push(row, t, 0);
    // A target serves its series in the same order every scrape: the series that followed the previous one
    // last time is checked first, which skips building and hashing a key for nearly every sample.
    const order = this.order;
    let next = 0;
    for (const fam of exp.families)
      for (const s of fam.samples) {
        if (!Number.isFinite(s.value)) continue;
        let ls: LiveSeries | undefined = order[next];
        if (ls && ls.name === s.name && sameLabels(s.labels, ls.labels, ls.labelCount)) {
          next++;
          // Once the parser's series cache holds a series it hands out the same name and label value strings
          // every scrape: kept here, later comparisons are of identical strings, the cheapest there are.
          ls.name = s.name;
          if (ls.adopt > 0) {
            ls.adopt--;
            ls.labels = adoptLabels(s.labels);
          }
        } else {
          if (!this.opts.track(s.name)) continue;
          const key = seriesKey(s.name, s.labels);
          ls = this.series.get(key);
          if (!ls) {
            if (this.series.size >= this.maxSeries) {
              this.droppedSeries++;
              continue;
            }
            this.series.set(key, (ls = newSeries(key, s.name, s.labels)));
            this.seriesGeneration++;
          }
          // Learn the order of this scrape: the rest of the old one is looked up by key from here on.
          order.length = next;
          order.push(ls);
          next++;
        }
        if (ls.lastRow === row) continue;
        ls.lastRow = row;
        ls.points.push(row, t, s.value);
        ls.newest.v[0] = s.value;
      }
    order.length = Math.min(order.length, next);
    this.prune(t - this.opts.keepMs);
    return true;
  }

  /** The kept rows as evaluator columns (views of the buffers: valid until the next append). */
  columns(target: string): TargetColumns {
    const a = this.axis;
    const first = a.rows[a.start];
    const newestRow = a.rows[a.end - 1];
    // Series present since the same row share one view of their point times.
    let timesRow = -1;
    let timesLength = -1;
    let timesOf: LiveAligned | null = null;
    for (const s of this.series.values()) {
      const p = s.points;
      const m = p.length;
      const row0 = p.rows[p.start];
      const contiguous = p.rows[p.end - 1] - row0 === m - 1;
      const aligned = s.aligned;
      if (contiguous) {
        aligned.rows = null;
        aligned.row0 = row0 - first;
        if (row0 !== timesRow || m !== timesLength) {
          aligned.refresh(p, null);
          timesOf = aligned;
          timesRow = row0;
          timesLength = m;
        } else aligned.refresh(p, timesOf);
      } else {
        const rows = new Int32Array(m);
        for (let k = 0; k < m; k++) rows[k] = p.rows[p.start + k] - first;
        aligned.rows = rows;
        aligned.row0 = 0;
        aligned.refresh(p, null);
        timesRow = -1;
      }
    }
    const groups = this.groupsByName();
    const cols = new TargetColumns(target, a.times.subarray(a.start, a.end), this.windowByName);
    // The newest row's columns, in the order tailColumns would list them: names as the full columns first
    // meet them, each name's series in order, only the series with a value in that row (nearly always all).
    let all = true;
    for (const list of groups)
      for (const s of list) if (s.points.rows[s.points.end - 1] !== newestRow) all = false;
    const newestT = a.times.subarray(a.end - 1, a.end);
    let newest: TargetColumns;
    if (all) newest = new TargetColumns(target, newestT, this.newestByName);
    else {
      newest = new TargetColumns(target, newestT);
      for (const list of groups)
        for (const s of list) if (s.points.rows[s.points.end - 1] === newestRow) newest.add(s.newest);
    }
    cols.newest = newest;
    return cols;
  }

  /** The series grouped by name; rebuilt only when a series came or went (the map's order moves only then). */
  private groupsByName(): LiveSeries[][] {
    if (this.groupsGeneration === this.seriesGeneration) return this.groups;
    const byName = new Map<string, LiveSeries[]>();
    for (const s of this.series.values()) {
      const list = byName.get(s.name);
      if (list) list.push(s);
      else byName.set(s.name, [s]);
    }
    this.groups = [...byName.values()];
    this.windowByName = new Map(this.groups.map((list) => [list[0].name, list.map((s) => s.aligned)]));
    this.newestByName = new Map(this.groups.map((list) => [list[0].name, list.map((s) => s.newest)]));
    this.groupsGeneration = this.seriesGeneration;
    return this.groups;
  }

  private prune(from: number): void {
    const a = this.axis;
    // The newest row always stays, whatever the window.
    while (a.length > 1 && a.times[a.start] < from) a.start++;
    const first = a.rows[a.start];
    let dropped = false;
    for (const s of this.series.values()) {
      s.points.dropBefore(first);
      if (s.points.length === 0) {
        this.series.delete(s.key);
        dropped = true;
      }
    }
    // A series gone from the window must not be matched by position again.
    if (dropped) {
      this.order.length = 0;
      this.seriesGeneration++;
    }
  }
}

function newSeries(key: string, name: string, labels: Record<string, string>): LiveSeries {
  const points = new PointBuffer(INITIAL_POINTS);
  const aligned = new LiveAligned(name, labels, points);
  // The window scans read the series' times and running increases from the series itself (see LiveAligned).
  seedPrepared(aligned, aligned);
  return {
    key,
    name,
    labels,
    labelCount: Object.keys(labels).length,
    points,
    aligned,
    newest: { name, labels, rows: null, row0: 0, v: new Float64Array(1) },
    lastRow: -1,
    adopt: ADOPT_LABELS_SCRAPES,
  };
}

/**
 * Identity of a series: its name and labels in key order. NUL separates the parts (it cannot occur in a
 * metric or label name, and a label value holding one would only merge series that differ by it).
 * Joined rather than built with `+=`: V8 keeps a concatenation as a tree of cons strings, one object per
 * piece, and the key lives as long as its series — on the 32-worker fleet that was 180,000 cons strings
 * (5.6 MB) that every major GC walked. A join is one flat string.
 */
function seriesKey(name: string, labels: Record<string, string>): string {
  const keys = Object.keys(labels);
  if (keys.length > 1) keys.sort();
  const parts = [name];
  for (const k of keys) parts.push(k, labels[k]);
  return parts.join('\u0000');
}
