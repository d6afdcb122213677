// The history of a review's first screen, asked for the moment its open is answered: the overview's KV charts
// would otherwise ask only once the whole review page has rendered and laid out (100–300 ms later), and the
// core would then decimate while the page waits. A chart takes a prefetched answer when it is for the same
// deployment, window and keys, with at least the points the chart asks for and at most twice as many (its
// width is not known before the page is laid out, so the prefetch asks for half the window's width); any other
// ask goes out as usual.
import type { SeriesBatchQuery, SeriesBatchResult, SeriesResult } from '@shared/contract';
import type { DeploymentSummary } from '@shared/domain';
import { signalKey, type SignalKey } from '@shared/signals/spec';
import type { SeriesAsk } from '../charts/series-batch';

interface Prefetched {
  deploymentId: string;
  fromMs: number;
  toMs: number;
  keys: string;
  maxPoints: number;
  result: Promise<SeriesResult>;
}

/** A prefetched answer nobody took in this long is dropped (the operator went to another page). */
const KEEP_MS = 15_000;
let waiting: Prefetched[] = [];

/** The overview's KV charts of review `summary`, over its whole session (the window a review opens on). */
export function prefetchOverview(
  summary: DeploymentSummary,
  fetch: (q: SeriesBatchQuery) => Promise<SeriesBatchResult>,
  viewportWidth: number,
): void {
  const r = summary.review;
  if (!r) return;
  const keys: SignalKey[][] = summary.deployment.services
    .filter((s) => s.role !== 'router')
    .map((s) => [signalKey(s.role as 'prefill' | 'decode', 'kv_ratio')]);
  if (keys.length === 0) return;
  // The charts' own rule (TimeChart): the box's width in points, 300 to 4000; two charts share a row.
  const maxPoints = Math.min(4000, Math.max(300, Math.round(viewportWidth / 2)));
  const q: SeriesBatchQuery = {
    deploymentId: summary.deployment.id,
    fromMs: r.firstTs,
    toMs: r.lastTs + 1,
    groups: keys.map((k) => ({ keys: k, maxPoints })),
  };
  const answer = fetch(q);
  // Taken or not, a failure is the chart's to show (it takes the rejection) or nobody's.
  answer.catch(() => undefined);
  const entries = keys.map((k, i) => ({
    deploymentId: q.deploymentId,
    fromMs: q.fromMs!,
    toMs: q.toMs!,
    keys: k.join(','),
    maxPoints,
    result: answer.then((a) => a.results[i]),
  }));
  for (const e of entries) e.result.catch(() => undefined);
  waiting.push(...entries);
  setTimeout(() => (waiting = waiting.filter((w) => !entries.includes(w))), KEEP_MS);
}

/** The prefetched answer to `ask`, taken (once), or null. */
export function takePrefetched(ask: SeriesAsk): Promise<SeriesResult> | null {
  const keys = ask.keys.join(',');
  const i = waiting.findIndex(
    (w) =>
      w.deploymentId === ask.deploymentId &&
      w.fromMs === ask.fromMs &&
      w.toMs === ask.toMs &&
      w.keys === keys &&
      w.maxPoints >= ask.maxPoints &&
      w.maxPoints <= 2 * ask.maxPoints,
  );
  if (i < 0) return null;
  const [w] = waiting.splice(i, 1);
  return w.result;
}
