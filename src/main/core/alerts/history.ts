// The recent points the windowed alert rules read (restart counters, failure counters, queues), kept as ranges of
// shared lists so that a poll neither copies a window nor changes what an earlier alert state holds.

/**
 * Recent (ts, value) points of one counter or queue, oldest first: `points[lo..hi)`. Consecutive states share
 * one list, each seeing its own range, and a step appends to the list in place when no later state has (the
 * newest state's range ends where the list does), so a poll neither copies the window (≈ 600 points a key) nor
 * changes what an earlier state holds. A step from an older state copies its range into a list of its own.
 */
export interface History {
  readonly points: Array<readonly [number, number]>;
  readonly lo: number;
  readonly hi: number;
}

const MAX_HISTORY = 4000;
/** A shared list is copied once this many points have fallen out of its window (and at least as many remain). */
const COMPACT_AT = 1024;
const NO_HISTORY: History = { points: [], lo: 0, hi: 0 };

/** The points of a history, oldest first (a copy). */
export function historyPoints(h: History | undefined): Array<[number, number]> {
  return h ? (h.points.slice(h.lo, h.hi) as Array<[number, number]>) : [];
}

/**
 * The history after a poll at `ts`: the points older than `keepMs` dropped, any at or after `ts` (a replay, a
 * clock jump back) dropped, and `v` appended unless it is null.
 */
export function recorded(old: History | undefined, ts: number, v: number | null, keepMs: number): History {
  const h = old ?? NO_HISTORY;
  const points = h.points;
  // A history is in time order (each step keeps points before its own ts, then appends ts): what fell out of
  // the window is a prefix and what a replayed or earlier step left at or after ts a suffix, so the kept points
  // are one range, found without calling a predicate on every point of the window every poll.
  const cutoff = ts - keepMs;
  let lo = h.lo;
  while (lo < h.hi && !(points[lo][0] >= cutoff)) lo++;
  let hi = h.hi;
  while (hi > lo && !(points[hi - 1][0] < ts)) hi--;
  if (v === null) return { points, lo, hi };
  // In place when this range ends the list and the dropped prefix is not most of it; else a list of its own
  // (a step from an older state, or time to let go of the points that fell out of the window).
  const own = hi === points.length && points !== NO_HISTORY.points && lo <= Math.max(COMPACT_AT, hi - lo);
  const list = own ? points : points.slice(lo, hi);
  if (!own) [lo, hi] = [0, hi - lo];
  list.push([ts, v]);
  hi++;
  return { points: list, lo: Math.max(lo, hi - MAX_HISTORY), hi };
}

/** The points at or after `from` (a copy of the window's tail only, not of the whole window). */
export function pointsSince(h: History | undefined, from: number): Array<[number, number]> {
  if (!h) return [];
  let lo = h.hi;
  while (lo > h.lo && h.points[lo - 1][0] >= from) lo--;
  return h.points.slice(lo, h.hi) as Array<[number, number]>;
}

/** Counter increase since `from` with Prometheus reset semantics (a drop means the counter restarted). */
export function increaseWithin(h: History | undefined, from: number): number {
  if (!h || h.hi - h.lo < 2) return 0;
  let inc = 0;
  let prev: number | null = null;
  for (let k = h.lo; k < h.hi; k++) {
    // Indexed, not destructured: a destructuring pattern may go through the iterator protocol per point.
    const t = h.points[k][0];
    const v = h.points[k][1];
    if (t < from) {
      prev = v;
      continue;
    }
    if (prev !== null) inc += v >= prev ? v - prev : v;
    prev = v;
  }
  return inc;
}

/** Least-squares slope of the points (value per ms); 0 with fewer than two distinct times. */
export function slope(h: ReadonlyArray<readonly [number, number]>): number {
  const n = h.length;
  if (n < 2) return 0;
  const mx = h.reduce((s, [t]) => s + t, 0) / n;
  const my = h.reduce((s, [, v]) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [t, v] of h) {
    sxy += (t - mx) * (v - my);
    sxx += (t - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

/**
 * A counter that rarely moves (systemd's NRestarts of every unit of a fleet) as its last value and the rises
 * since `keepMs` ago: a window's increase is the sum of a few rises, not a walk over a point per poll and unit.
 */
export interface Rises {
  readonly last: number;
  /** (ts, increase) of each poll the counter moved at, oldest first; a drop is a reset, its increase the value. */
  readonly rises: ReadonlyArray<readonly [number, number]>;
}

const MAX_RISES = 1000;

export function rose(
  old: Rises | undefined,
  ts: number,
  v: number | null,
  keepMs: number,
): Rises | undefined {
  if (v === null) return old;
  if (!old) return { last: v, rises: [] };
  const stale = old.rises.some(([t]) => t < ts - keepMs || t >= ts);
  if (v === old.last && !stale) return old;
  const kept = stale ? old.rises.filter(([t]) => t >= ts - keepMs && t < ts) : old.rises;
  const rises = v === old.last ? kept : [...kept, [ts, v > old.last ? v - old.last : v] as const];
  return { last: v, rises: rises.slice(-MAX_RISES) };
}

/** The counter's increase at or after `from`. */
export function risenSince(r: Rises | undefined, from: number): number {
  let inc = 0;
  for (const [t, d] of r?.rises ?? []) if (t >= from) inc += d;
  return inc;
}
