// The time axis's tick labels, formatted once per tick instead of on every live update: Chart.js rebuilds and
// re-labels the x ticks at each update('none'), and date-fns's format was ≈ 13 % of a fleet KV chart's live
// update in a renderer profile, for labels that are the same from one second to the next (the window slides
// by a second, ticks fall every 30 s or more). Same formats and same function as the date-fns adapter used.
import { format } from 'date-fns';

export type TickUnit = 'second' | 'minute' | 'hour' | 'day';

/** The label format of each tick unit. */
export const DISPLAY_FORMATS: Record<TickUnit, string> = {
  second: 'HH:mm:ss',
  minute: 'HH:mm',
  hour: 'HH:mm',
  day: 'MMM d',
};

/** A page's charts share the labels; a few hundred ticks cover any window, the bound is for a long session. */
const MAX_CACHED = 2000;
const cache = new Map<string, string>();

/** The label of the tick at `ms` for a window ticked in `unit`, as the date-fns adapter wrote it. */
export function tickLabel(ms: number, unit: TickUnit): string {
  const key = `${unit}:${ms}`;
  let label = cache.get(key);
  if (label === undefined) {
    if (cache.size >= MAX_CACHED) cache.clear();
    label = format(ms, DISPLAY_FORMATS[unit]);
    cache.set(key, label);
  }
  return label;
}
