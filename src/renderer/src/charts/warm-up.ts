// One throwaway chart, drawn off screen once the app is first idle. V8 compiles a function the first time it
// runs, and most of Chart.js (options resolution, the time scale, date-fns' formatting, line and fill drawing)
// first runs when the first real chart is built: a profile of a review opened from the sessions list (no chart
// on screen before it) had ≈ 250 ms of one-off compilation inside the first two chart builds, on the path to
// the overview. Drawing one chart of the same kind while nothing else happens moves that cost off that path.
import { Chart } from './setup';

const HOUR = 3_600_000;

export function warmChartCode(): void {
  const canvas = document.createElement('canvas');
  canvas.width = 400;
  canvas.height = 200;
  const now = Date.now();
  const points = (phase: number): { x: number; y: number | null }[] =>
    Array.from({ length: 300 }, (_, i) => ({
      x: now - 24 * HOUR + i * 288_000,
      y: i % 50 === 7 ? null : 0.5 + 0.4 * Math.sin(i / 20 + phase),
    }));
  let chart: Chart<'line', { x: number; y: number | null }[]> | null = null;
  try {
    chart = new Chart(canvas, {
      type: 'line',
      data: {
        datasets: [
          { label: 'a', data: points(0), fill: 'origin', borderWidth: 1.5, pointRadius: 0, parsing: false },
          {
            label: 'b',
            data: points(1),
            borderDash: [4, 3],
            borderWidth: 1.5,
            pointRadius: 0,
            parsing: false,
          },
        ],
      },
      options: {
        // Off screen and unattached: drawn at the canvas's own size, no resize observer.
        responsive: false,
        animation: false,
        parsing: false,
        normalized: true,
        scales: {
          x: {
            type: 'time',
            min: now - 24 * HOUR,
            max: now,
            time: {
              unit: 'hour',
              displayFormats: { second: 'HH:mm:ss', minute: 'HH:mm', hour: 'HH:mm', day: 'MMM d' },
            },
            ticks: { maxRotation: 0, minRotation: 0, sampleSize: 8, autoSkipPadding: 24 },
          },
          y: { beginAtZero: true, ticks: { maxTicksLimit: 6, callback: (v) => String(v) } },
        },
        plugins: { legend: { display: true, position: 'bottom' } },
      },
    });
    // A second window and tick unit, as a zoom or a live update would redraw it.
    const x = chart.options.scales!.x as {
      min: number;
      max: number;
      time: { unit: string; stepSize: number };
    };
    x.min = now - 10 * 60_000;
    x.max = now;
    x.time.unit = 'minute';
    x.time.stepSize = 2;
    chart.update('none');
  } catch (err) {
    // Only a head start: the real charts report their own failures.
    console.warn('PD Console: the chart warm-up failed', err);
  } finally {
    chart?.destroy();
  }
}

if (typeof requestIdleCallback === 'function') requestIdleCallback(warmChartCode, { timeout: 3000 });
