// Bounded in-memory history: a ring of rows (time + named numeric fields) in typed arrays.
// 24 h at 1 s is 86,400 rows; a handful of Float64Arrays hold that in a few MB with no GC churn.
// NaN marks a gap (service down, scrape failed) and travels as null.

export interface SeriesSlice {
  t: number[];
  fields: Record<string, (number | null)[]>;
}

export class RingSeries<F extends string> {
  private readonly t: Float64Array;
  private readonly cols: Record<F, Float64Array>;
  private start = 0;
  private count = 0;

  constructor(
    readonly fields: readonly F[],
    readonly capacity: number,
  ) {
    this.t = new Float64Array(capacity);
    this.cols = Object.fromEntries(fields.map((f) => [f, new Float64Array(capacity)])) as Record<
      F,
      Float64Array
    >;
  }

  get length(): number {
    return this.count;
  }

  lastTime(): number | undefined {
    return this.count ? this.t[(this.start + this.count - 1) % this.capacity] : undefined;
  }

  push(t: number, values: Partial<Record<F, number | null | undefined>>): void {
    // A host clock that jumps backwards must not break the time axis: such rows are dropped, not reordered.
    const last = this.lastTime();
    if (last !== undefined && t <= last) return;
    const i = (this.start + this.count) % this.capacity;
    this.t[i] = t;
    for (const f of this.fields) {
      const v = values[f];
      this.cols[f][i] = v === null || v === undefined ? NaN : v;
    }
    if (this.count < this.capacity) this.count++;
    else this.start = (this.start + 1) % this.capacity;
  }

  /** Rows at or after fromMs, min-max decimated on `key` to about maxPoints (peaks survive). */
  slice(fromMs = -Infinity, maxPoints = Infinity, key?: F): SeriesSlice {
    const idx: number[] = [];
    for (let k = 0; k < this.count; k++) {
      const i = (this.start + k) % this.capacity;
      if (this.t[i] >= fromMs) idx.push(i);
    }
    const chosen = idx.length > maxPoints && key ? this.minMax(idx, maxPoints, key) : idx;
    const out: SeriesSlice = { t: chosen.map((i) => this.t[i]), fields: {} };
    for (const f of this.fields) out.fields[f] = chosen.map((i) => nullIfNaN(this.cols[f][i]));
    return out;
  }

  private minMax(idx: number[], maxPoints: number, key: F): number[] {
    const col = this.cols[key];
    const buckets = Math.max(1, Math.floor(maxPoints / 2));
    const per = idx.length / buckets;
    const out: number[] = [];
    for (let b = 0; b < buckets; b++) {
      const from = Math.floor(b * per);
      const to = Math.min(idx.length, Math.floor((b + 1) * per));
      let lo = -1;
      let hi = -1;
      let gap = -1;
      for (let k = from; k < to; k++) {
        const v = col[idx[k]];
        if (Number.isNaN(v)) {
          if (gap < 0) gap = idx[k];
          continue;
        }
        if (lo < 0 || v < col[lo]) lo = idx[k];
        if (hi < 0 || v > col[hi]) hi = idx[k];
      }
      // Keep one gap marker per bucket so outages stay visible after decimation.
      const picks = [lo, hi, gap].filter((i) => i >= 0);
      picks.sort((a, b2) => this.t[a] - this.t[b2]);
      for (const p of picks) if (out[out.length - 1] !== p) out.push(p);
    }
    return out;
  }
}

function nullIfNaN(v: number): number | null {
  return Number.isNaN(v) ? null : v;
}
