// The KV time-to-full forecast over a column of KV ratios: one implementation for the live push and review.
import { f64 } from '../scratch-arrays';

/** At or above this ratio the pool is full: the forecast is 0 ("full"), not a countdown of milliseconds. */
export const KV_FULL_RATIO = 0.99;
/** The least span of points a forecast is made from: a trend of minutes, not one batch's ramp. */
export const TTF_MIN_SPAN_MS = 2 * 60_000;
/** The recent part of the window that must still be rising: a wave that has turned is not filling. */
export const TTF_RECENT_MS = 60_000;

/**
 * Seconds until the KV ratio reaches 1 at the least-squares line of the last 5 minutes, at every row from
 * `from` on; 0 when full (the ratio at or above KV_FULL_RATIO); NaN when there is no forecast.
 *
 * Smoothed over minutes, because usage moves with every batch and every wave of traffic:
 * - only the run after the last gap counts (a gap usually means a restart, and the pool empties with it), and
 *   it must hold ≥ 5 points spanning ≥ TTF_MIN_SPAN_MS;
 * - the distance to full is measured from the fitted line's level now, not from the newest sample: one batch's
 *   spike to 78 % on a pool swinging around 60 % made "full in ~1 min 10 s" on a healthy deployment;
 * - the line must rise over the window by at least the points' scatter around it (a prefill pool, which fills
 *   and empties with each batch, spiked 0–20 % around a slight drift and was forecast "full in ~6 h" at 0 %),
 *   and the last TTF_RECENT_MS must still rise (the falling half of a wave is not forecast);
 * - NaN beyond 24 h.
 */
export function timeToFull(
  t: ArrayLike<number>,
  ratio: ArrayLike<number>,
  windowMs = 5 * 60_000,
  from = 0,
): Float64Array {
  const n = t.length;
  const out = f64(n, NaN);
  if (n === 0) return out;
  const base = t[0] / 1000;
  // Prefix sums of x, y, xy, xx, yy over rows (x in seconds from the first row); gap rows add nothing.
  const sx = f64(n + 1);
  const sy = f64(n + 1);
  const sxy = f64(n + 1);
  const sxx = f64(n + 1);
  const syy = f64(n + 1);
  for (let i = 0; i < n; i++) {
    const y = ratio[i];
    const ok = Number.isFinite(y);
    const x = t[i] / 1000 - base;
    sx[i + 1] = sx[i] + (ok ? x : 0);
    sy[i + 1] = sy[i] + (ok ? y : 0);
    sxy[i + 1] = sxy[i] + (ok ? x * y : 0);
    sxx[i + 1] = sxx[i] + (ok ? x * x : 0);
    syy[i + 1] = syy[i] + (ok ? y * y : 0);
  }
  const recentMs = Math.min(TTF_RECENT_MS, windowMs);
  const minSpanMs = Math.min(TTF_MIN_SPAN_MS, windowMs);
  let runStart = 0;
  let lo = 0;
  let recentLo = 0;
  for (let i = 0; i < n; i++) {
    const y = ratio[i];
    if (!Number.isFinite(y)) {
      runStart = i + 1;
      continue;
    }
    if (i < from) continue;
    if (y >= KV_FULL_RATIO) {
      out[i] = 0;
      continue;
    }
    if (lo < runStart) lo = runStart;
    while (t[lo] < t[i] - windowMs) lo++;
    if (recentLo < lo) recentLo = lo;
    while (t[recentLo] < t[i] - recentMs) recentLo++;
    const fit = fitAt(i, lo, sx, sy, sxy, sxx, syy);
    if (i - lo + 1 < 5 || t[i] - t[lo] < minSpanMs || !fit || fit.slope <= 0) continue;
    if (!risesAboveScatter(fit, (t[i] - t[lo]) / 1000)) continue;
    const recent = fitAt(i, recentLo, sx, sy, sxy, sxx, syy);
    if (!recent || recent.slope <= 0) continue;
    const level = recent.meanY + Math.min(fit.slope, recent.slope) * (t[i] / 1000 - base - recent.meanX);
    if (level >= KV_FULL_RATIO) {
      out[i] = 0;
      continue;
    }
    const seconds = (1 - level) / fit.slope;
    if (seconds <= 24 * 3600) out[i] = seconds;
  }
  return out;
}

interface Fit {
  m: number;
  slope: number;
  meanX: number;
  meanY: number;
  /** Centred sums: Sxy = XY − X·Y/m, Syy = YY − Y²/m. */
  cxy: number;
  cyy: number;
}

/** The least-squares line over the finite rows lo..i from the prefix sums; null with fewer than 2 points. */
function fitAt(
  i: number,
  lo: number,
  sx: Float64Array,
  sy: Float64Array,
  sxy: Float64Array,
  sxx: Float64Array,
  syy: Float64Array,
): Fit | null {
  const m = i - lo + 1;
  if (m < 2) return null;
  const X = sx[i + 1] - sx[lo];
  const Y = sy[i + 1] - sy[lo];
  const XY = sxy[i + 1] - sxy[lo];
  const XX = sxx[i + 1] - sxx[lo];
  const den = m * XX - X * X;
  const slope = den > 0 ? (m * XY - X * Y) / den : 0;
  return {
    m,
    slope,
    meanX: X / m,
    meanY: Y / m,
    cxy: XY - (X * Y) / m,
    cyy: syy[i + 1] - syy[lo] - (Y * Y) / m,
  };
}

/**
 * Whether the line's rise over the span (seconds) is at least the standard deviation of the points around it
 * (the residuals' sum of squares is Syy − slope·Sxy).
 */
function risesAboveScatter(fit: Fit, spanS: number): boolean {
  const residual = Math.max(0, fit.cyy - fit.slope * fit.cxy) / Math.max(1, fit.m - 2);
  const rise = fit.slope * spanS;
  return rise * rise >= residual;
}
