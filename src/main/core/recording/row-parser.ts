// Scrape rows are ~99% of a recording's lines. JSON.parse would build an array per row and a string per absolute
// value; this parser reads the writer's canonical row text straight from the decompressed bytes into typed
// scratch arrays. Anything not in canonical form (a file re-serialised by another tool) makes it return false,
// and the caller falls back to JSON.parse + ParsedRow.fromRecord, which accept any valid JSON.
import { decimalToken, MAX_SCALE, POW10, type ScrapeRecord } from './format';

export const TOKEN_DELTA = 0;
/** Absolute plain decimal: num is the value, mant/dec its mantissa and scale. */
export const TOKEN_DECIMAL = 1;
/** Absolute value that is not a short decimal (full float in exponent form, NaN, ±Inf, -0, >15 digits…). */
export const TOKEN_RAW = 2;
/** TOKEN_RAW not parsed yet: its text is bytes [start[k], end[k]) of `buf` (parsing a float string is the
 * costliest step of reading a row, and a filtered open never needs most of them). */
export const TOKEN_RAW_TEXT = 3;

const P10: readonly number[] = POW10.slice();

/** Thrown for a record that is well-formed JSON but inconsistent with what came before: the file is damaged. */
export class RecordDamageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordDamageError';
  }
}

/** One scrape row, decoded to tokens: gap[k] slots after the previous token, token kind[k]/num[k]. */
export class ParsedRow {
  t = 0;
  g = '';
  count = 0;
  gap = new Int32Array(0);
  kind = new Uint8Array(0);
  num = new Float64Array(0);
  mant = new Float64Array(0);
  dec = new Int8Array(0);
  start = new Int32Array(0);
  end = new Int32Array(0);
  /** The bytes TOKEN_RAW_TEXT tokens point into; valid until the next parse. */
  buf: Buffer | null = null;

  constructor(capacity = 1024) {
    this.grow(capacity);
  }

  private grow(capacity: number): void {
    const gap = new Int32Array(capacity);
    gap.set(this.gap);
    const kind = new Uint8Array(capacity);
    kind.set(this.kind);
    const num = new Float64Array(capacity);
    num.set(this.num);
    const mant = new Float64Array(capacity);
    mant.set(this.mant);
    const dec = new Int8Array(capacity);
    dec.set(this.dec);
    const start = new Int32Array(capacity);
    start.set(this.start);
    const end = new Int32Array(capacity);
    end.set(this.end);
    this.start = start;
    this.end = end;
    this.gap = gap;
    this.kind = kind;
    this.num = num;
    this.mant = mant;
    this.dec = dec;
  }

  /** Room for token k. */
  ensure(k: number): void {
    if (k >= this.gap.length) this.grow(Math.max(k + 1, this.gap.length * 2));
  }

  /** Value of absolute token k (parses a TOKEN_RAW_TEXT token now). */
  value(k: number): number {
    if (this.kind[k] !== TOKEN_RAW_TEXT) return this.num[k];
    const v = Number((this.buf as Buffer).toString('latin1', this.start[k], this.end[k]));
    this.kind[k] = TOKEN_RAW;
    this.num[k] = v;
    return v;
  }

  setAbsolute(k: number, tok: string): void {
    const dt = decimalToken(tok);
    if (dt) {
      this.kind[k] = TOKEN_DECIMAL;
      this.mant[k] = dt.m;
      this.dec[k] = dt.d;
      this.num[k] = dt.m / P10[dt.d];
      return;
    }
    let v: number;
    if (tok === 'NaN') v = NaN;
    else if (tok === '+Inf') v = Infinity;
    else if (tok === '-Inf') v = -Infinity;
    else {
      v = tok === '' || tok.trim() !== tok ? NaN : Number(tok);
      if (v !== v)
        throw new RecordDamageError(`scrape of ${this.g} at ${this.t}: bad value "${tok.slice(0, 40)}"`);
    }
    this.kind[k] = TOKEN_RAW;
    this.num[k] = v;
  }

  /** Fills the row from a JSON.parse'd record (the slow path); validates every token. */
  fromRecord(rec: ScrapeRecord): void {
    this.t = rec.t;
    this.g = rec.g;
    const v = rec.v;
    if (v.length % 2 !== 0) throw new RecordDamageError(`scrape of ${rec.g} at ${rec.t}: odd token list`);
    const count = v.length / 2;
    this.count = count;
    this.ensure(count);
    for (let k = 0; k < count; k++) {
      const gap = v[2 * k];
      const tok = v[2 * k + 1];
      if (typeof gap !== 'number' || !Number.isInteger(gap) || gap < 1 || gap > 0x7fffffff)
        throw new RecordDamageError(`scrape of ${rec.g} at ${rec.t}: bad slot gap ${String(gap)}`);
      this.gap[k] = gap;
      if (typeof tok === 'number') {
        if (!Number.isSafeInteger(tok))
          throw new RecordDamageError(`scrape of ${rec.g} at ${rec.t}: bad delta ${tok}`);
        this.kind[k] = TOKEN_DELTA;
        this.num[k] = tok;
      } else if (typeof tok === 'string') this.setAbsolute(k, tok);
      else throw new RecordDamageError(`scrape of ${rec.g} at ${rec.t}: bad token`);
    }
  }
}

// {"k":"s","t":
const PREFIX = [123, 34, 107, 34, 58, 34, 115, 34, 44, 34, 116, 34, 58];
// ,"g":"
const G_KEY = [44, 34, 103, 34, 58, 34];
// ","v":[
const V_KEY = [34, 44, 34, 118, 34, 58, 91];

export function isRowLine(buf: Uint8Array, a: number, b: number): boolean {
  if (b - a < PREFIX.length) return false;
  for (let i = 0; i < PREFIX.length; i++) if (buf[a + i] !== PREFIX[i]) return false;
  return true;
}

/** Just the timestamp of a row line (for scans that do not decode values); NaN if not canonical. */
export function rowTime(buf: Uint8Array, a: number, b: number): number {
  if (!isRowLine(buf, a, b)) return NaN;
  let t = 0;
  let i = a + PREFIX.length;
  const start = i;
  for (; i < b; i++) {
    const c = buf[i];
    if (c < 48 || c > 57) break;
    t = t * 10 + (c - 48);
  }
  return i > start && i < b && buf[i] === 44 ? t : NaN;
}

export class RowParser {
  private readonly targets: { bytes: Uint8Array; name: string }[] = [];

  /** Parses the canonical row text in buf[a, b) into pr. False if the text is not canonical (use JSON.parse). */
  parse(buf: Buffer, a: number, b: number, pr: ParsedRow): boolean {
    if (!isRowLine(buf, a, b)) return false;
    let i = a + PREFIX.length;
    // t: non-negative integer (epoch ms)
    let t = 0;
    const tStart = i;
    for (; i < b; i++) {
      const c = buf[i];
      if (c < 48 || c > 57) break;
      t = t * 10 + (c - 48);
    }
    if (i === tStart || i - tStart > 16) return false;
    for (let j = 0; j < G_KEY.length; j++, i++) if (buf[i] !== G_KEY[j]) return false;
    const gStart = i;
    for (; i < b; i++) {
      const c = buf[i];
      if (c === 34) break;
      if (c === 92 || c < 32) return false;
    }
    if (i >= b) return false;
    const g = this.target(buf, gStart, i);
    for (let j = 0; j < V_KEY.length; j++, i++) if (buf[i] !== V_KEY[j]) return false;
    pr.t = t;
    pr.g = g;
    pr.buf = buf;
    let k = 0;
    if (buf[i] === 93) {
      i++;
    } else {
      for (;;) {
        // gap
        let gap = 0;
        const gs = i;
        for (; i < b; i++) {
          const c = buf[i];
          if (c < 48 || c > 57) break;
          gap = gap * 10 + (c - 48);
        }
        if (i === gs || i - gs > 9 || gap < 1 || buf[i] !== 44) return false;
        i++;
        pr.ensure(k);
        pr.gap[k] = gap;
        const c0 = buf[i];
        if (c0 === 34) {
          // absolute token
          i++;
          const ts = i;
          let neg = false;
          if (buf[i] === 45) {
            neg = true;
            i++;
          }
          let m = 0;
          let digits = 0;
          let d = -1;
          let plain = true;
          for (; i < b; i++) {
            const c = buf[i];
            if (c >= 48 && c <= 57) {
              m = m * 10 + (c - 48);
              digits++;
              if (d >= 0) d++;
            } else if (c === 46 && d < 0 && digits > 0) d = 0;
            else if (c === 34) break;
            else plain = false;
          }
          if (i >= b) return false;
          const te = i;
          i++;
          // Mirrors decimalToken(): plain decimal with a safe mantissa and scale ≤ MAX_SCALE.
          const dd = d < 0 ? 0 : d;
          if (
            plain &&
            digits > 0 &&
            d !== 0 &&
            m <= Number.MAX_SAFE_INTEGER &&
            !(neg && m === 0) &&
            dd <= MAX_SCALE
          ) {
            const mm = neg ? -m : m;
            pr.kind[k] = TOKEN_DECIMAL;
            pr.mant[k] = mm;
            pr.dec[k] = dd;
            pr.num[k] = mm / P10[dd];
          } else if (plain && digits > 0 && d !== 0) {
            // A plain decimal with too many digits (a full-precision float): raw, parsed only if used.
            pr.kind[k] = TOKEN_RAW_TEXT;
            pr.start[k] = ts;
            pr.end[k] = te;
          } else {
            pr.setAbsolute(k, buf.toString('latin1', ts, te));
          }
        } else {
          // delta token: -?digits
          let neg = false;
          if (c0 === 45) {
            neg = true;
            i++;
          }
          let x = 0;
          const xs = i;
          for (; i < b; i++) {
            const c = buf[i];
            if (c < 48 || c > 57) break;
            x = x * 10 + (c - 48);
          }
          if (i === xs || x > Number.MAX_SAFE_INTEGER) return false;
          pr.kind[k] = TOKEN_DELTA;
          pr.num[k] = neg ? -x : x;
        }
        k++;
        const sep = buf[i];
        if (sep === 44) {
          i++;
          continue;
        }
        if (sep === 93) {
          i++;
          break;
        }
        return false;
      }
    }
    if (i !== b - 1 || buf[i] !== 125) return false;
    pr.count = k;
    return true;
  }

  private target(buf: Uint8Array, s: number, e: number): string {
    const len = e - s;
    outer: for (const c of this.targets) {
      if (c.bytes.length !== len) continue;
      for (let j = 0; j < len; j++) if (c.bytes[j] !== buf[s + j]) continue outer;
      return c.name;
    }
    const bytes = buf.slice(s, e);
    const name = Buffer.from(bytes).toString('utf8');
    if (this.targets.length < 64) this.targets.push({ bytes, name });
    return name;
  }
}
