// Browser mode's server→page frames, text or binary. A frame that carries long runs of numbers (a page's
// history: 57 columns of ~300–1,200 points on the Metrics page, ≈ 0.5 MB as JSON) goes as one binary message:
// the frame as JSON with each such array replaced by a reference, then the arrays' numbers as float64. On a
// zoom the JSON took the core 3–5 ms to write and the page ≈ 2 ms to read, and its 0.5 MB took ≈ 10 ms more
// to cross the socket than the 0.27 MB of raw numbers. Any other frame is plain JSON text, as before.
//
// The page reads a binary frame back into exactly what JSON would have given it: plain arrays, with null where
// a number is not finite (JSON writes NaN and ±Infinity as null). Nothing outside the transport sees the
// difference, so the contract's types stay as they are.
import type { ServerFrame } from './contract';

/** Arrays shorter than this stay in the JSON: packing them saves nothing worth a reference. */
export const PACK_MIN_LENGTH = 64;

/** The key of a packed array's reference in the JSON part: `{ "\u0000f64": [first, count] }`. */
const REF = '\u0000f64';

/**
 * The frame as sent: JSON text, or when it holds arrays of at least PACK_MIN_LENGTH numbers (or nulls), bytes:
 * `u32 length of the JSON part (little-endian) · JSON part (UTF-8) · zero padding to 8 · float64 numbers`.
 */
export function encodeServerFrame(frame: ServerFrame): string | Uint8Array {
  // Most frames (events, journals, lists) hold no such array: written by JSON.stringify's own fast path, which a
  // replacer function would leave (a journal backlog took 1.8× as long with one).
  if (!hasRun(frame)) return JSON.stringify(frame);
  const runs: ArrayLike<number | null>[] = [];
  let total = 0;
  const json = JSON.stringify(frame, function (this: unknown, _key, value: unknown) {
    if (!Array.isArray(value) || value.length < PACK_MIN_LENGTH || !allNumbers(value)) return value;
    runs.push(value as (number | null)[]);
    const ref = { [REF]: [total, value.length] };
    total += value.length;
    return ref;
  });
  if (runs.length === 0) return json;
  const head = new TextEncoder().encode(json);
  const at = align8(4 + head.length);
  const bytes = new Uint8Array(at + total * 8);
  new DataView(bytes.buffer).setUint32(0, head.length, true);
  bytes.set(head, 4);
  const numbers = new Float64Array(bytes.buffer, at, total);
  let k = 0;
  for (const run of runs)
    for (let i = 0; i < run.length; i++) {
      const v = run[i];
      numbers[k++] = v === null ? NaN : v;
    }
  return bytes;
}

/**
 * A frame as received: text, or the bytes of a binary message — the ArrayBuffer a page's socket hands over, or
 * a view of one (Node's `ws` hands a Buffer, often at an odd offset in a shared pool, and float64 reads need
 * an 8-byte-aligned buffer: copied). Throws on anything else.
 */
export function decodeServerFrame(received: string | ArrayBuffer | Uint8Array): ServerFrame {
  if (typeof received === 'string') return JSON.parse(received) as ServerFrame;
  // A copy into a buffer of its own (a Buffer's slice() would be a view of the same pool).
  const data = received instanceof Uint8Array ? (new Uint8Array(received).buffer as ArrayBuffer) : received;
  if (data.byteLength < 4) throw new Error(`a binary frame of ${data.byteLength} bytes has no header`);
  const headLength = new DataView(data).getUint32(0, true);
  if (4 + headLength > data.byteLength)
    throw new Error(`a binary frame says its JSON part is ${headLength} bytes, past its end`);
  const at = align8(4 + headLength);
  const count = Math.max(0, Math.floor((data.byteLength - at) / 8));
  const numbers = new Float64Array(data, Math.min(at, data.byteLength), count);
  const json = new TextDecoder().decode(new Uint8Array(data, 4, headLength));
  return JSON.parse(json, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const ref = (value as Record<string, unknown>)[REF];
    if (ref === undefined) return value;
    const [first, n] = ref as [number, number];
    if (!Number.isInteger(first) || !Number.isInteger(n) || first < 0 || n < 0 || first + n > count)
      throw new Error(`a binary frame refers to numbers ${first}…${first + n} of ${count}`);
    const out = new Array<number | null>(n);
    for (let i = 0; i < n; i++) {
      const v = numbers[first + i];
      // As JSON carries them: NaN and ±Infinity become null, and −0 becomes 0.
      out[i] = v - v === 0 ? v + 0 : null;
    }
    return out;
  }) as ServerFrame;
}

/** Whether `value` holds, at any depth, an array that is packed (PACK_MIN_LENGTH or more numbers or nulls). */
function hasRun(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    if (value.length >= PACK_MIN_LENGTH && allNumbers(value)) return true;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v !== null && typeof v === 'object' && hasRun(v)) return true;
    }
    return false;
  }
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== null && typeof v === 'object' && hasRun(v)) return true;
  }
  return false;
}

function allNumbers(xs: unknown[]): boolean {
  for (let i = 0; i < xs.length; i++) {
    const v = xs[i];
    if (typeof v !== 'number' && v !== null) return false;
  }
  return true;
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
