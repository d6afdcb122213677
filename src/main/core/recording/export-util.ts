// Helpers shared by the CSV and OpenMetrics exports.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { RecordedSeries, Recording } from './types';

/** Which samples of a recording an export covers. */
export interface ExportSelection {
  fromMs?: number;
  toMs?: number;
  series?: (s: RecordedSeries) => boolean;
}

/** Exact text of a value: shortest round-trip decimal, NaN, +Inf, -Inf, -0. */
export function fmtValue(v: number): string {
  if (v !== v) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return Object.is(v, -0) ? '-0' : String(v);
}

/** Index range [lo, hi) of `t` within [fromMs, toMs]. */
export function timeRange(t: Float64Array, fromMs: number, toMs: number): [number, number] {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid] < fromMs) lo = mid + 1;
    else hi = mid;
  }
  const start = lo;
  hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t[mid] <= toMs) lo = mid + 1;
    else hi = mid;
  }
  return [start, lo];
}

/** Writes text chunks to a new file (it must not exist), with backpressure. */
export async function writeChunks(chunks: Iterable<string>, outPath: string, what: string): Promise<void> {
  // Exports hold what the recording holds (command lines, journal text): private to the user, as recordings are.
  const file = createWriteStream(outPath, { flags: 'wx', mode: 0o600 });
  let failed: Error | null = null;
  file.on('error', (err) => {
    failed = err;
  });
  try {
    for (const chunk of chunks) {
      if (failed) break;
      if (!file.write(chunk)) await once(file, 'drain');
    }
    file.end();
    if (!file.closed) await once(file, 'close');
  } catch (err) {
    failed ??= err as Error;
  }
  if (failed) {
    file.destroy();
    throw new Error(`${what} to ${outPath} failed: ${(failed as Error).message}`, { cause: failed });
  }
}

/** How many samples the selection covers (a CSV row or an OpenMetrics sample each). */
export function countSelected(rec: Recording, sel: ExportSelection): number {
  let n = 0;
  for (const s of rec.series) {
    if (sel.series && !sel.series(s)) continue;
    const [lo, hi] = timeRange(s.t, sel.fromMs ?? -Infinity, sel.toMs ?? Infinity);
    n += Math.max(0, hi - lo);
  }
  return n;
}

/**
 * Joins an export into one string, refusing with a RangeError when `count` (counted before any chunk is made)
 * is above `limit`: the in-memory form is for modest ranges, files take any size.
 */
export function boundedExportString(
  chunks: Iterable<string>,
  count: number,
  limit: number,
  what: { format: string; unit: string },
): string {
  if (count > limit)
    throw new RangeError(
      `The ${what.format} export would have ${count} ${what.unit} (limit ${limit} in memory): narrow the time range or the series, or export to a file.`,
    );
  let out = '';
  for (const c of chunks) out += c;
  return out;
}
