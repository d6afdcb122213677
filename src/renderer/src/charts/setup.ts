// Chart.js, tree-shaken: only what our time-series charts use, plus the zoom plugin.
import {
  Chart,
  Filler,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  TimeScale,
  Tooltip,
} from 'chart.js';
import zoomPlugin from 'chartjs-plugin-zoom';
import 'chartjs-adapter-date-fns';

Chart.register(
  LineController,
  LineElement,
  PointElement,
  LinearScale,
  TimeScale,
  Tooltip,
  Legend,
  Filler,
  zoomPlugin,
);

export { Chart };

/** A CSS custom property of the current theme, e.g. cssVar('--decode'). */
export function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/**
 * Benchmark switch: `?decimate=0` asks the core for every stored point and turns Chart.js decimation off,
 * so the same charts can be measured with and without it side by side.
 */
export const DECIMATE = new URLSearchParams(window.location.search).get('decimate') !== '0';

/** Benchmark switch: `?live=0` stops appending live points, to time history and zoom alone. */
export const LIVE = new URLSearchParams(window.location.search).get('live') !== '0';

/** Benchmark switch: `?batch=0` makes every chart ask for its own history, as before page batching. */
export const BATCH = new URLSearchParams(window.location.search).get('batch') !== '0';

/**
 * Benchmark switch: `?legend=canvas` draws the legend on the canvas with Chart.js's plugin, as before the HTML
 * legend, so both can be measured side by side.
 */
export const CANVAS_LEGEND = new URLSearchParams(window.location.search).get('legend') === 'canvas';
