// The KV time-to-full forecast over a column of KV ratios: one implementation for the live push and review.
import { f64 } from '../scratch-arrays';

/**
 * Seconds until the KV ratio reaches 1 at the least-squares slope of the last 5 minutes, at every row from
 * `from` on: only the run after the last gap counts (a gap usually means a restart, and the pool empties with
 * it); ≥ 5 points spanning ≥ 30 s are needed; NaN when flat, falling or beyond 24 h, 0 when already full.
 * NaN too when the trend is lost in the noise: the fitted line must rise over the window by at least the
 * points' scatter around it. A prefill pool, which fills and empties with each batch, spiked 0–20 % around a
 * slight drift and was forecast "full in ~6 h" at 0 %.
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
  // Prefix sums of x, y, xy, xx over rows (x in seconds from the first row); gap rows add nothing.
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
  let runStart = 0;
  let lo = 0;
  for (let i = 0; i < n; i++) {
    const y = ratio[i];
    if (!Number.isFinite(y)) {
      runStart = i + 1;
      continue;
    }
    if (i < from) continue;
    if (lo < runStart) lo = runStart;
    while (t[lo] < t[i] - windowMs) lo++;
    const m = i - lo + 1;
    if (m < 5 || t[i] - t[lo] < 30_000) continue;
    const X = sx[i + 1] - sx[lo];
    const Y = sy[i + 1] - sy[lo];
    const XY = sxy[i + 1] - sxy[lo];
    const XX = sxx[i + 1] - sxx[lo];
    const den = m * XX - X * X;
    const slope = den > 0 ? (m * XY - X * Y) / den : 0;
    if (y >= 1) out[i] = 0;
    else if (slope > 0 && risesAboveScatter(m, X, Y, XY, syy[i + 1] - syy[lo], slope, t[i] - t[lo])) {
      const seconds = (1 - y) / slope;
      if (seconds <= 24 * 3600) out[i] = seconds;
    }
  }
  return out;
}

/**
 * Whether the least-squares line's rise over the span (ms) is at least the standard deviation of the points
 * around it, from the window's sums (centred: Sxy = XY − X·Y/m, Syy = YY − Y²/m; residuals' sum of squares
 * Syy − slope·Sxy).
 */
function risesAboveScatter(
  m: number,
  X: number,
  Y: number,
  XY: number,
  YY: number,
  slope: number,
  spanMs: number,
): boolean {
  const sxy = XY - (X * Y) / m;
  const syy = YY - (Y * Y) / m;
  const residual = Math.max(0, syy - slope * sxy) / Math.max(1, m - 2);
  const rise = (slope * spanMs) / 1000;
  return rise * rise >= residual;
}
