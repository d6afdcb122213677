// Opening a recording for review: from the review cache when it holds this exact file, otherwise by reading the
// recording (only the series the dashboard's signals need are decoded) and computing the signal table — then
// caching it for the next open. Errors of the cache never stop an open; errors of the file do, with the
// reader's message (not a recording, newer version, unreadable).
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { readRecording } from '../store/recording/reader';
import type { JournalLine } from '../store/recording/types';
import { isSignalInput as isReviewInput } from '../signals/evaluate';
import { isHostSeries } from '../store/recording/host-series';
import { buildReviewData, type ReviewData, type SeenSeries } from './review-data';
import type { ReviewCache, SourceStamp } from './review-cache';

export interface LoadedReview {
  data: ReviewData;
  /** The journal; from the cache it is read after the first paint. */
  journal: Promise<JournalLine[]>;
  loadedFrom: 'recording' | 'cache';
  openMs: number;
  stamp: SourceStamp;
  /** Settles when the cache entry of a fresh read is written (or failed: `cacheError`). */
  cached: Promise<void>;
}

export interface LoadOptions {
  cache?: ReviewCache;
  /** The file is still being written: read it as it is, do not cache it. */
  live?: boolean;
  /** Told when the cache could not be read or written (opening goes on). */
  onCacheError?: (err: Error) => void;
  /** Delay before the cache entry of a fresh read is written; default 1 s. */
  cacheDelayMs?: number;
}

export async function loadReview(path: string, opts: LoadOptions = {}): Promise<LoadedReview> {
  const started = performance.now();
  const st = await stat(path);
  const stamp: SourceStamp = { path, size: st.size, mtimeMs: st.mtimeMs };
  if (opts.cache && !opts.live) {
    const hit = await opts.cache.load(stamp).catch((err: Error) => {
      opts.onCacheError?.(new Error(`review cache unreadable for ${path}: ${err.message}`));
      return null;
    });
    if (hit) {
      const journal = hit.journal();
      // Attach a handler now; callers await it later (or never, for a review closed at once).
      journal.catch(() => undefined);
      return {
        data: hit.data,
        journal,
        loadedFrom: 'cache',
        openMs: performance.now() - started,
        stamp,
        cached: Promise.resolve(),
      };
    }
  }
  const seen = new Map<string, SeenSeries>();
  const rec = await readRecording(path, {
    series: (s) => {
      let c = seen.get(s.target);
      if (!c) seen.set(s.target, (c = { families: new Set(), series: 0 }));
      c.families.add(s.family);
      c.series++;
      return isReviewInput(s.name) || isHostSeries(s.target, s.name);
    },
  });
  const data = buildReviewData(rec, seen);
  const openMs = performance.now() - started;
  // The cache is written once the first screen has been served (its requests follow within a second), so the
  // write does not compete with the first paint.
  const cache = opts.cache;
  const cached =
    cache && !opts.live
      ? new Promise<void>((resolve) => setTimeout(resolve, opts.cacheDelayMs ?? 1000))
          .then(() => cache.store(stamp, data, rec.journal))
          .catch((err: Error) =>
            opts.onCacheError?.(new Error(`review cache not written for ${path}: ${err.message}`)),
          )
      : Promise.resolve();
  return { data, journal: Promise.resolve(rec.journal), loadedFrom: 'recording', openMs, stamp, cached };
}
