// The review cursor drawn on every time chart: a solid line at the moment the cards show. Registered once for
// all charts (Chart.js global plugin), so the chart component itself needs no change; set to null outside review.
import type { Plugin } from 'chart.js';
import { Chart, cssVar } from '../charts/setup';

let cursor: number | null = null;

const plugin: Plugin<'line'> = {
  id: 'pdcReviewCursor',
  afterDatasetsDraw(chart) {
    const x = chart.scales.x;
    const area = chart.chartArea;
    if (cursor === null || !x || !area || cursor < x.min || cursor > x.max) return;
    const px = x.getPixelForValue(cursor);
    const { ctx } = chart;
    ctx.save();
    ctx.strokeStyle = cssVar('--text', '#222');
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(px, area.top);
    ctx.lineTo(px, area.bottom);
    ctx.stroke();
    ctx.fillStyle = ctx.strokeStyle;
    ctx.beginPath();
    ctx.arc(px, area.top, 3.5, 0, Math.PI * 2);
    ctx.fill();
    ctx.restore();
  },
};

Chart.register(plugin);

let frame = 0;

/** Moves the cursor line on every chart (one redraw per animation frame at most). */
export function setChartCursor(t: number | null): void {
  if (t === cursor) return;
  cursor = t;
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    for (const c of Object.values(Chart.instances)) c.draw();
  });
}
