// The recorded series of one scrape target on one shared time axis: every stored scrape of the target is a row,
// and each series knows the rows it has a finite value in. The signal computations of review mode read columns
// through this instead of rebuilding an exposition per scrape (which costs ~100 µs per scrape; 24 h is 260 k).
import type { RecordedSeries } from '../recording/types';

export interface AlignedSeries {
  name: string;
  labels: Record<string, string>;
  /** Row (index into the target's `t`) of each value; null when the rows are row0, row0+1, … */
  rows: Int32Array | null;
  row0: number;
  /** Finite values only (NaN and ±Inf are dropped, as the live signal code skips them). */
  v: Float64Array;
}

/**
 * A series whose values are also readable in its owner's buffer, value k at `vBuf[off + k]` of `count`: the
 * live columns' series, which would otherwise make a view (`v`) of that buffer for every reader every scrape.
 */
export interface BufferedValues {
  readonly vBuf: Float64Array;
  readonly off: number;
  readonly count: number;
}

export function isBuffered(s: AlignedSeries): s is AlignedSeries & BufferedValues {
  return 'vBuf' in s;
}

export function rowAt(s: AlignedSeries, k: number): number {
  return s.rows ? s.rows[k] : s.row0 + k;
}

/** Index of the value of `s` at `row`, or -1 when it has none there. */
export function valueIndexAt(s: AlignedSeries, row: number): number {
  if (!s.rows) {
    const k = row - s.row0;
    return k >= 0 && k < s.v.length ? k : -1;
  }
  let lo = 0;
  let hi = s.rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const r = s.rows[mid];
    if (r === row) return mid;
    if (r < row) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export class TargetColumns {
  private readonly byName: Map<string, AlignedSeries[]>;
  /** Whether the lists series() returns are the owner's, handed out again by later columns (see byName). */
  readonly keptLists: boolean;
  /** Distinct metric families the target served during the session (including series not decoded). */
  families = 0;
  /**
   * The newest row as columns of its own, when the owner keeps it ready (the live columns do, for the
   * point-in-time signals of every scrape): what tailColumns(this, rows − 1) would build.
   */
  newest?: TargetColumns;

  constructor(
    readonly target: string,
    /** Time of every stored scrape of the target (epoch ms), ascending. */
    readonly t: Float64Array,
    /**
     * The series by name, when the owner keeps them grouped (the live columns, while no series comes or goes):
     * shared, not copied, so nothing may be added to these columns.
     */
    byName?: Map<string, AlignedSeries[]>,
  ) {
    this.keptLists = byName !== undefined;
    this.byName = byName ?? new Map();
  }

  get rows(): number {
    return this.t.length;
  }

  add(s: AlignedSeries): void {
    const list = this.byName.get(s.name);
    if (list) list.push(s);
    else this.byName.set(s.name, [s]);
  }

  series(name: string): AlignedSeries[] {
    return this.byName.get(name) ?? [];
  }

  has(name: string): boolean {
    return (this.byName.get(name)?.length ?? 0) > 0;
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}

/** Groups recorded series by target and maps their samples onto the target's scrape rows. */
export function alignTargets(series: readonly RecordedSeries[]): Map<string, TargetColumns> {
  const byTarget = new Map<string, RecordedSeries[]>();
  for (const s of series) {
    const list = byTarget.get(s.target);
    if (list) list.push(s);
    else byTarget.set(s.target, [s]);
  }
  const out = new Map<string, TargetColumns>();
  for (const [target, list] of byTarget) {
    const t = timeAxis(list);
    const cols = new TargetColumns(target, t);
    for (const s of list) cols.add(align(s, t));
    out.set(target, cols);
  }
  return out;
}

/**
 * The reader gives every series that was present in every stored row since it appeared a view of its target's
 * full time array; the buffer behind such a view is that array. Series with gaps own a copy of their times. The
 * largest buffer is therefore the target's axis, unless no series spans it, in which case the union is built.
 */
function timeAxis(list: readonly RecordedSeries[]): Float64Array {
  let best: ArrayBufferLike | null = null;
  for (const s of list) if (!best || s.t.buffer.byteLength > best.byteLength) best = s.t.buffer;
  if (!best) return new Float64Array(0);
  const axis = new Float64Array(best, 0, best.byteLength / 8);
  if (list.every((s) => s.t.buffer === best || isSubset(s.t, axis))) return axis;
  const all = new Set<number>();
  for (const s of list) for (const x of s.t) all.add(x);
  return Float64Array.from(all).sort();
}

function isSubset(a: Float64Array, axis: Float64Array): boolean {
  let j = 0;
  for (let i = 0; i < a.length; i++) {
    while (j < axis.length && axis[j] < a[i]) j++;
    if (j === axis.length || axis[j] !== a[i]) return false;
  }
  return true;
}

function align(s: RecordedSeries, axis: Float64Array): AlignedSeries {
  let finite = true;
  for (let k = 0; k < s.v.length; k++)
    if (!Number.isFinite(s.v[k])) {
      finite = false;
      break;
    }
  const base = { name: s.name, labels: s.labels };
  if (finite && s.t.buffer === axis.buffer && s.t.length > 0)
    return { ...base, rows: null, row0: (s.t.byteOffset - axis.byteOffset) / 8, v: s.v };
  const rows = new Int32Array(s.v.length);
  const v = new Float64Array(s.v.length);
  let n = 0;
  let j = 0;
  for (let k = 0; k < s.t.length; k++) {
    while (j < axis.length && axis[j] < s.t[k]) j++;
    if (!Number.isFinite(s.v[k])) continue;
    rows[n] = j;
    v[n++] = s.v[k];
  }
  return { ...base, rows: rows.subarray(0, n), row0: 0, v: v.subarray(0, n) };
}
