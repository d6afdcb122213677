// The charted signals of a recording as one CSV table: a row per scrape time, a column per signal key (the keys
// `pd-console history` and the API take: decode.kv_ratio, decode.ttft_p99_s@decode-1, gpu.…), each role's values on
// the rows of its own scrapes and empty elsewhere. Computed by review's evaluator (buildReviewData), so the numbers
// are the ones the charts draw. The raw series (every exposition sample) are the other export, many times larger.
import { timeRange } from '../recording/export-util';
import type { SignalTable } from './signal-table';

export interface SignalsCsvOptions {
  fromMs?: number;
  toMs?: number;
}

/** Yields the CSV (header first) in chunks of whole rows, about 1 MB each. */
export function* signalsCsvChunks(table: SignalTable, opts: SignalsCsvOptions = {}): Generator<string> {
  const from = opts.fromMs ?? -Infinity;
  const to = opts.toMs ?? Infinity;
  const groups = [...table.groups.values()].map((g) => {
    const [lo, hi] = timeRange(g.t, from, to);
    return { t: g.t, cols: [...g.cols.entries()], at: lo, hi };
  });
  const keys = groups.flatMap((g) => g.cols.map(([k]) => k));
  yield ['time_utc', 'timestamp_ms', ...keys].map(cell).join(',') + '\n';
  let out = '';
  for (;;) {
    let t = Infinity;
    for (const g of groups) if (g.at < g.hi && g.t[g.at] < t) t = g.t[g.at];
    if (t === Infinity) break;
    out += `${new Date(t).toISOString()},${t}`;
    for (const g of groups) {
      const here = g.at < g.hi && g.t[g.at] === t;
      for (const [, col] of g.cols) out += here ? `,${f32(col[g.at])}` : ',';
      if (here) g.at++;
    }
    out += '\n';
    if (out.length > 1 << 20) {
      yield out;
      out = '';
    }
  }
  if (out) yield out;
}

function cell(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A stored float32 as the shortest decimal that reads back as it (0.35, not 0.3499999940395355); gaps empty. */
function f32(v: number): string {
  if (v !== v) return '';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  for (let p = 1; p < 9; p++) {
    const x = Number(v.toPrecision(p));
    if (Math.fround(x) === v) return String(x);
  }
  return String(v);
}
