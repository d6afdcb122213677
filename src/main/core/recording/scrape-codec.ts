// Scrape rows: the series dictionary, per-target layouts and the delta/sparse value tokens (format v1).
// The encoder and the decoder run the same state machine, so a value decodes to exactly the double that was
// scraped. Kept free of I/O so both sides can be tested and benchmarked on their own.
import type { Exposition, MetricType } from '../probes/exposition/types';
import {
  absoluteToken,
  canonicalSeriesKey,
  seriesKeyIn,
  decimalToken,
  parseAbsoluteToken,
  POW10,
  type FamilyRecord,
  type LayoutRecord,
  type SeriesRecord,
} from './format';
import { adoptLabels, sameLabels } from '../probes/exposition/label-sets';
import { RecordDamageError, TOKEN_DECIMAL, TOKEN_DELTA, type ParsedRow } from './row-parser';
import { doubled } from './typed-growth';

export { RecordDamageError };

/** Module-local copy: hot loops should not go through a module namespace binding. */
const P10: readonly number[] = POW10.slice();

/** Scale marker: the series has no value yet (its first value must be absolute). */
const UNSET = -2;
/** Scale marker: the last value was absolute and not a short decimal (full-precision float, NaN, ±Inf, -0). */
const RAW = -1;
/** A misbehaving target (a label per request id…) must not grow the dictionary without bound. */
export const MAX_SERIES = 250_000;

/** Per-series codec state, indexed by series id; grown by doubling. */
class SeriesState {
  m = new Float64Array(1024);
  prev = new Float64Array(1024);
  scale = new Int8Array(1024).fill(UNSET);

  ensure(id: number): void {
    if (id < this.m.length) return;
    let n = this.m.length;
    while (n <= id) n *= 2;
    const m = new Float64Array(n);
    m.set(this.m);
    const prev = new Float64Array(n);
    prev.set(this.prev);
    const scale = new Int8Array(n).fill(UNSET);
    scale.set(this.scale);
    this.m = m;
    this.prev = prev;
    this.scale = scale;
  }

  /** Set the state from an absolute token: its value, and mantissa/scale if it is a plain decimal (d < 0: raw). */
  setAbsolute(id: number, v: number, m: number, d: number): void {
    this.scale[id] = d < 0 ? RAW : d;
    this.m[id] = d < 0 ? 0 : m;
    this.prev[id] = v;
  }
}

interface SeriesMeta {
  type: MetricType;
  name: string;
  family: string;
  labels: Record<string, string>;
}

interface EncSeriesMeta extends SeriesMeta {
  labelCount: number;
  /** Scrapes left in which the labels are replaced by an equal copy (see encode). */
  adopt: number;
}

/** The parser's cache stores a series the second time it sees it and answers from the third on. */
const ADOPT_LABELS_SCRAPES = 3;

/**
 * Predecessor slots: a histogram bucket's delta is stored relative to the next-lower bucket's delta (so
 * cumulative buckets cost what per-bucket counts cost), and _count relative to the +Inf bucket. Pure function of
 * the layout, but written into the layout record so readers need not re-derive it.
 */
export function predecessors(ids: readonly number[], meta: (id: number) => SeriesMeta): [number, number][] {
  const out: [number, number][] = [];
  const lastBucket = new Map<string, { slot: number; le: number }>();
  const infBucket = new Map<string, number>();
  for (let slot = 0; slot < ids.length; slot++) {
    const s = meta(ids[slot]);
    const histo = s.type === 'histogram' || s.type === 'gaugehistogram';
    if (!histo) continue;
    if (s.name === `${s.family}_bucket` && s.labels.le !== undefined) {
      const le = parseAbsoluteToken(s.labels.le);
      if (le !== le) continue;
      const rest = { ...s.labels };
      delete rest.le;
      const group = canonicalSeriesKey(s.family, rest);
      const last = lastBucket.get(group);
      if (last && le > last.le) out.push([slot, last.slot]);
      lastBucket.set(group, { slot, le });
      if (le === Infinity) infBucket.set(group, slot);
    } else if (s.name === `${s.family}_count` || s.name === `${s.family}_gcount`) {
      const inf = infBucket.get(canonicalSeriesKey(s.family, s.labels));
      if (inf !== undefined) out.push([slot, inf]);
    }
  }
  return out;
}

interface EncTarget {
  gJson: string;
  /** name + labels in scrape order → id: the hot-path lookup (scrapes keep their order). */
  fast: Map<string, number>;
  /** canonical key → id, for a series seen with its labels in another order. */
  canon: Map<string, number>;
  families: Map<string, { type: MetricType; help?: string; unit?: string }>;
  /** Null until the first layout record of this target is written. */
  layout: number[] | null;
  pred: Int32Array;
  lastTs: number;
}

export interface EncodeResult {
  /** Lines to append (each ends with \n), or '' when the scrape was dropped. */
  text: string;
  samples: number;
  newSeries: number;
  dropped: 'out-of-order' | null;
}

export class ScrapeEncoder {
  private readonly targets = new Map<string, EncTarget>();
  private readonly meta: EncSeriesMeta[] = [];
  private readonly state = new SeriesState();
  private seen = new Uint32Array(1024);
  private stamp = 0;
  // A scrape's series ids and values, the first `n` of each: typed and kept from scrape to scrape (a JS array
  // emptied with length = 0 gives up its storage and regrows it for every scrape).
  private ids = new Int32Array(1024);
  private vals = new Float64Array(1024);
  private chain = new Float64Array(1024);
  /** Samples ignored because the dictionary hit MAX_SERIES. */
  overflowSamples = 0;

  get seriesCount(): number {
    return this.meta.length;
  }

  encode(ts: number, target: string, exp: Exposition): EncodeResult {
    let t = this.targets.get(target);
    if (!t) {
      t = {
        gJson: JSON.stringify(target),
        fast: new Map(),
        canon: new Map(),
        families: new Map(),
        layout: null,
        pred: new Int32Array(0),
        lastTs: -Infinity,
      };
      this.targets.set(target, t);
    }
    if (!(ts > t.lastTs)) return { text: '', samples: 0, newSeries: 0, dropped: 'out-of-order' };
    t.lastTs = ts;

    let pre = '';
    let newSeries = 0;
    const stamp = ++this.stamp;
    let n = 0;
    for (const fam of exp.families) {
      const known = t.families.get(fam.name);
      if (!known || known.type !== fam.type || known.help !== fam.help || known.unit !== fam.unit) {
        t.families.set(fam.name, { type: fam.type, help: fam.help, unit: fam.unit });
        const rec: FamilyRecord = { k: 'family', g: target, f: fam.name, ty: fam.type };
        if (fam.help !== undefined) rec.h = fam.help;
        if (fam.unit !== undefined) rec.u = fam.unit;
        pre += JSON.stringify(rec) + '\n';
      }
      for (const s of fam.samples) {
        // Hot path: scrapes list their samples in the same order every time, so first check the series that held
        // this position last time; only on a mismatch build a key and look it up.
        const expected = t.layout === null ? undefined : t.layout[n];
        let id: number | undefined;
        if (expected !== undefined) {
          const m = this.meta[expected];
          if (m.name === s.name && sameLabels(s.labels, m.labels, m.labelCount)) {
            id = expected;
            // Once the parser's series cache holds a series it hands out the same name and label value strings
            // every scrape: kept here, later comparisons are of identical strings, the cheapest there are.
            m.name = s.name;
            if (m.adopt > 0) {
              m.adopt--;
              m.labels = adoptLabels(s.labels);
            }
          }
        }
        let fk = '';
        if (id === undefined) {
          fk = seriesKeyIn(s.name, s.labels, Object.keys(s.labels));
          id = t.fast.get(fk);
        }
        if (id === undefined) {
          const ck = canonicalSeriesKey(s.name, s.labels);
          id = t.canon.get(ck);
          if (id === undefined) {
            if (this.meta.length >= MAX_SERIES) {
              this.overflowSamples++;
              continue;
            }
            id = this.meta.length;
            const labels = { ...s.labels };
            this.meta.push({
              type: fam.type,
              name: s.name,
              family: fam.name,
              labels,
              labelCount: Object.keys(labels).length,
              adopt: ADOPT_LABELS_SCRAPES,
            });
            this.state.ensure(id);
            if (id >= this.seen.length) this.seen = doubled(this.seen, id + 1);
            t.canon.set(ck, id);
            const rec: SeriesRecord = { k: 'series', id, g: target, f: fam.name, n: s.name, l: labels };
            pre += JSON.stringify(rec) + '\n';
            newSeries++;
          }
          t.fast.set(fk, id);
        }
        // A sample listed twice in one scrape (malformed exposition): the first one counts.
        if (this.seen[id] === stamp) continue;
        this.seen[id] = stamp;
        if (n === this.ids.length) this.grow();
        this.ids[n] = id;
        this.vals[n++] = s.value;
      }
    }
    const ids = this.ids.subarray(0, n);

    if (t.layout === null || !sameIds(ids, t.layout)) {
      const layout = Array.from(ids);
      t.layout = layout;
      const pred = predecessors(layout, (id) => this.meta[id]);
      t.pred = new Int32Array(layout.length).fill(-1);
      for (const [slot, p] of pred) t.pred[slot] = p;
      const rec: LayoutRecord = { k: 'layout', g: target, ids: layout };
      if (pred.length) rec.pred = pred;
      pre += JSON.stringify(rec) + '\n';
    }
    if (this.chain.length < ids.length) this.chain = new Float64Array(ids.length * 2);
    return { text: pre + this.row(ts, t, ids, this.vals), samples: n, newSeries, dropped: null };
  }

  private grow(): void {
    this.ids = doubled(this.ids);
    this.vals = doubled(this.vals);
  }

  /** The row of `ids` (this scrape's series, in order) with their values, the first ids.length of `vals`. */
  private row(ts: number, t: EncTarget, ids: Int32Array, vals: Float64Array): string {
    const st = this.state;
    const chain = this.chain;
    const pred = t.pred;
    let out = '{"k":"s","t":' + ts + ',"g":' + t.gJson + ',"v":[';
    let first = true;
    let lastSlot = -1;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const v = vals[i];
      let numeric = false;
      let delta = 0;
      const d = st.scale[id];
      if (d === UNSET) {
        // fall through to absolute
      } else if (Object.is(v, st.prev[id])) {
        numeric = true;
      } else if (d >= 0 && v - v === 0 && v !== 0) {
        const p = P10[d];
        const mm = Math.round(v * p);
        if (mm / p === v && mm <= Number.MAX_SAFE_INTEGER && mm >= -Number.MAX_SAFE_INTEGER) {
          delta = mm - st.m[id];
          if (Number.isSafeInteger(delta)) {
            numeric = true;
            st.m[id] = mm;
            st.prev[id] = v;
          }
        }
      } else if (d >= 0 && v === 0 && !Object.is(v, -0)) {
        numeric = true;
        delta = -st.m[id];
        st.m[id] = 0;
        st.prev[id] = 0;
      }
      let tok = 0;
      if (numeric) {
        const base = pred[i] >= 0 ? chain[pred[i]] : 0;
        tok = delta - base;
        if (!Number.isSafeInteger(tok)) numeric = false;
      }
      if (numeric) {
        chain[i] = delta;
        if (tok === 0) continue;
        out += (first ? '' : ',') + (i - lastSlot) + ',' + tok;
      } else {
        chain[i] = 0;
        const tok = absoluteToken(v);
        const dec = decimalToken(tok);
        if (dec) st.setAbsolute(id, v, dec.m, dec.d);
        else st.setAbsolute(id, v, 0, -1);
        out += (first ? '' : ',') + (i - lastSlot) + ',"' + tok + '"';
      }
      first = false;
      lastSlot = i;
    }
    return out + ']}\n';
  }
}

function sameIds(a: Int32Array, b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ---- Decoder ---------------------------------------------------------------------------------------------------

export interface DecodedSeriesMeta extends SeriesMeta {
  id: number;
  target: string;
}

interface DecTarget {
  ids: Int32Array;
  pred: Int32Array;
  /** Slots whose series had no value when the layout was set: the next row must give them one. */
  unset: number[] | null;
  /** Slots to decode, ascending: the kept series and their predecessors; null when every slot is kept. */
  needed: Int32Array | null;
}

export class ScrapeDecoder {
  /**
   * @param keep whether a series' values are wanted. Series not wanted (and not a predecessor of one that is) are
   *   not decoded at all, which is what makes opening a few series of a long session fast.
   */
  constructor(private readonly keep: (id: number) => boolean = () => true) {}

  readonly series: DecodedSeriesMeta[] = [];
  readonly families = new Map<string, FamilyRecord>();
  private readonly layouts = new Map<string, DecTarget>();
  private readonly state = new SeriesState();
  private chain = new Float64Array(1024);

  family(rec: FamilyRecord): void {
    this.families.set(rec.g + '\u0000' + rec.f, rec);
  }

  addSeries(rec: SeriesRecord): DecodedSeriesMeta {
    if (rec.id !== this.series.length)
      throw new RecordDamageError(`series id ${rec.id} out of sequence (expected ${this.series.length})`);
    const fam = this.families.get(rec.g + '\u0000' + rec.f);
    if (!fam) throw new RecordDamageError(`series ${rec.id} refers to unknown family ${rec.f}`);
    const meta: DecodedSeriesMeta = {
      id: rec.id,
      target: rec.g,
      name: rec.n,
      family: rec.f,
      labels: rec.l,
      type: fam.ty,
    };
    this.series.push(meta);
    this.state.ensure(rec.id);
    return meta;
  }

  layout(rec: LayoutRecord): void {
    const ids = Int32Array.from(rec.ids);
    for (const id of ids) {
      const s = this.series[id];
      if (!s || s.target !== rec.g)
        throw new RecordDamageError(`layout of ${rec.g} names unknown series ${id}`);
    }
    const pred = new Int32Array(ids.length).fill(-1);
    for (const [slot, p] of rec.pred ?? []) {
      if (!(slot >= 0 && slot < ids.length && p >= 0 && p < slot))
        throw new RecordDamageError(`layout of ${rec.g} has an invalid predecessor pair [${slot},${p}]`);
      pred[slot] = p;
    }
    const need = new Uint8Array(ids.length);
    let all = true;
    for (let slot = ids.length - 1; slot >= 0; slot--) {
      if (this.keep(ids[slot])) need[slot] = 1;
      if (need[slot] && pred[slot] >= 0) need[pred[slot]] = 1;
      if (!need[slot]) all = false;
    }
    const needed = all ? null : Int32Array.from(need.keys()).filter((slot) => need[slot] === 1);
    const unset: number[] = [];
    for (let slot = 0; slot < ids.length; slot++)
      if (need[slot] && this.state.scale[ids[slot]] === UNSET) unset.push(slot);
    this.layouts.set(rec.g, { ids, pred, unset: unset.length ? unset : null, needed });
    if (this.chain.length < ids.length) this.chain = new Float64Array(ids.length * 2);
  }

  /** The current slot → series id map of `target` (changes only through layout()). */
  layoutOf(target: string): Int32Array | undefined {
    return this.layouts.get(target)?.ids;
  }

  /**
   * Decodes a parsed row. When `out` is given, the value of each slot with outIdx[slot] ≥ 0 is written to
   * out[outIdx[slot] + r]. Returns the slot → series id map the row applies to.
   */
  row(pr: ParsedRow, out: Float64Array | null, outIdx: Int32Array | null, r: number): Int32Array {
    const lay = this.layouts.get(pr.g);
    if (!lay) throw new RecordDamageError(`scrape of ${pr.g} before its layout`);
    if (lay.needed === null) this.rowAll(lay, pr, out, outIdx, r);
    else this.rowNeeded(lay, lay.needed, pr, out, outIdx, r);
    if (lay.unset !== null) {
      // A series must get its first value as an absolute token; if it did not, the slot read above was garbage.
      for (const slot of lay.unset)
        if (this.state.scale[lay.ids[slot]] === UNSET)
          throw new RecordDamageError(
            `scrape of ${pr.g} at ${pr.t}: series ${lay.ids[slot]} has no value yet`,
          );
      lay.unset = null;
    }
    return lay.ids;
  }

  private rowAll(
    lay: DecTarget,
    pr: ParsedRow,
    out: Float64Array | null,
    outIdx: Int32Array | null,
    r: number,
  ): void {
    const { ids, pred } = lay;
    const n = ids.length;
    const st = this.state;
    const prev = st.prev;
    const chain = this.chain;
    const { gap, count } = pr;
    let s = 0;
    let lastTokSlot = -1;
    for (let k = 0; ; k++) {
      let stop = n;
      if (k < count) {
        stop = lastTokSlot + gap[k];
        if (stop >= n)
          throw new RecordDamageError(`scrape of ${pr.g} at ${pr.t}: token beyond the layout's ${n} slots`);
      }
      // Slots without a token: unchanged, or (histogram buckets) the same delta as their predecessor.
      for (; s < stop; s++) {
        const id = ids[s];
        const p = pred[s];
        if (p >= 0) {
          const delta = chain[p];
          chain[s] = delta;
          if (delta !== 0) applyDelta(st, id, delta, pr);
        } else chain[s] = 0;
        if (out !== null) {
          const o = (outIdx as Int32Array)[s];
          if (o >= 0) out[o + r] = prev[id];
        }
      }
      if (k >= count) break;
      this.token(lay, pr, k, s);
      if (out !== null) {
        const o = (outIdx as Int32Array)[s];
        if (o >= 0) out[o + r] = prev[ids[s]];
      }
      lastTokSlot = s;
      s++;
    }
  }

  /** Like rowAll, but visits only the needed slots; tokens of other slots are checked for position only. */
  private rowNeeded(
    lay: DecTarget,
    needed: Int32Array,
    pr: ParsedRow,
    out: Float64Array | null,
    outIdx: Int32Array | null,
    r: number,
  ): void {
    const { ids, pred } = lay;
    const n = ids.length;
    const st = this.state;
    const prev = st.prev;
    const chain = this.chain;
    const { gap, count } = pr;
    let k = 0;
    let tokSlot = count > 0 ? gap[0] - 1 : n;
    for (let i = 0; i < needed.length; i++) {
      const s = needed[i];
      while (tokSlot < s) {
        k++;
        tokSlot = k < count ? tokSlot + gap[k] : n;
      }
      if (tokSlot >= n && k < count)
        throw new RecordDamageError(`scrape of ${pr.g} at ${pr.t}: token beyond the layout's ${n} slots`);
      const id = ids[s];
      if (tokSlot === s) this.token(lay, pr, k, s);
      else {
        const p = pred[s];
        if (p >= 0) {
          const delta = chain[p];
          chain[s] = delta;
          if (delta !== 0) applyDelta(st, id, delta, pr);
        } else chain[s] = 0;
      }
      if (out !== null) {
        const o = (outIdx as Int32Array)[s];
        if (o >= 0) out[o + r] = prev[id];
      }
    }
    while (k < count) {
      if (tokSlot >= n)
        throw new RecordDamageError(`scrape of ${pr.g} at ${pr.t}: token beyond the layout's ${n} slots`);
      k++;
      if (k < count) tokSlot += gap[k];
    }
  }

  /** Applies token k of the row to slot s. */
  private token(lay: DecTarget, pr: ParsedRow, k: number, s: number): void {
    const id = lay.ids[s];
    const st = this.state;
    if (pr.kind[k] === TOKEN_DELTA) {
      const p = lay.pred[s];
      const delta = p >= 0 ? pr.num[k] + this.chain[p] : pr.num[k];
      this.chain[s] = delta;
      if (st.scale[id] === UNSET)
        throw new RecordDamageError(`scrape of ${pr.g} at ${pr.t}: series ${id} has no value yet`);
      if (delta !== 0) applyDelta(st, id, delta, pr);
    } else {
      this.chain[s] = 0;
      st.setAbsolute(id, pr.value(k), pr.mant[k], pr.kind[k] === TOKEN_DECIMAL ? pr.dec[k] : -1);
    }
  }
}

function applyDelta(st: SeriesState, id: number, delta: number, pr: ParsedRow): void {
  const d = st.scale[id];
  if (d < 0) throw new RecordDamageError(`scrape of ${pr.g} at ${pr.t}: delta for non-decimal series ${id}`);
  const m = st.m[id] + delta;
  st.m[id] = m;
  st.prev[id] = m / P10[d];
}
