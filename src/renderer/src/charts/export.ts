// Export what a chart shows: the canvas as PNG, its data as CSV (one row per timestamp, one column per series).
import type { Chart, LegendOptions } from 'chart.js';
import { toCsv, type CsvSeries } from './csv';

/** A file the backend exported, downloaded by the browser in browser mode (see inBrowser). */
export function downloadExport(fileName: string): void {
  download(`/exports/${encodeURIComponent(fileName)}`, fileName);
}

function download(url: string, name: string): void {
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
}

/**
 * The picture has the chart's legend in it: on screen the legend is HTML beside the canvas and Chart.js's is
 * off, so it is drawn on the canvas for the export and taken off again before the page paints.
 */
export function downloadPng(chart: Chart, name: string, legend?: LegendOptions<'line'> | null): void {
  const plugins = chart.options.plugins as unknown as Record<string, unknown>;
  const before = plugins.legend;
  const draw = legend && before === false;
  if (draw) {
    plugins.legend = legend;
    chart.update('none');
  }
  try {
    download(chart.toBase64Image('image/png', 1), name);
  } finally {
    if (draw) {
      plugins.legend = before;
      chart.update('none');
    }
  }
}

export function downloadCsv(series: readonly CsvSeries[], name: string): void {
  const url = URL.createObjectURL(new Blob([toCsv(series)], { type: 'text/csv' }));
  download(url, name);
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
