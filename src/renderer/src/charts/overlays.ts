// Chart.js plugins drawn on every time chart: the shared crosshair, timeline event markers (restarts, state
// changes; an alert as one band from its start to its end, overlapping alerts as one band with their count) and
// an opaque background so an exported PNG looks like the screen.
import type { Chart, Plugin } from 'chart.js';
import type { AppEvent } from '@shared/domain';
import { crosshairTime, setCrosshair } from '../state/crosshair';
import { chartMarks, type ChartMarks } from './marker-groups';

/** The marks of an event list, worked out once per list (a chart draws many times with the same one). */
const marksCache = new WeakMap<readonly AppEvent[], ChartMarks>();
function marksOf(events: readonly AppEvent[]): ChartMarks {
  let m = marksCache.get(events);
  if (!m) marksCache.set(events, (m = chartMarks(events)));
  return m;
}

export interface OverlayOptions {
  events: AppEvent[];
  colors: { crosshair: string; info: string; warning: string; error: string; background: string };
  onPick?: (ts: number) => void;
}

/** The options object is mutated in place (events change) and read at draw time. */
export function overlayPlugin(opts: OverlayOptions): Plugin<'line'> {
  return {
    id: 'pdcOverlay',
    beforeDraw(chart: Chart) {
      const { ctx, width, height } = chart;
      ctx.save();
      ctx.fillStyle = opts.colors.background;
      ctx.fillRect(0, 0, width, height);
      ctx.restore();
    },
    afterDatasetsDraw(chart: Chart) {
      const x = chart.scales.x;
      const area = chart.chartArea;
      if (!x || !area) return;
      const { ctx } = chart;
      ctx.save();
      const marks = marksOf(opts.events);
      // An alert's band: shaded across the plot from its start to its end (or the chart's right edge while it
      // fires), a strip along the top, its start marked like an event, and how many alerts overlap in it.
      const starts: AppEvent[] = [];
      for (const b of marks.bands) {
        const to = b.to ?? x.max;
        if (to < x.min || b.from > x.max) continue;
        const x1 = Math.max(area.left, Math.round(x.getPixelForValue(Math.max(b.from, x.min))));
        const x2 = Math.min(area.right, Math.round(x.getPixelForValue(Math.min(to, x.max))));
        ctx.fillStyle = opts.colors[b.severity];
        ctx.globalAlpha = 0.08;
        ctx.fillRect(x1, area.top, Math.max(1, x2 - x1), area.bottom - area.top);
        ctx.globalAlpha = 0.6;
        ctx.fillRect(x1, area.top, Math.max(1, x2 - x1), 3);
        ctx.globalAlpha = 1;
        if (b.from >= x.min) {
          starts.push({ ...b.start, severity: b.severity });
          if (b.count > 1) {
            ctx.font = '600 10px sans-serif';
            ctx.fillText(String(b.count), x1 + 6, area.top + 14);
          }
        }
      }
      // One path per severity for every marker in the window, one marker per pixel: drawn one by one, a busy
      // fleet's few hundred events cost more than the chart's lines on each live update.
      const bySeverity = new Map<AppEvent['severity'], Set<number>>();
      for (const list of [marks.points, starts])
        for (const e of list) {
          if (e.ts < x.min || e.ts > x.max) continue;
          let at = bySeverity.get(e.severity);
          if (!at) bySeverity.set(e.severity, (at = new Set()));
          at.add(Math.round(x.getPixelForValue(e.ts)));
        }
      for (const [severity, at] of bySeverity) {
        ctx.strokeStyle = ctx.fillStyle = opts.colors[severity];
        ctx.globalAlpha = 0.55;
        ctx.setLineDash([3, 3]);
        ctx.beginPath();
        for (const px of at) {
          ctx.moveTo(px, area.top);
          ctx.lineTo(px, area.bottom);
        }
        ctx.stroke();
        ctx.globalAlpha = 1;
        ctx.setLineDash([]);
        ctx.beginPath();
        for (const px of at) {
          ctx.moveTo(px - 4, area.top);
          ctx.lineTo(px + 4, area.top);
          ctx.lineTo(px, area.top + 6);
          ctx.closePath();
        }
        ctx.fill();
      }
      const t = crosshairTime();
      if (t !== null && t >= x.min && t <= x.max) {
        const px = x.getPixelForValue(t);
        ctx.strokeStyle = opts.colors.crosshair;
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(px, area.top);
        ctx.lineTo(px, area.bottom);
        ctx.stroke();
      }
      ctx.restore();
    },
    afterEvent(chart: Chart, args) {
      const e = args.event;
      const x = chart.scales.x;
      if (!x) return;
      if (e.type === 'mouseout') setCrosshair(null);
      else if (e.type === 'mousemove' && e.x !== null) {
        const a = chart.chartArea;
        if (e.x >= a.left && e.x <= a.right) setCrosshair(Math.round(x.getValueForPixel(e.x) ?? 0));
      } else if (e.type === 'click' && e.x !== null && opts.onPick) {
        const v = x.getValueForPixel(e.x);
        if (v !== undefined) opts.onPick(Math.round(v));
      }
    },
  };
}

/**
 * The mark nearest to `ts` within `px` pixels on this chart, for the marker caption: an event, or an alert band's
 * start (titled with how many alerts overlap in it).
 */
export function nearestEvent(chart: Chart, events: AppEvent[], ts: number, px = 6): AppEvent | null {
  const x = chart.scales.x;
  if (!x) return null;
  const at = x.getPixelForValue(ts);
  const marks = marksOf(events);
  let best: AppEvent | null = null;
  let bestD = px;
  for (const list of [marks.points, marks.bands.map((b) => b.start)])
    for (const e of list) {
      if (e.ts < x.min || e.ts > x.max) continue;
      const d = Math.abs(x.getPixelForValue(e.ts) - at);
      if (d <= bestD) {
        best = e;
        bestD = d;
      }
    }
  return best;
}

/** How many alert bands a chart draws for these events (its `data-alert-bands`, which tests read). */
export function alertBandCount(events: readonly AppEvent[]): number {
  return marksOf(events).bands.length;
}
