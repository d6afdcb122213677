// One time-series chart of signal keys: history fetched decimated from the core for the visible window,
// then live points appended in place (one push + update('none') per second, no re-render of history).
// Zoom by drag or Ctrl+wheel, pan with Shift+drag; every chart follows the same window and crosshair.
// Missing metrics say which name was expected; NaN and outages draw as gaps.
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ChartConfiguration, ChartDataset, LegendOptions } from 'chart.js';
import type { SeriesResult, SignalMissing, SignalUnit } from '@shared/contract';
import type { AppEvent, Role } from '@shared/domain';
import type { SignalKey } from '@shared/signals/spec';
import { errorText } from '../api/errors';
import { onSignals } from '../state/live';
import { onCrosshair } from '../state/crosshair';
import { RANGES, setFixedWindow, showAround, useUi, viewWindow, type View } from '../state/ui';
import { formatDateTime, formatTick, formatValue } from '../format';
import { CANVAS_LEGEND, Chart, cssVar, DECIMATE, LIVE } from './setup';
import './warm-up';
import { alertBandCount, nearestEvent, overlayPlugin, type OverlayOptions } from './overlays';
import { chartScope, eventsForChart, sameEvents } from './chart-events';
import { recordPerf } from './perf';
import { buildSized, measureCanvas, SizedPlatform } from './sized-platform';
import { downloadCsv, downloadPng } from './export';
import { useSeriesSource } from './SeriesBatch';
import { HistoryNote } from './HistoryNote';
import { tickLabel, type TickUnit } from './time-ticks';

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
  /** The deployment's timeline: the chart marks those of its own roles and workers (chart-events.ts). */
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
/** How long the charts that follow a zoom wait for the zoomed window's data before redrawing without it. */
const ZOOM_FOLLOW_GRACE_MS = 120;

/**
 * A page renders again on every push of its deployment's state (observations, dashboard pushes: a few a
 * second) and writes its charts' series lists anew each time; a chart renders again only when a prop it shows
 * changed. Its window, theme and data come through its own hooks and subscriptions. Rendering the Metrics
 * page's 19 charts again on each push was half the page's script time at rest (6.0–7.3 ms a second, now
 * 3.1–4.1, live appends off), and a push that came while the page was loading held up its first paint.
 */
export const TimeChart = memo(TimeChartView, sameChartProps);

function sameChartProps(a: TimeChartProps, b: TimeChartProps): boolean {
  const keys = Object.keys(a) as (keyof TimeChartProps)[];
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (k !== 'series' && a[k] !== b[k]) return false;
  return (
    a.series.length === b.series.length &&
    a.series.every((s, i) => {
      const t = b.series[i];
      return (
        s.key === t.key &&
        s.label === t.label &&
        s.color === t.color &&
        s.fill === t.fill &&
        String(s.dash) === String(t.dash)
      );
    })
  );
}

function TimeChartView(p: TimeChartProps): React.JSX.Element {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chartRef = useRef<Chart<'line', Point[]> | null>(null);
  const dataRef = useRef<Point[][]>([]);
  const overlay = useRef<OverlayOptions | null>(null);
  const firstMsRef = useRef<number | null>(null);
  const refetch = useRef<((why: 'view' | 'live') => Promise<void>) | null>(null);
  const onFetched = useRef<((points: number) => void) | null>(null);
  /**
   * Shows the data in dataRef on [from, to]: builds or updates the chart now if it is in sight, else when it
   * comes into sight. Set by the chart's effect.
   */
  const showRef = useRef<((from: number, to: number) => void) | null>(null);
  /** The chart's box is in or near the viewport (an IntersectionObserver's last word). */
  const inSight = useRef(false);
  /** Its canvas is in the viewport itself, not only within the look-ahead margin (a second observer's word). */
  const onScreen = useRef(false);
  /** The event list changed: redraws the markers when it is worth it (set by the chart's effect). */
  const eventsChanged = useRef<(() => void) | null>(null);
  /** History that arrived before the chart's effect ran: applied by that effect. */
  const whenBuilt = useRef<(() => void) | null>(null);
  const { view, theme } = useUi();
  const viewRef = useRef<View>(view);
  const [load, setLoad] = useState<LoadState>({ s: 'loading' });
  const [partial, setPartial] = useState<Record<string, SignalMissing>>({});
  const [marker, setMarker] = useState<AppEvent | null>(null);
  /** Series keys the operator hid from the legend: kept across rebuilds of the chart. */
  const [hidden, setHidden] = useState<ReadonlySet<string>>(() => new Set());
  const hiddenRef = useRef(hidden);
  /** The legend a PNG export draws on the canvas. */
  const legendRef = useRef<LegendOptions<'line'> | null>(null);
  const keys = p.series.map((s) => s.key).join(',');
  const seriesSource = useSeriesSource();
  const scope = useMemo(() => chartScope(keys.split(','), p.role), [keys, p.role]);
  const events = useMemo(() => eventsForChart(p.events, scope), [p.events, scope]);

  // Create the chart once per series set and theme, when its first history is here; keep it in a ref for
  // in-place updates.
  useEffect(() => {
    const el = canvas.current;
    if (!el) return;
    // Every chart of the page asked for its history in the layout phase: send it now, so the core decimates
    // while the page sets its charts up.
    seriesSource.flush();
    const mounted = performance.now();
    let painted = false;
    /** A chart first built when scrolled to times its paint from then, not from the page's mount. */
    let paintKind: 'first-paint' | 'scroll-in' = 'first-paint';
    let paintFrom = mounted;
    const colors = {
      crosshair: cssVar('--muted', '#888'),
      info: cssVar('--accent', '#2563eb'),
      warning: cssVar('--warn', '#b45309'),
      error: cssVar('--bad', '#b91c1c'),
      background: cssVar('--panel', '#fff'),
    };
    const overlayOptions: OverlayOptions = {
      events,
      colors,
      onPick: (ts) => showAround(ts, p.role),
    };
    overlay.current = overlayOptions;
    // Axis and legend text follow the page's type size (larger on a 4K panel at 100 % scaling).
    Chart.defaults.font.size = Math.round(
      parseFloat(getComputedStyle(document.documentElement).fontSize) * 0.85,
    );
    const grid = cssVar('--grid', 'rgba(128,128,128,0.2)');
    const text = cssVar('--muted', '#888');
    const canvasLegend = {
      display: p.series.length > 1,
      position: 'bottom',
      labels: { color: text, boxWidth: 10, boxHeight: 2 },
    } as LegendOptions<'line'>;
    legendRef.current = canvasLegend;
    dataRef.current = p.series.map(() => []);
    let chart: Chart<'line', Point[]> | null = null;
    // Built with its first history in it: an empty chart first cost a whole layout and draw per chart, on a
    // page that had nothing to show yet, and held up the drawing of the charts whose data had arrived.
    // Read now, while the page's style is settled: between two chart builds each read recomputes it.
    const lineColors = p.series.map((s) => (s.color.startsWith('--') ? cssVar(s.color, '#3b82f6') : s.color));
    const build = (from: number, to: number): Chart<'line', Point[]> => {
      if (chart) return chart;
      const datasets: ChartDataset<'line', Point[]>[] = p.series.map((s, i) => {
        const color = lineColors[i];
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
          hidden: hiddenRef.current.has(s.key),
        };
      });
      const x: WindowOptions = { time: {} };
      windowOptions(x, from, to);
      const config: ChartConfiguration<'line', Point[]> = {
        type: 'line',
        platform: SizedPlatform,
        data: { datasets },
        plugins: [
          overlayPlugin(overlayOptions),
          {
            // The overlay ("Loading history…", "No data in this window…") covers the plot area only: its left
            // edge follows the y axis's width, which "1.00 GB/s" ticks make wider than the CSS default.
            id: 'pdcPlotInset',
            afterLayout: (c) => {
              const box = el.parentElement;
              const left = `${Math.round(c.chartArea.left)}px`;
              const bottom = `${Math.round(c.height - c.chartArea.bottom)}px`;
              if (
                !box ||
                (box.style.getPropertyValue('--plot-left') === left &&
                  box.style.getPropertyValue('--plot-bottom') === bottom)
              )
                return;
              box.style.setProperty('--plot-left', left);
              box.style.setProperty('--plot-bottom', bottom);
            },
          },
          {
            id: 'pdcFirstPaint',
            afterRender: () => {
              if (painted || !dataRef.current.some((d) => d.length > 0)) return;
              painted = true;
              recordPerf(p.id, paintKind, performance.now() - paintFrom, pointCount(dataRef.current));
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
              min: x.min,
              max: x.max,
              time: { ...x.time },
              grid: { color: grid },
              ticks: {
                color: text,
                maxRotation: 0,
                minRotation: 0,
                sampleSize: 8,
                autoSkipPadding: 24,
                // `this` is the x scale; its unit is the one windowOptions set (never left to Chart.js).
                callback(v) {
                  return tickLabel(Number(v), (this.options as WindowOptions).time!.unit!);
                },
              },
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
            // The legend is HTML under the canvas (ChartLegend): Chart.js's own built its labels, was laid out,
            // measured and drawn again on every live update (even hidden, it built its labels), ≈ 25 % of a
            // fleet KV chart's update in a profile. A PNG export draws it for its picture (export.ts).
            legend: CANVAS_LEGEND ? canvasLegend : (false as unknown as LegendOptions<'line'>),
            tooltip: {
              callbacks: {
                title: (items) => (items[0] ? formatDateTime(items[0].parsed.x ?? 0) : ''),
                label: (c) => `${c.dataset.label}: ${formatValue(p.unit, c.parsed.y)}`,
              },
            },
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
      };
      chart = buildSized(el, () => new Chart(el, config));
      chartRef.current = chart;
      return chart;
    };
    // Charts out of sight (most of the Metrics page below the fold) take their data but are built when the
    // page is idle and redrawn when scrolled to: building and drawing nineteen charts one after another is
    // what made the first paint of the ones on screen wait, and a zoom's refinement too.
    inSight.current = false;
    let seen = false;
    /** Markers or the crosshair changed while off screen: the chart is redrawn when it comes on screen. */
    let stale = false;
    /** When this chart last drew a live update. */
    let lastLive = -Infinity;
    /** The window to show once in sight, for data that arrived out of sight. */
    let due: { from: number; to: number } | null = null;
    const draw = (from: number, to: number): void => {
      due = null;
      stale = false;
      if (!chart) {
        build(from, to);
        return;
      }
      dataRef.current.forEach((data, i) => (chart!.data.datasets[i].data = data));
      setWindow(chart, from, to);
      chart.update('none');
    };
    onScreen.current = false;
    let idleFrame = 0;
    let idle = 0;
    /**
     * What is due is drawn (built, if never built) after the next frame, once the page is idle, or within
     * `timeoutMs` if it stays busy. After the frame: an answer that arrives in an idle period would otherwise
     * let these draws run before the frame that shows the charts on screen.
     */
    const drawWhenIdle = (timeoutMs: number): void => {
      if (idleFrame || idle) return;
      idleFrame = requestAnimationFrame(() => {
        idleFrame = 0;
        idle = requestIdleCallback(
          () => {
            idle = 0;
            if (!due) return;
            if (!chart) {
              paintKind = 'first-paint';
              paintFrom = mounted;
            }
            draw(due.from, due.to);
          },
          { timeout: timeoutMs },
        );
      });
    };
    showRef.current = (from, to) => {
      // Drawn at once only when its canvas is on the screen itself: at 1440×900 the Metrics page's third row
      // has its titles on screen and its canvases just below, inside the look-ahead margin, and building or
      // redrawing those four with the seven on screen made the operator wait for charts they could not see —
      // on a page load, and again on every zoom. They are drawn as soon as the page is idle (or 100 ms later
      // if it stays busy), well before a scroll reaches them.
      if (onScreen.current) return draw(from, to);
      due = { from, to };
      // Never built: built anyway once the page is idle (after the charts on screen are drawn), so a chart
      // is ready before it is scrolled to and a full-page picture has every chart in it. Built and far out of
      // sight: redrawn when scrolled to.
      if (inSight.current || !chart) drawWhenIdle(inSight.current ? 100 : 2000);
    };
    // The look-ahead observer below reports only crossings of its margin: a chart scrolled from the margin onto
    // the screen crosses none, so a second observer without a margin says when the canvas itself is on screen.
    const screen = new IntersectionObserver((entries) => {
      onScreen.current = entries[entries.length - 1].isIntersecting;
      if (!onScreen.current) return;
      if (due) {
        if (paintKind === 'scroll-in' && !chart) paintFrom = performance.now();
        draw(due.from, due.to);
      } else if (chart && stale) {
        stale = false;
        chart.draw();
      }
    });
    screen.observe(el);
    const sight = new IntersectionObserver(
      (entries) => {
        const now = entries[entries.length - 1].isIntersecting;
        const first = !seen;
        if (first && !now && !chart) {
          paintKind = 'scroll-in';
        }
        seen = true;
        inSight.current = now;
        if (!now || !due) return;
        // The page's first look (its history came before it): only what is on screen is built now, as above
        // (if the screen observer has not said so yet, it draws the chart when it does). A later entry into the
        // margin is a scroll, and the chart is built ahead of it.
        if (first && !chart && !onScreen.current) return drawWhenIdle(100);
        if (paintKind === 'scroll-in') paintFrom = performance.now();
        draw(due.from, due.to);
      },
      // A little ahead of the scroll, so a chart is drawn as it enters the screen.
      { rootMargin: '100px 0px' },
    );
    sight.observe(el);
    const early = whenBuilt.current;
    whenBuilt.current = null;
    early?.();

    // A busy fleet's events change the list several times a second, and every chart redrew at each change
    // (in a profile of its KV page: four times the charts' live updates). Live, the next update (≤ 1 s)
    // draws the markers anyway; else one draw per frame, and none off screen until scrolled to.
    let markersRaf = 0;
    eventsChanged.current = () => {
      if (!chart) return;
      if (!onScreen.current) {
        stale = true;
        return;
      }
      if (viewRef.current.mode === 'live' && performance.now() - lastLive < 2000) return;
      markersRaf ||= requestAnimationFrame(() => {
        markersRaf = 0;
        chart?.draw();
      });
    };
    let raf = 0;
    const offCross = onCrosshair((t) => {
      if (raf) return;
      raf = requestAnimationFrame(() => {
        raf = 0;
        if (!chart) return;
        // Off screen (even just below it) the line is drawn once the chart is scrolled to.
        if (!onScreen.current) {
          stale = true;
          return;
        }
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
      let valued = false;
      const started = performance.now();
      p.series.forEach((s, i) => {
        if (!(s.key in values)) return;
        const data = dataRef.current[i];
        if (data.length && data[data.length - 1].x >= ts) return;
        const y = values[s.key];
        const finite = y !== null && Number.isFinite(y);
        data.push({ x: ts, y: finite ? y : null });
        touched = true;
        valued ||= finite;
      });
      if (!touched) return;
      livePoints++;
      const win = viewWindow(v, ts, firstMsRef.current);
      for (const data of dataRef.current) {
        let drop = 0;
        while (drop < data.length - 1 && data[drop].x < win.from) drop++;
        if (drop > 0) data.splice(0, drop);
      }
      // Out of sight, or before the first history (which will hold this point), nothing is drawn.
      if (chart && inSight.current) {
        lastLive = started;
        stale = false;
        setWindow(chart, win.from, win.to);
        chart.update('none');
        recordPerf(p.id, 'live-update', performance.now() - started, pointCount(dataRef.current));
      } else if (chart || due) due = { from: win.from, to: win.to };
      // Long ranges accumulate raw live points on top of the decimated history: once they are a quarter of
      // it, fetch again, so what the chart holds stays bounded whatever the range and however long it runs.
      if (DECIMATE && livePoints > Math.max(300, fetchedPoints / 4 / Math.max(1, p.series.length))) {
        livePoints = 0;
        void refetch.current?.('live');
      }
      // A history asked before the first scrape reads every key as missing ("no data yet: not scraped so far");
      // the first real value proves the server exposes it, so the overlay goes instead of staying until a refetch.
      setLoad((l) => (l.s === 'empty' || (l.s === 'missing' && valued) ? { s: 'ready' } : l));
    });

    return () => {
      offLive();
      offCross();
      if (raf) cancelAnimationFrame(raf);
      if (markersRaf) cancelAnimationFrame(markersRaf);
      eventsChanged.current = null;
      sight.disconnect();
      screen.disconnect();
      if (idleFrame) cancelAnimationFrame(idleFrame);
      if (idle) cancelIdleCallback(idle);
      showRef.current = null;
      chart?.destroy();
      chartRef.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the chart is rebuilt only when its series or theme change
  }, [p.deploymentId, keys, theme, p.unit, p.yMin, p.yMax]);

  // Timeline markers follow the event list without rebuilding the chart.
  // Another role's or worker's event leaves this chart's list as it was: nothing to redraw.
  useEffect(() => {
    if (!overlay.current || sameEvents(overlay.current.events, events)) return;
    overlay.current.events = events;
    eventsChanged.current?.();
  }, [events]);

  // (Re)load history whenever the window changes: a new range, a zoom, a pan, back to live. Asked in the
  // layout phase, before any chart of the commit is built (that happens in the passive effect above).
  useLayoutEffect(() => {
    viewRef.current = view;
    let cancelled = false;
    const stop = new AbortController();
    /** The zoomed window's own data arrived: a redraw with the points at hand would only be overdrawn. */
    let refined = false;
    const run = async (why: 'view' | 'live'): Promise<void> => {
      const before = chartRef.current;
      const started = performance.now();
      const now = Date.now();
      const win = viewWindow(view, now, firstMsRef.current);
      if (before && onScreen.current && why === 'view' && view.mode === 'fixed') {
        const chart = before;
        // Every chart on screen follows a zoom or pan with the points it holds unless the zoomed window's data
        // comes first; the fetch below refines it (those off screen only take the refined data, as above).
        // The page's request leaves once every chart of the commit has asked (the flush). The chart that was
        // dragged is already zoomed by the zoom plugin, so the others wait a moment for the refinement before
        // they redraw with the points at hand: redrawing every chart on the next frame (≈ 15 ms each) kept the
        // main thread busy while the core's answer (≈ 20 ms away) waited behind it, and the last chart was
        // refined ≈ 240 ms after the zoom instead of ≈ 100 ms.
        queueMicrotask(() => {
          seriesSource.flush();
          // Each chart redraws in its own task (not all in one animation frame), so an answer that arrives
          // while they redraw is taken before the charts still waiting, which then need no stale redraw.
          setTimeout(() => {
            if (refined || cancelled || chartRef.current !== chart) return;
            setWindow(chart, win.from, win.to);
            chart.update('none');
            recordPerf(p.id, 'zoom', performance.now() - started, pointCount(dataRef.current));
          }, ZOOM_FOLLOW_GRACE_MS);
        });
      }
      const finiteRange =
        view.mode === 'fixed' || Number.isFinite(RANGES.find((r) => r.id === view.range)!.ms);
      // The box's width, which the chart's canvas takes (on mount the canvas is not sized yet).
      const width = canvas.current?.parentElement?.clientWidth ?? 800;
      // The page is laid out now (for the width just read): the size a chart not built yet is built at.
      if (!before && canvas.current) measureCanvas(canvas.current);
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
        // The axes of the window still show behind the message.
        showRef.current?.(win.from, win.to);
        return;
      }
      if (cancelled) return;
      const fetched = performance.now();
      refined = true;
      const apply = (show: (from: number, to: number) => void): void => {
        firstMsRef.current = res.firstMs;
        // A fresh array per dataset: Chart.js hooks push/splice on the array it holds, and refilling it one
        // push at a time would cost a splice per point (quadratic on a day of points).
        res.series.forEach((col, i) => {
          const data: Point[] = new Array<Point>(col.t.length);
          for (let k = 0; k < col.t.length; k++) data[k] = { x: col.t[k], y: col.v[k] };
          dataRef.current[i] = data;
        });
        const shown = viewWindow(view, view.mode === 'live' ? (res.lastMs ?? now) : now, res.firstMs);
        const from = view.mode === 'live' && !finiteRange ? (res.firstMs ?? shown.from) : shown.from;
        const to = view.mode === 'live' ? Math.max(now, res.lastMs ?? now) : shown.to;
        show(from, to);
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
      // The answer may come before this commit's chart effect ran (it runs after this one).
      if (showRef.current) apply(showRef.current);
      else
        whenBuilt.current = () => {
          if (!cancelled && showRef.current) apply(showRef.current);
        };
    };
    refetch.current = run;
    void run('view');
    return () => {
      cancelled = true;
      stop.abort();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the series are part of `keys`; the chart is rebuilt with them
  }, [view, p.deploymentId, keys, theme, seriesSource]);

  const toggleSeries = (key: string): void => {
    const next = new Set(hiddenRef.current);
    if (!next.delete(key)) next.add(key);
    hiddenRef.current = next;
    setHidden(next);
    const chart = chartRef.current;
    const i = p.series.findIndex((s) => s.key === key);
    if (!chart || i < 0) return;
    chart.setDatasetVisibility(i, !next.has(key));
    chart.update('none');
  };
  const exportName = `${p.id}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  return (
    <section
      className="card chart-card"
      data-testid={`chart-${p.id}`}
      data-state={load.s}
      data-markers={events.length}
      data-alert-bands={alertBandCount(events)}
    >
      <header className="chart-head">
        <h3>{p.title}</h3>
        <span className="chart-tools">
          <button
            className="icon"
            title="Export as PNG"
            data-testid={`export-png-${p.id}`}
            onClick={() =>
              chartRef.current && downloadPng(chartRef.current, `${exportName}.png`, legendRef.current)
            }
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
      {p.source && (
        <p className="chart-source" title={p.source}>
          {p.source}
        </p>
      )}
      {/* Each chart's box is its own layout and style root, and its canvas starts with the styles Chart.js
          would set: building a chart reads its box's size, and without these every build after the first
          re-laid out the whole page that the previous build had just invalidated. */}
      <div
        className="chart-box"
        style={{ height: `${(p.height ?? 180) / 14}rem`, contain: 'strict', flex: 'none' }}
      >
        <canvas
          ref={canvas}
          aria-label={`${p.title} chart`}
          data-testid={`canvas-${p.id}`}
          style={{ display: 'block', boxSizing: 'border-box' }}
        />
        {load.s !== 'ready' && (
          <div className={`chart-overlay overlay-${load.s}`} data-testid={`chart-state-${p.id}`}>
            {load.s === 'loading' && 'Loading history…'}
            {load.s === 'empty' &&
              (load.firstMs
                ? `No data in this window. History starts ${formatDateTime(load.firstMs)}; pick a longer range or go back to live.`
                : 'No data yet: the first scrape fills this chart within a few seconds.')}
            {load.s === 'missing' && (
              <span data-testid={`missing-${p.id}`}>
                Not in this server's /metrics: expected{' '}
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
      {p.series.length > 1 && !CANVAS_LEGEND && (
        <ChartLegend id={p.id} series={p.series} hidden={hidden} onToggle={toggleSeries} />
      )}
      {Object.keys(partial).length > 0 && (
        <p className="chart-note" data-testid={`partial-${p.id}`}>
          Not in this server's /metrics:{' '}
          {Object.entries(partial)
            .map(
              ([k, m]) =>
                `${p.series.find((s) => s.key === k)?.label ?? k} (expected ${m.expected.join(' or ')})`,
            )
            .join('; ')}
        </p>
      )}
      <HistoryNote id={p.id} keys={p.series.map((s) => s.key)} />
      <p className="chart-marker" aria-live="polite">
        {marker ? `${formatDateTime(marker.ts)} · ${marker.title}` : '\u00a0'}
      </p>
    </section>
  );
}

/** The chart's series under it: a click hides or shows one line, as Chart.js's own legend did. */
function ChartLegend({
  id,
  series,
  hidden,
  onToggle,
}: {
  id: string;
  series: SeriesSpec[];
  hidden: ReadonlySet<string>;
  onToggle: (key: string) => void;
}): React.JSX.Element {
  return (
    <ul className="chart-legend" data-testid={`legend-${id}`}>
      {series.map((s) => {
        const color = s.color.startsWith('--') ? `var(${s.color})` : s.color;
        return (
          <li key={s.key}>
            <button
              type="button"
              aria-pressed={!hidden.has(s.key)}
              className={hidden.has(s.key) ? 'off' : undefined}
              onClick={() => onToggle(s.key)}
            >
              <span
                className="swatch"
                style={{ borderTop: `2px ${s.dash ? 'dashed' : 'solid'} ${color}` }}
                aria-hidden
              />
              {s.label}
            </button>
          </li>
        );
      })}
    </ul>
  );
}

const TICK_STEPS: Array<[number, TickUnit, number]> = [
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

interface WindowOptions {
  min?: number;
  max?: number;
  time?: { unit?: TickUnit; stepSize?: number };
}

/** Shows [from, to] with ticks on round times (every 30 s, 1 min, 1 h…), at most about seven of them. */
function setWindow(chart: Chart<'line', Point[]>, from: number, to: number): void {
  windowOptions(chart.options.scales!.x as WindowOptions, from, to);
}

function windowOptions(x: WindowOptions, from: number, to: number): void {
  x.min = from;
  x.max = to;
  const span = Math.max(1, to - from);
  const [, unit, stepSize] = TICK_STEPS.find(([ms]) => span / ms <= 7) ?? TICK_STEPS[TICK_STEPS.length - 1];
  x.time ??= {};
  x.time.unit = unit;
  x.time.stepSize = stepSize;
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
