// One scrape as evaluator columns of one row: what the point-in-time readings of a single scrape (the monitor's
// KV, a restart's load check, the router's worker table) hand the same evaluator the live store and review use.
// Lighter than LiveColumns, which keeps a window of rows growing and pruning: here each series is its value.
import type { Exposition } from '../probes/exposition/types';
import { TargetColumns } from '../review/target-columns';

const ONE_ROW = new Float64Array([0]);

export function scrapeColumns(
  target: string,
  exp: Exposition,
  track: (name: string) => boolean,
): TargetColumns {
  const cols = new TargetColumns(target, ONE_ROW);
  for (const fam of exp.families)
    for (const s of fam.samples) {
      if (!Number.isFinite(s.value) || !track(s.name)) continue;
      cols.add({ name: s.name, labels: s.labels, rows: null, row0: 0, v: Float64Array.of(s.value) });
    }
  return cols;
}
