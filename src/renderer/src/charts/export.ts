// Export what a chart shows: the canvas as PNG, its data as CSV (one row per timestamp, one column per series).
import type { Chart } from 'chart.js';
import { toCsv, type CsvSeries } from './csv';

function download(url: string, name: string): void {
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
}

export function downloadPng(chart: Chart, name: string): void {
  download(chart.toBase64Image('image/png', 1), name);
}

export function downloadCsv(series: readonly CsvSeries[], name: string): void {
  const url = URL.createObjectURL(new Blob([toCsv(series)], { type: 'text/csv' }));
  download(url, name);
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
