// A chart's data as CSV: one row per timestamp, one column per series (no DOM, so it is unit-tested in Node).
import type { SignalKey } from '@shared/signals/spec';

export interface CsvSeries {
  label: string;
  key: SignalKey;
  data: ReadonlyArray<{ x: number; y: number | null }>;
}

export function toCsv(series: readonly CsvSeries[]): string {
  const times = [...new Set(series.flatMap((s) => s.data.map((p) => p.x)))].sort((a, b) => a - b);
  const maps = series.map((s) => new Map(s.data.map((p) => [p.x, p.y])));
  const esc = (v: string): string => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const lines = [['time', 'epoch_ms', ...series.map((s) => `${s.label} [${s.key}]`)].map(esc).join(',')];
  for (const t of times) {
    const row = [new Date(t).toISOString(), String(t)];
    for (const m of maps) {
      const v = m.get(t);
      row.push(v === null || v === undefined ? '' : String(v));
    }
    lines.push(row.join(','));
  }
  return lines.join('\n') + '\n';
}
