// The grid of a range query for a chart: about one point per pixel, never finer than the scrape interval
// (finer steps repeat samples and cost bytes) nor than Prometheus's 11,000 points per series, aligned to
// multiples of the step so a re-asked or panned range lands on the same instants (no points that wobble).
export const MAX_POINTS_PER_SERIES = 11_000;

export interface RangeGrid {
  startS: number;
  endS: number;
  stepS: number;
}

/** Nice steps (s): a step reads as 15 s, 1 m, 5 m… in the query the operator may paste. */
const NICE = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

export function rangeGrid(
  fromMs: number,
  toMs: number,
  points: number,
  scrapeIntervalS = 1,
): RangeGrid | null {
  const spanS = (toMs - fromMs) / 1000;
  if (!(spanS > 0)) return null;
  const want = Math.max(scrapeIntervalS, spanS / Math.max(2, points), spanS / MAX_POINTS_PER_SERIES);
  const stepS = NICE.find((s) => s >= want) ?? Math.ceil(want / 86400) * 86400;
  const startS = Math.ceil(fromMs / 1000 / stepS) * stepS;
  // The end stays before toMs: the part after it is someone else's (the live store's newest minutes).
  let endS = Math.floor((toMs / 1000 - 1e-3) / stepS) * stepS;
  if (endS < startS) endS = startS;
  return { startS, endS, stepS };
}
