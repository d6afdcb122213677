// CSV export of a time range: one row per sample (long format, RFC 4180), ordered by series then time, which
// spreadsheets and pandas pivot easily. Values are exact (shortest round-trip decimals; NaN, +Inf, -Inf).
import {
  boundedExportString,
  countSelected,
  fmtValue,
  timeRange,
  writeChunks,
  type ExportSelection,
} from './export-util';
import type { Recording } from './types';

export type CsvOptions = ExportSelection;

/** The string form is for modest ranges; beyond this many rows use writeCsvFile. */
export const MAX_CSV_STRING_ROWS = 2_000_000;

export const CSV_HEADER = 'timestamp_ms,time_utc,target,metric,labels,value';

function cell(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function labelText(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k].replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
    .join(',');
}

/** Yields the CSV text in chunks of whole rows (header first). */
export function* csvChunks(rec: Recording, opts: CsvOptions = {}): Generator<string> {
  const from = opts.fromMs ?? -Infinity;
  const to = opts.toMs ?? Infinity;
  yield CSV_HEADER + '\n';
  for (const s of rec.series) {
    if (opts.series && !opts.series(s)) continue;
    const [lo, hi] = timeRange(s.t, from, to);
    if (lo >= hi) continue;
    const fixed = `,${cell(s.target)},${cell(s.name)},${cell(labelText(s.labels))},`;
    let out = '';
    for (let i = lo; i < hi; i++) {
      const ts = s.t[i];
      out += `${ts},${new Date(ts).toISOString()}${fixed}${fmtValue(s.v[i])}\n`;
      if (out.length > 1 << 20) {
        yield out;
        out = '';
      }
    }
    if (out) yield out;
  }
}

/** CSV of the selected samples as one string. Throws RangeError above MAX_CSV_STRING_ROWS rows. */
export function exportCsv(rec: Recording, opts: CsvOptions = {}): string {
  return boundedExportString(csvChunks(rec, opts), countSelected(rec, opts), MAX_CSV_STRING_ROWS, {
    format: 'CSV',
    unit: 'rows',
  });
}

/** Streams the CSV to `outPath` (any size; the file must not exist). Resolves with the number of sample rows. */
export async function writeCsvFile(rec: Recording, opts: CsvOptions, outPath: string): Promise<number> {
  await writeChunks(csvChunks(rec, opts), outPath, 'CSV export');
  return countSelected(rec, opts);
}
