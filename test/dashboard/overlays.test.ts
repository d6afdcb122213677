// The timeline markers every chart draws over its lines: each event in the window gets its dashed line and
// triangle at its time's pixel, in its severity's colour, and a busy fleet's hundreds of events are drawn as
// one path per severity (the cost of a live update is then the chart's, not the event count's).
import { describe, expect, it } from 'vitest';
import type { Chart } from 'chart.js';
import type { AppEvent } from '../../src/shared/domain';
import { overlayPlugin, type OverlayOptions } from '../../src/renderer/src/charts/overlays';

/** A 2D context that records what is drawn: each stroke/fill with the moveTo x's of its path and its colour. */
function recordingContext(): {
  ctx: Chart['ctx'];
  strokes: { color: string; xs: number[]; dash: number[] }[];
  fills: { color: string; xs: number[] }[];
} {
  const strokes: { color: string; xs: number[]; dash: number[] }[] = [];
  const fills: { color: string; xs: number[] }[] = [];
  let path: number[] = [];
  let dash: number[] = [];
  const ctx = {
    strokeStyle: '',
    fillStyle: '',
    globalAlpha: 1,
    lineWidth: 1,
    save: () => undefined,
    restore: () => undefined,
    fillRect: () => undefined,
    fillText: () => undefined,
    font: '',
    setLineDash: (d: number[]) => (dash = d),
    beginPath: () => (path = []),
    moveTo: (x: number) => path.push(x),
    lineTo: () => undefined,
    closePath: () => undefined,
    stroke: () => strokes.push({ color: String(ctx.strokeStyle), xs: path, dash }),
    fill: () => fills.push({ color: String(ctx.fillStyle), xs: path }),
  };
  return { ctx: ctx as unknown as Chart['ctx'], strokes, fills };
}

const event = (id: number, ts: number, severity: AppEvent['severity']): AppEvent =>
  ({ id: String(id), ts, severity, title: `e${id}`, kind: 'alert' }) as unknown as AppEvent;

describe('overlayPlugin markers', () => {
  const drawMarkers = (events: AppEvent[], ctx: Chart['ctx']): void =>
    (overlayPlugin({ events, colors }).afterDatasetsDraw as unknown as (c: Chart) => void)(chartWith(ctx));
  const colors: OverlayOptions['colors'] = {
    crosshair: 'grey',
    info: 'blue',
    warning: 'orange',
    error: 'red',
    background: 'white',
  };
  // x from 0 to 1000 ms on pixels 0..100.
  const chartWith = (ctx: Chart['ctx']): Chart =>
    ({
      ctx,
      width: 100,
      height: 50,
      chartArea: { left: 0, right: 100, top: 5, bottom: 45 },
      scales: { x: { min: 0, max: 1000, getPixelForValue: (v: number) => v / 10 } },
    }) as unknown as Chart;

  it('draws each event in the window at its pixel, in its severity colour, and none outside it', () => {
    const { ctx, strokes, fills } = recordingContext();
    const events = [
      event(1, 100, 'error'),
      event(2, 500, 'info'),
      event(3, 2000, 'error'),
      event(4, 900, 'error'),
    ];
    drawMarkers(events, ctx);
    const red = strokes.find((s) => s.color === 'red')!;
    expect(red.xs.sort((a, b) => a - b)).toEqual([10, 90]);
    expect(red.dash).toEqual([3, 3]);
    expect(strokes.find((s) => s.color === 'blue')!.xs).toEqual([50]);
    // Triangles: three points each, starting 4 px left of the line.
    expect(fills.find((f) => f.color === 'red')!.xs.sort((a, b) => a - b)).toEqual([6, 86]);
    expect(fills.find((f) => f.color === 'blue')!.xs).toEqual([46]);
  });

  it('draws hundreds of events as one stroke and one fill per severity, one marker per pixel', () => {
    const { ctx, strokes, fills } = recordingContext();
    const events = Array.from({ length: 500 }, (_, i) => event(i, i * 2, i % 2 ? 'warning' : 'info'));
    drawMarkers(events, ctx);
    expect(strokes).toHaveLength(2);
    expect(fills).toHaveLength(2);
    // 500 events over 0..998 ms are 100 pixels (0..100): at most one marker per pixel and colour.
    for (const s of strokes) {
      expect(new Set(s.xs).size).toBe(s.xs.length);
      expect(s.xs.length).toBeLessThanOrEqual(101);
      expect(s.xs.length).toBeGreaterThan(90);
    }
  });

  it('draws an alert as one marker at its start, however many changes it had, and overlapping alerts as one', () => {
    const { ctx, fills } = recordingContext();
    const change = (id: number, ts: number, key: string, kind: 'fired' | 'updated' | 'resolved'): AppEvent =>
      ({
        id: String(id),
        ts,
        severity: kind === 'fired' ? 'warning' : 'info',
        title: `a ${key}`,
        kind: 'alert',
        alert: { key, ruleId: key, change: kind, notify: true },
      }) as AppEvent;
    const events = [
      change(1, 100, 'kv', 'fired'),
      // The workers it names change every 30 ms: one alert all along, not a comb of markers.
      ...Array.from({ length: 10 }, (_, i) => change(2 + i, 130 + i * 30, 'kv', 'updated')),
      // Another alert starts while the first fires: one band, counted.
      change(20, 300, 'stale', 'fired'),
      change(21, 450, 'stale', 'resolved'),
      change(22, 500, 'kv', 'resolved'),
      // A later alert of its own.
      change(30, 800, 'kv', 'fired'),
      change(31, 850, 'kv', 'resolved'),
    ];
    drawMarkers(events, ctx);
    const triangles = fills.filter((f) => f.xs.length > 0).flatMap((f) => f.xs);
    expect(triangles.sort((a, b) => a - b)).toEqual([6, 76]);
  });
});
