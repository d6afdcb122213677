// A round's 'dashboard' push (DashboardPush, src/shared/api/dashboard.ts): what changed since the previous
// round's push, which every window listening holds; whole when there was none (nobody listened) or when a key
// went away, which a change cannot say. A window lays it over its snapshot (src/renderer/src/state/dashboard-push.ts).
import type { DashboardPush, DashboardSnapshot, SignalMissing } from '@shared/contract';

export function dashboardPush(before: DashboardSnapshot | undefined, snap: DashboardSnapshot): DashboardPush {
  const values = before && changedValues(before.values, snap.values);
  if (!before || !values) return snap;
  const { notExposed, gpu, ...rest } = snap;
  return {
    ...rest,
    since: before.ts,
    values,
    ...(sameMissing(before.notExposed, notExposed) ? {} : { notExposed }),
    // The same reading is the same object: the service keeps the latest until the next one comes.
    ...(before.gpu === gpu ? {} : { gpu }),
  };
}

/** The keys whose value is not as before; null when a key of before is gone, which a change cannot say. */
function changedValues(
  before: Record<string, number | null>,
  now: Record<string, number | null>,
): Record<string, number | null> | null {
  const out: Record<string, number | null> = {};
  let kept = 0;
  for (const k in now) {
    if (Object.hasOwn(before, k)) kept++;
    if (before[k] !== now[k]) out[k] = now[k];
  }
  return kept === Object.keys(before).length ? out : null;
}

/** The same signals not exposed, for the same reasons (the store makes new entries when a scrape's set changes). */
function sameMissing(a: Record<string, SignalMissing>, b: Record<string, SignalMissing>): boolean {
  const keys = Object.keys(b);
  if (Object.keys(a).length !== keys.length) return false;
  return keys.every((k) => {
    const x = a[k];
    const y = b[k];
    return (
      x === y ||
      (x !== undefined &&
        x.why === y.why &&
        x.expected.length === y.expected.length &&
        x.expected.every((e, i) => e === y.expected[i]))
    );
  });
}
