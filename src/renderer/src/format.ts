// Units that read naturally: tokens with k/M, percentages, durations, GB/s, ms, W, °C.
import type { SignalUnit } from '@shared/contract';

export function formatTokens(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 1 : 2)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return `${Math.round(n)}`;
}

export function formatPct(ratio: number | null | undefined, digits = 1): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return '—';
  return `${(ratio * 100).toFixed(digits)} %`;
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

// One formatter each, made once: Date.toLocaleString builds a new Intl.DateTimeFormat per call (≈ 0.1 ms), and a
// review's first screen formats a few hundred times.
const CLOCK = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const DATE_TIME = new Intl.DateTimeFormat([], {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

export function formatClock(ts: number): string {
  // format() throws on an invalid time, where toLocaleString said so.
  return Number.isFinite(ts) ? CLOCK.format(ts) : 'Invalid Date';
}

export function formatDateTime(ts: number): string {
  return Number.isFinite(ts) ? DATE_TIME.format(ts) : 'Invalid Date';
}

/** Seconds as the operator reads latency: 850 ms, 1.24 s, 2 min 5 s. */
export function formatSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return '—';
  const a = Math.abs(s);
  if (s === 0) return '0';
  if (a < 1) return `${(s * 1000).toFixed(a < 0.01 ? 1 : 0)} ms`;
  if (a < 59.95) return `${s.toFixed(a < 10 ? 2 : 1)} s`;
  // Rounded to whole seconds before it is split: 119.6 s is "2 min 0 s", where rounding the seconds part
  // alone made "1 min 60 s".
  const whole = Math.round(a);
  const sign = s < 0 ? '-' : '';
  if (whole < 3600) return `${sign}${Math.floor(whole / 60)} min ${whole % 60} s`;
  return `${sign}${formatDuration(whole * 1000)}`;
}

/**
 * The KV time-to-full forecast as the panel says it: "full" at 0 (the core's full), minutes otherwise — the
 * forecast is a trend of minutes, so seconds would be false precision — and "< 1 min" below a minute.
 */
export function formatTimeToFull(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s) || s < 0) return '—';
  if (s === 0) return 'full';
  if (s < 60) return 'full in < 1 min';
  const min = Math.round(s / 60);
  if (min < 60) return `full in ~${min} min`;
  return `full in ~${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ''}`;
}

/**
 * A time window as one label: the date once when both ends are on the same day ("Nov 29, 05:52:02 – 05:57:02"),
 * on both ends when not ("Nov 22, 05:52:02 – Nov 29, 05:52:02"), where the end's clock alone made a 7 d window
 * read "Nov 29, 05:52:02 – 05:52:02".
 */
export function formatRange(from: number, to: number): string {
  if (!Number.isFinite(from) || !Number.isFinite(to)) return 'Invalid Date';
  const a = new Date(from);
  const b = new Date(to);
  const sameDay =
    a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  return `${formatDateTime(from)} – ${sameDay ? formatClock(to) : formatDateTime(to)}`;
}

export function formatBytes(b: number | null | undefined): string {
  if (b === null || b === undefined || !Number.isFinite(b)) return '—';
  const gib = b / 1024 ** 3;
  if (gib >= 1) return `${gib.toFixed(gib >= 100 ? 0 : 1)} GiB`;
  return `${(b / 1024 ** 2).toFixed(0)} MiB`;
}

function num(v: number, digits: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${(v / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${(v / 1e3).toFixed(0)}k`;
  if (a >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

/** A value in its unit, for cards, tooltips and axes. */
export function formatValue(unit: SignalUnit, v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  switch (unit) {
    case 'ratio':
      return formatPct(v);
    case 'percent':
      return `${v.toFixed(0)} %`;
    case 'tokens':
      return formatTokens(v);
    case 'requests':
    case 'count':
      return num(v, 1);
    case 'tokens_per_s':
      return `${formatTokens(v)} tok/s`;
    case 'requests_per_s':
      return `${num(v, 2)} req/s`;
    case 'per_min':
      return `${num(v, 1)}/min`;
    case 'seconds':
      return formatSeconds(v);
    case 'ms':
      return formatSeconds(v / 1000);
    case 'gb_per_s':
      return `${v.toFixed(v >= 10 ? 1 : 2)} GB/s`;
    case 'mb':
      return `${num(v, 1)} MB`;
    case 'bytes':
      return formatBytes(v);
    case 'celsius':
      return `${v.toFixed(0)} °C`;
    case 'watts':
      return `${v.toFixed(0)} W`;
    case 'bool':
      return v >= 1 ? 'yes' : 'no';
  }
}

/** Shorter axis ticks. */
export function formatTick(unit: SignalUnit, v: number): string {
  if (unit === 'ratio') return `${Math.round(v * 100)} %`;
  // Below 10 tok/s (an idle engine, an empty chart's 0–1 axis) a tick step is a fraction: rounded to whole
  // tokens the axis read 0, 0, 1, 1, 1.
  if (unit === 'tokens_per_s') return Math.abs(v) < 10 && !Number.isInteger(v) ? num(v, 1) : formatTokens(v);
  if (unit === 'requests_per_s') return num(v, 1);
  return formatValue(unit, v);
}
