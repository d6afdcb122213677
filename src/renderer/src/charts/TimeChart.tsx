// One time-series chart of signal keys: history fetched decimated from the core for the visible window,
// then live points appended in place (one push + update('none') per second, no re-render of history).
// Zoom by drag or Ctrl+wheel, pan with Shift+drag; every chart follows the same window and crosshair.
// Missing metrics say which name was expected; NaN and outages draw as gaps.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { ChartDataset } from 'chart.js';
import type { SeriesResult, SignalMissing, SignalUnit } from '@shared/contract';
import type { AppEvent, Role } from '@shared/domain';
import type { SignalKey } from '@shared/signals/spec';
import { errorText } from '../api/errors';
import { onSignals } from '../state/live';
import { onCrosshair } from '../state/crosshair';
import { RANGES, setFixedWindow, showAround, useUi, viewWindow, type View } from '../state/ui';
import { formatDateTime, formatTick, formatValue } from '../format';
import { Chart, cssVar, DECIMATE, LIVE } from './setup';
import { nearestEvent, overlayPlugin, type OverlayOptions } from './overlays';
import { recordPerf } from './perf';
import { downloadCsv, downloadPng } from './export';
import { useSeriesSource } from './SeriesBatch';

export interface SeriesSpec {
  key: SignalKey;
  label: string;
  /** A CSS custom property (e.g. --decode) or a colour. */
  color: string;
  fill?: boolean;
  dash?: number[];
}

export interface TimeChartProps {
  id: string;
  title: string;
  deploymentId: string;
  series: SeriesSpec[];
  unit: SignalUnit;
  yMin?: number;
  yMax?: number;
  /** Role whose journal a click opens (all units when absent). */
  role?: Role;
  events: AppEvent[];
  height?: number;
  /** Shown under the title: where the figure comes from. */
  source?: string;
}

type Point = { x: number; y: number | null };
type LoadState =
  | { s: 'loading' }
  | { s: 'ready' }
  | { s: 'empty'; firstMs: number | null }
  | { s: 'missing'; missing: Record<string, SignalMissing> }
  | { s: 'error'; message: string; hint?: string };

const MAX_FETCH_POINTS = 4000;

export function TimeChart(p: TimeChartProps): React.JSX.Element {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chartRef = useRef<Chart<'line', Point[]> | null>(null);
  const dataRef = useRef<Point[][]>([]);
  const overlay = useRef<OverlayOptions | null>(null);
  const firstMsRef = useRef<number | null>(null);
  const refetch = useRef<((why: 'view' | 'live') => Promise<void>) | null>(null);
  const onFetched = useRef<((points: number) => void) | null>(null);
  /**
   * The first history of a series set, which the chart is built with (one layout and one draw, where building
   * an empty chart and updating it cost two); `done` finishes what applying it does.
   */
  const first = useRef<{
    keys: string;
    data: Point[][];
    from: number;
    to: number;
    done: () => void;
  } | null>(null);
  /** When the chart's effect began waiting for that history (its first paint is timed from there). */
  const waitingSince = useRef(0);
  /** The series set the chart on the canvas was built for. */
  const builtFor = useRef<string | null>(null);
  const { view, theme } = useUi();
  const viewRef = useRef<View>(view);
  const [load, setLoad] = useState<LoadState>({ s: 'loading' });
  const [partial, setPartial] = useState<Record<string, SignalMissing>>({});
  const [marker, setMarker] = useState<AppEvent | null>(null);
  const keys = p.series.map((s) => s.key).join(',');
  /** The series set whose first history (or failure) has arrived: until then there is no chart to build. */
  const [answered, setAnswered] = useState<string | null>(null);
  const hasAnswer = answered === keys;
  const seriesSource = useSeriesSource();

  // Create the chart once per series set and theme; keep it in a ref for in-place updates.
  useEffect(() => {
    const el = canvas.current;
    if (!el) return;
    // Every chart of the page asked for its history in the layout phase: send it before building any chart,
    // so the core decimates while the page builds its charts (building one costs a layout and a draw).
    seriesSource.flush();
    if (!hasAnswer) {
      waitingSince.current = performance.now();
      return;
    }
    const initial = first.current?.keys === keys ? first.current : null;
    first.current = null;
    const mounted = initial ? waitingSince.current : performance.now();
    let painted = false;
    const colors = {
      crosshair: cssVar('--muted', '#888'),
      info: cssVar('--accent', '#2563eb'),
      warning: cssVar('--warn', '#b45309'),
      error: cssVar('--bad', '#b91c1c'),
      background: cssVar('--panel', '#fff'),
    };
    overlay.current = {
      events: p.events,
      colors,
      onPick: (ts) => showAround(ts, p.role),
    };
    // Axis and legend text follow the page's type size (larger on a 4K panel at 100 % scaling).
    Chart.defaults.font.size = Math.round(
      parseFloat(getComputedStyle(document.documentElement).fontSize) * 0.85,
    );
    const grid = cssVar('--grid', 'rgba(128,128,128,0.2)');
    const text = cssVar('--muted', '#888');
    dataRef.current = initial?.data ?? p.series.map(() => []);
    const datasets: ChartDataset<'line', Point[]>[] = p.series.map((s, i) => {
      const color = s.color.startsWith('--') ? cssVar(s.color, '#3b82f6') : s.color;
      return {
        label: s.label,
        data: dataRef.current[i],
        borderColor: color,
        backgroundColor: color + '26',
        fill: s.fill ? 'origin' : false,
        borderWidth: 1.5,
        borderDash: s.dash,
        pointRadius: 0,
        pointHoverRadius: 0,
        spanGaps: false,
        parsing: false,
        normalized: true,
      };
    });
    const chart = new Chart<'line', Point[]>(el, {
      type: 'line',
      data: { datasets },
      plugins: [
        overlayPlugin(overlay.current),
        {
          id: 'pdcFirstPaint',
          afterRender: () => {
            if (painted || !dataRef.current.some((d) => d.length > 0)) return;
            painted = true;
            recordPerf(p.id, 'first-paint', performance.now() - mounted, pointCount(dataRef.current));
          },
        },
      ],
      options: {
        animation: false,
        // Data arrive as {x, y} sorted by x: no parsing, and the time scale may skip sorting and de-duplicating.
        parsing: false,
        normalized: true,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        scales: {
          x: {
            type: 'time',
            ...(initial && { min: initial.from, max: initial.to }),
            time: {
              displayFormats: { second: 'HH:mm:ss', minute: 'HH:mm', hour: 'HH:mm', day: 'MMM d' },
              ...(initial && tickStep(initial.from, initial.to)),
            },
            grid: { color: grid },
            ticks: { color: text, maxRotation: 0, minRotation: 0, sampleSize: 8, autoSkipPadding: 24 },
          },
          y: {
            min: p.yMin,
            max: p.yMax,
            beginAtZero: true,
            grid: { color: grid },
            ticks: {
              color: text,
              maxTicksLimit: 6,
              stepSize: p.unit === 'bool' ? 1 : undefined,
              callback: (v) => formatTick(p.unit, Number(v)),
            },
            // Bytes read best on whole GiB steps, not on Chart.js's decimal "nice" numbers.
            afterBuildTicks: p.unit === 'bytes' ? gibTicks : undefined,
          },
        },
        plugins: {
          legend: {
            display: p.series.length > 1,
            position: 'bottom',
            labels: { color: text, boxWidth: 10, boxHeight: 2 },
          },
          tooltip: {
            callbacks: {
              title: (items) => (items[0] ? formatDateTime(items[0].parsed.x ?? 0) : ''),
              label: (c) => `${c.dataset.label}: ${formatValue(p.unit, c.parsed.y)}`,
            },
          },
          // Decimation happens in the core (min-max per pixel bucket) before data cross the bridge; running
          // Chart.js's plugin again on every live update would only cost time.
          decimation: { enabled: false },
          zoom: {
            zoom: {
              drag: { enabled: true, threshold: 8 },
              wheel: { enabled: true, modifierKey: 'ctrl' },
              mode: 'x',
              onZoomComplete: ({ chart: c }) => setFixedWindow(c.scales.x.min, c.scales.x.max),
            },
            pan: {
              enabled: true,
              mode: 'x',
              modifierKey: 'shift',
              onPanComplete: ({ chart: c }) => setFixedWindow(c.scales.x.min, c.scales.x.max),
            },
          },
        },
      },
    });
    chartRef.current = chart;
    builtFor.current = keys;

    let raf = 0;
    const offCross = onCrosshair((t) => {
      if (raf) return;
      raf = requestAnimationFrame(() => {
        raf = 0;
        chart.draw();
        const ev = overlay.current && t !== null ? nearestEvent(chart, overlay.current.events, t) : null;
        setMarker((m) => (m?.id === ev?.id ? m : ev));
      });
    });

    let livePoints = 0;
    let fetchedPoints = 0;
    onFetched.current = (n) => {
      fetchedPoints = n;
      livePoints = 0;
    };
    const offLive = onSignals(p.deploymentId, (ts, values) => {
      const v = viewRef.current;
      if (v.mode !== 'live' || !LIVE) return;
      let touched = false;
      const started = performance.now();
      p.series.forEach((s, i) => {
        if (!(s.key in values)) return;
        const data = dataRef.current[i];
        if (data.length && data[data.length - 1].x >= ts) return;
        const y = values[s.key];
        data.push({ x: ts, y: y === null || !Number.isFinite(y) ? null : y });
        touched = true;
      });
      if (!touched) return;
      livePoints++;
      const win = viewWindow(v, ts, firstMsRef.current);
      for (const data of dataRef.current) {
        let drop = 0;
        while (drop < data.length - 1 && data[drop].x < win.from) drop++;
        if (drop > 0) data.splice(0, drop);
      }
      setWindow(chart, win.from, win.to);
      chart.update('none');
      recordPerf(p.id, 'live-update', performance.now() - started, pointCount(dataRef.current));
      // Long ranges accumulate raw live points on top of the decimated history: once they are a quarter of
      // it, fetch again, so what the chart holds stays bounded whatever the range and however long it runs.
      if (DECIMATE && livePoints > Math.max(300, fetchedPoints / 4 / Math.max(1, p.series.length))) {
        livePoints = 0;
        void refetch.current?.('live');
      }
      setLoad((l) => (l.s === 'empty' ? { s: 'ready' } : l));
    });

    initial?.done();

    return () => {
      offLive();
      offCross();
      if (raf) cancelAnimationFrame(raf);
      chart.destroy();
      chartRef.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the chart is rebuilt only when its series or theme change
  }, [p.deploymentId, keys, theme, p.unit, p.yMin, p.yMax, hasAnswer]);

  // Timeline markers follow the event list without rebuilding the chart.
  useEffect(() => {
    if (!overlay.current) return;
    overlay.current.events = p.events;
    chartRef.current?.draw();
  }, [p.events]);

  // (Re)load history whenever the window changes: a new range, a zoom, a pan, back to live. Asked in the
  // layout phase, before any chart of the commit is built (that happens in the passive effect above).
  useLayoutEffect(() => {
    viewRef.current = view;
    let cancelled = false;
    const stop = new AbortController();
    const run = async (why: 'view' | 'live'): Promise<void> => {
      const before = chartRef.current;
      const started = performance.now();
      const now = Date.now();
      const win = viewWindow(view, now, firstMsRef.current);
      if (before && why === 'view' && view.mode === 'fixed') {
        const chart = before;
        // Every chart follows a zoom or pan at once with the points it holds; the fetch below refines it.
        setWindow(chart, win.from, win.to);
        chart.update('none');
        recordPerf(p.id, 'zoom', performance.now() - started, pointCount(dataRef.current));
      }
      const finiteRange =
        view.mode === 'fixed' || Number.isFinite(RANGES.find((r) => r.id === view.range)!.ms);
      // The box's width, which the chart's canvas takes (on mount the canvas is not sized yet).
      const width = canvas.current?.parentElement?.clientWidth ?? 800;
      // One min-max pair per two pixels: every spike still gets its pixel, and a live update moves half the points.
      const maxPoints = DECIMATE ? Math.min(MAX_FETCH_POINTS, Math.max(300, Math.round(width))) : 200_000;
      let res: SeriesResult;
      try {
        // Every chart of the page asks in the same commit; the page's batcher sends one request for all.
        res = await seriesSource({
          deploymentId: p.deploymentId,
          windowKey: view.mode === 'live' ? `live:${view.range}` : `fixed:${win.from}:${win.to}`,
          keys: p.series.map((s) => s.key),
          fromMs: finiteRange ? win.from : undefined,
          toMs: view.mode === 'fixed' ? win.to : undefined,
          maxPoints,
          signal: stop.signal,
        });
      } catch (err) {
        if (cancelled) return;
        setLoad({ s: 'error', ...errorText(err) });
        // Built all the same: live points still come, and another window may have history.
        setAnswered(keys);
        return;
      }
      if (cancelled) return;
      const fetched = performance.now();
      const apply = (chart: Chart<'line', Point[]> | null): void => {
        firstMsRef.current = res.firstMs;
        // A fresh array per dataset: Chart.js hooks push/splice on the array it holds, and refilling it one
        // push at a time would cost a splice per point (quadratic on a day of points).
        const data = res.series.map((col) => {
          const points: Point[] = new Array<Point>(col.t.length);
          for (let k = 0; k < col.t.length; k++) points[k] = { x: col.t[k], y: col.v[k] };
          return points;
        });
        const shown = viewWindow(view, view.mode === 'live' ? (res.lastMs ?? now) : now, res.firstMs);
        const from = view.mode === 'live' && !finiteRange ? (res.firstMs ?? shown.from) : shown.from;
        const to = view.mode === 'live' ? Math.max(now, res.lastMs ?? now) : shown.to;
        if (!chart) {
          // The first history of this series set: the chart's effect builds the chart with it.
          first.current = { keys, data, from, to, done };
          setAnswered(keys);
          return;
        }
        data.forEach((d, i) => {
          dataRef.current[i] = d;
          chart.data.datasets[i].data = d;
        });
        setWindow(chart, from, to);
        chart.update('none');
        done();
      };
      const done = (): void => {
        const points = pointCount(dataRef.current);
        recordPerf(p.id, 'fetch', fetched - started, points);
        onFetched.current?.(points);
        if (why === 'view' && view.mode === 'fixed')
          recordPerf(p.id, 'zoom-refined', performance.now() - started, points);
        const missingKeys = Object.keys(res.missing);
        setPartial(missingKeys.length > 0 && missingKeys.length < p.series.length ? res.missing : {});
        if (points > 0) setLoad({ s: 'ready' });
        else if (missingKeys.length === p.series.length) setLoad({ s: 'missing', missing: res.missing });
        else setLoad({ s: 'empty', firstMs: res.firstMs });
      };
      apply(builtFor.current === keys ? chartRef.current : null);
    };
    refetch.current = run;
    void run('view');
    return () => {
      cancelled = true;
      stop.abort();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the series are part of `keys`; the chart is rebuilt with them
  }, [view, p.deploymentId, keys, theme, seriesSource]);

  const exportName = `${p.id}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  return (
    <section className="card chart-card" data-testid={`chart-${p.id}`} data-state={load.s}>
      <header className="chart-head">
        <h3>{p.title}</h3>
        <span className="chart-tools">
          <button
            className="icon"
            title="Export as PNG"
            data-testid={`export-png-${p.id}`}
            onClick={() => chartRef.current && downloadPng(chartRef.current, `${exportName}.png`)}
          >
            PNG
          </button>
          <button
            className="icon"
            title="Export data as CSV"
            data-testid={`export-csv-${p.id}`}
            onClick={() =>
              downloadCsv(
                p.series.map((s, i) => ({ label: s.label, key: s.key, data: dataRef.current[i] })),
                `${exportName}.csv`,
              )
            }
          >
            CSV
          </button>
        </span>
      </header>
      {p.source && <p className="chart-source">{p.source}</p>}
      <div className="chart-box" style={{ height: `${(p.height ?? 180) / 14}rem` }}>
        <canvas ref={canvas} aria-label={`${p.title} chart`} data-testid={`canvas-${p.id}`} />
        {load.s !== 'ready' && (
          <div className={`chart-overlay overlay-${load.s}`} data-testid={`chart-state-${p.id}`}>
            {load.s === 'loading' && 'Loading history…'}
            {load.s === 'empty' &&
              (load.firstMs
                ? `No data in this window. History starts ${formatDateTime(load.firstMs)}; pick a longer range or go back to live.`
                : 'No data yet: the first scrape fills this chart within a few seconds.')}
            {load.s === 'missing' && (
              <span data-testid={`missing-${p.id}`}>
                Not exposed by this server version: expected{' '}
                {[...new Set(Object.values(load.missing).flatMap((m) => m.expected))].join(', ')}.{' '}
                <span className="muted">{Object.values(load.missing)[0]?.why}</span>
              </span>
            )}
            {load.s === 'error' && (
              <span>
                History unavailable: {load.message}
                {load.hint ? ` — ${load.hint}` : ''}
              </span>
            )}
          </div>
        )}
      </div>
      {Object.keys(partial).length > 0 && (
        <p className="chart-note" data-testid={`partial-${p.id}`}>
          Not exposed by this server version:{' '}
          {Object.entries(partial)
            .map(
              ([k, m]) =>
                `${p.series.find((s) => s.key === k)?.label ?? k} (expected ${m.expected.join(' or ')})`,
            )
            .join('; ')}
        </p>
      )}
      <p className="chart-marker" aria-live="polite">
        {marker ? `${formatDateTime(marker.ts)} · ${marker.title}` : '\u00a0'}
      </p>
    </section>
  );
}

const TICK_STEPS: Array<[number, 'second' | 'minute' | 'hour' | 'day', number]> = [
  [1000, 'second', 1],
  [5000, 'second', 5],
  [15_000, 'second', 15],
  [30_000, 'second', 30],
  [60_000, 'minute', 1],
  [120_000, 'minute', 2],
  [300_000, 'minute', 5],
  [600_000, 'minute', 10],
  [900_000, 'minute', 15],
  [1_800_000, 'minute', 30],
  [3_600_000, 'hour', 1],
  [7_200_000, 'hour', 2],
  [10_800_000, 'hour', 3],
  [21_600_000, 'hour', 6],
  [43_200_000, 'hour', 12],
  [86_400_000, 'day', 1],
];

/** Shows [from, to] with ticks on round times (every 30 s, 1 min, 1 h…), at most about seven of them. */
function setWindow(chart: Chart<'line', Point[]>, from: number, to: number): void {
  const x = chart.options.scales!.x as {
    min?: number;
    max?: number;
    time?: { unit?: string; stepSize?: number };
  };
  x.min = from;
  x.max = to;
  const step = tickStep(from, to);
  x.time ??= {};
  x.time.unit = step.unit;
  x.time.stepSize = step.stepSize;
}

function tickStep(from: number, to: number): { unit: (typeof TICK_STEPS)[number][1]; stepSize: number } {
  const span = Math.max(1, to - from);
  const [, unit, stepSize] = TICK_STEPS.find(([ms]) => span / ms <= 7) ?? TICK_STEPS[TICK_STEPS.length - 1];
  return { unit, stepSize };
}

function gibTicks(scale: { min: number; max: number; ticks: { value: number }[] }): void {
  const gib = 1024 ** 3;
  const span = (scale.max - scale.min) / gib;
  const step = [1, 2, 5, 10, 20, 40, 80, 160].find((s) => span / s <= 5) ?? 320;
  const ticks: { value: number }[] = [];
  for (let v = Math.ceil(scale.min / gib / step) * step; v * gib <= scale.max; v += step)
    ticks.push({ value: v * gib });
  if (ticks.length >= 2) scale.ticks = ticks;
}

function pointCount(d: Point[][]): number {
  let n = 0;
  for (const a of d) n += a.length;
  return n;
}
