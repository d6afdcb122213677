// A page's history in one request: every chart asks for its own keys, and the asks made in the same turn
// (a page mounting, a range change, a zoom: all charts' effects run in one commit) go out as one
// getSeriesBatch per deployment and window. Before, a page of nineteen charts made nineteen requests answered
// one after another, and first paint was mostly round trips.
import type { SeriesBatchQuery, SeriesResult } from '@shared/contract';
import type { SignalKey } from '@shared/signals/spec';

export interface SeriesAsk {
  deploymentId: string;
  /**
   * Names the window the chart shows (e.g. `live:24h`, `fixed:<from>:<to>`): asks with the same name share one
   * request, with the bounds of the first of them (charts computing "now − 24 h" a millisecond apart mean the
   * same window).
   */
  windowKey: string;
  fromMs?: number;
  toMs?: number;
  keys: SignalKey[];
  maxPoints: number;
  /** Aborted when the chart no longer wants the answer; before the batch leaves, its keys are dropped from it. */
  signal?: AbortSignal;
}

/** R: what one group is answered with (getSeriesBatch's SeriesResult; getHistoryBatch's HistoryResult). */
export interface SeriesBatcher<R = SeriesResult> {
  /** The chart's own result, as getSeries (getHistory) would answer its keys alone. */
  get(ask: SeriesAsk): Promise<R>;
  /**
   * Sends what was asked so far now, without waiting for the scheduled turn's end: a page calls it once its
   * charts have all asked, before it builds them, so the core decimates while the page builds its charts.
   */
  flush(): void;
}

export interface SeriesBatcherOptions<R = SeriesResult> {
  fetch: (q: SeriesBatchQuery) => Promise<{ results: R[] }>;
  /** When the gathered asks leave; default: once the current task (the React commit) is done. */
  schedule?: (flush: () => void) => void;
}

interface Waiter<R> {
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

interface Group<R> {
  keys: SignalKey[];
  maxPoints: number;
  waiters: Set<Waiter<R>>;
}

interface Bucket<R> {
  deploymentId: string;
  fromMs?: number;
  toMs?: number;
  /** Identical asks (same keys, same width) share one group. */
  groups: Map<string, Group<R>>;
}

const abortError = (): Error => new DOMException('the chart stopped waiting for its history', 'AbortError');

export function createSeriesBatcher<R = SeriesResult>(opts: SeriesBatcherOptions<R>): SeriesBatcher<R> {
  const schedule = opts.schedule ?? ((f: () => void) => void setTimeout(f, 0));
  let pending = new Map<string, Bucket<R>>();
  let scheduled = false;

  const send = (b: Bucket<R>): void => {
    const groups = [...b.groups.values()].filter((g) => g.waiters.size > 0);
    if (groups.length === 0) return;
    const query: SeriesBatchQuery = {
      deploymentId: b.deploymentId,
      groups: groups.map((g) => ({ keys: g.keys, maxPoints: g.maxPoints })),
    };
    if (b.fromMs !== undefined) query.fromMs = b.fromMs;
    if (b.toMs !== undefined) query.toMs = b.toMs;
    opts.fetch(query).then(
      (res) => {
        if (res.results.length !== groups.length) {
          const err = new Error(
            `getSeriesBatch answered ${res.results.length} results for ${groups.length} groups`,
          );
          for (const g of groups) for (const w of g.waiters) w.reject(err);
          return;
        }
        groups.forEach((g, i) => {
          // Each chart gets its own copy: charts keep and mutate what they receive.
          let first = true;
          for (const w of g.waiters) {
            w.resolve(first ? res.results[i] : structuredClone(res.results[i]));
            first = false;
          }
        });
      },
      (err: unknown) => {
        for (const g of groups) for (const w of g.waiters) w.reject(err);
      },
    );
  };

  const flush = (): void => {
    // The scheduled flush still runs after an early one; it then finds nothing to send.
    scheduled = false;
    const buckets = pending;
    pending = new Map();
    for (const b of buckets.values()) send(b);
  };

  return {
    get(ask) {
      if (ask.signal?.aborted) return Promise.reject(abortError());
      const bucketKey = `${ask.deploymentId}\u0000${ask.windowKey}`;
      let bucket = pending.get(bucketKey);
      if (!bucket) {
        bucket = { deploymentId: ask.deploymentId, fromMs: ask.fromMs, toMs: ask.toMs, groups: new Map() };
        pending.set(bucketKey, bucket);
      }
      const groupKey = `${ask.maxPoints}\u0000${ask.keys.join(',')}`;
      let group = bucket.groups.get(groupKey);
      if (!group) {
        group = { keys: [...ask.keys], maxPoints: ask.maxPoints, waiters: new Set() };
        bucket.groups.set(groupKey, group);
      }
      const g = group;
      const result = new Promise<R>((resolve, reject) => {
        const waiter: Waiter<R> = { resolve, reject };
        g.waiters.add(waiter);
        ask.signal?.addEventListener(
          'abort',
          () => {
            // Not sent yet: the request leaves without these keys. Sent: the answer is simply not delivered.
            g.waiters.delete(waiter);
            reject(abortError());
          },
          { once: true },
        );
      });
      if (!scheduled) {
        scheduled = true;
        schedule(flush);
      }
      return result;
    },
    flush,
  };
}
