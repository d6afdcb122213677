// Comparing a sample's label set with one kept from an earlier scrape of the same target: the consumers of a
// scrape (live columns, the recorder, the review overview) each remember the series at every position of the
// last scrape and check that the sample there is still it before anything else.

/** Whether labels `a` equal `b`, whose key count is `bCount` (counted once, when `b` was kept). */
export function sameLabels(a: Record<string, string>, b: Record<string, string>, bCount: number): boolean {
  if (a === b) return true;
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  return n === bCount;
}

/**
 * The label set to keep for a series once the parser hands it the same strings every scrape: the parser's own
 * object when it is frozen (its series cache shares one per series across scrapes, so a later comparison is one
 * identity check), else a copy, since an exposition's other objects belong to its caller.
 */
export function adoptLabels(labels: Record<string, string>): Record<string, string> {
  return Object.isFrozen(labels) ? labels : { ...labels };
}
