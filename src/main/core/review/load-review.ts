// Opening a recording for review. A file of the current format shows its first screen from the recording's
// overview (review's signals at overview resolution, a fraction of the file, read without inflating the rest);
// the full-resolution data takes its place in the background once the first screen has been served (or at once
// when a zoom needs it) — from the review cache when it holds this exact file, else read from the file. A file
// without a usable overview opens from the cache, or is read whole (only the series the dashboard's signals
// need are decoded); one of an older format minor also says, in one line, that re-saving it makes it open at
// once. A fresh full read is then cached for the next open. Errors of the cache never stop an open; errors of
// the file do, with the reader's message (not a recording, newer version, unreadable).
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { formatNote, servicesNamed } from '../recording/format';
import { readRecording } from '../recording/reader';
import { readOverview } from '../recording/overview-reader';
import type { JournalLine, Recording, SeriesInfo } from '../recording/types';
import { isReviewInput } from './review-inputs';
import { buildReviewData, type ReviewData, type SeenSeries } from './review-data';
import { tableReviewData, type TableRecord } from './overview-table';
import type { ReviewCache, SourceStamp } from './review-cache';

export interface LoadedReview {
  /** What the review shows now: the overview's data until the full read replaces it (then `detail` is 'full'). */
  data: ReviewData;
  /** The journal; from the cache it is read after the first paint, from an overview with the full read. */
  journal: Promise<JournalLine[]>;
  loadedFrom: 'recording' | 'cache' | 'overview';
  /** 'overview' while `data` holds the overview's coarser rows (one per target every stepMs). */
  detail: 'overview' | 'full';
  openMs: number;
  stamp: SourceStamp;
  /** Settles when the cache entry of a fresh read is written (or failed: `cacheError`). */
  cached: Promise<void>;
  /** Settles once `data` holds the full resolution (at once unless opened from the overview). */
  full: Promise<void>;
  /** Something cannot be answered from the overview (a zoom finer than it): the full detail is wanted now. */
  needFull: () => void;
  /** The first screen's history has been answered: the full detail starts once the page has drawn it. */
  firstScreenServed: () => void;
  /** A warning of this open (the sidecar's, …) that `data` keeps when the full detail replaces the overview. */
  keepWarning: (w: string) => void;
}

export interface LoadOptions {
  cache?: ReviewCache;
  /** The file is still being written: read it as it is, do not cache it. */
  live?: boolean;
  /** Told when the cache could not be read or written (opening goes on). */
  onCacheError?: (err: Error) => void;
  /** Delay before the cache entry of a fresh read is written; default 1 s. */
  cacheDelayMs?: number;
  /**
   * After an open from the overview, the longest the full detail (the cache entry, else a full read) waits for
   * the first screen to be served before it starts anyway (a client that never asks for it); default 2.5 s.
   */
  fullDelayMs?: number;
  /** From the first screen served to the start of the full detail (the page drawing it); default 0.3 s. */
  drawMs?: number;
  /** Read the whole file even when it has an overview (the overview is then not used). */
  noOverview?: boolean;
  /** From the cache, the journal is read when first asked for, or after this delay; default 1.5 s. */
  journalDelayMs?: number;
}

/**
 * How long after the answer the full detail of an open from the overview starts when nobody asks for the first
 * screen's history (a client other than the review page): the page's first screen takes ~0.35 s on a quiet
 * two-core machine and ~2 s at load 14.
 */
const FIRST_SCREEN_MS = 2500;
/**
 * From the first screen's history answered to the full detail started: the page draws the overview's charts
 * 50–70 ms after that answer on a quiet two-core machine (bench/review-open.ts), longer under load; the full
 * read would take a core from it.
 */
const DRAW_MS = 300;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function loadReview(path: string, opts: LoadOptions = {}): Promise<LoadedReview> {
  const started = performance.now();
  const st = await stat(path);
  const stamp: SourceStamp = { path, size: st.size, mtimeMs: st.mtimeMs };
  const cache = opts.cache && !opts.live ? opts.cache : undefined;
  const cacheError = (err: Error): null => {
    opts.onCacheError?.(new Error(`review cache unreadable for ${path}: ${err.message}`));
    return null;
  };
  const cached = cache ? await cache.has(stamp).catch(() => false) : false;
  const overview = opts.noOverview ? null : await readOverview(path);
  // A file that was never closed has no overview of its last stretch (up to 10 min): when that is much of it
  // (a short session killed), the full read is the first screen. So is it when the overview is damaged: the
  // review is rebuilt from the data, which the damage did not touch.
  if (overview && overview.members > 0 && !overview.damage && overview.uncoveredBytes <= st.size / 5) {
    const data = tableReviewData(overview.recording, overview.tables as TableRecord[]);
    // Warnings of this open that the full detail's data would not carry itself (the format note, the
    // sidecar's): a swap must not make them disappear from the review.
    const kept: string[] = [];
    const keepWarning = (w: string): void => {
      kept.push(w);
      if (!loaded.data.warnings.includes(w)) loaded.data.warnings.push(w);
    };
    const swapIn = (next: ReviewData): void => {
      for (const w of kept) if (!next.warnings.includes(w)) next.warnings.push(w);
      loaded.data = next;
      loaded.detail = 'full';
    };
    // The full detail (a full read: ~5 s of CPU for a day on a quiet machine, more under load; a cache entry:
    // 50-110 ms) waits until the page has drawn the first screen: started while the page was still drawing, at
    // load 11-16 on two cores, it took the core from the page (core CPU from the click to the overview drawn:
    // 390 ms with the full read under way, 140-160 ms without). It starts once the first screen's history has
    // been answered (and drawn), at once for a zoom the overview cannot fill, or after FIRST_SCREEN_MS when
    // nobody asks. One wait for both sources: after an unusable cache entry the file is read at once.
    let start: () => void = () => undefined;
    const begun = new Promise<void>((resolve) => (start = resolve));
    const fallback = setTimeout(start, opts.fullDelayMs ?? FIRST_SCREEN_MS);
    let drawn: ReturnType<typeof setTimeout> | null = null;
    const firstScreen = begun.then(() => {
      clearTimeout(fallback);
      if (drawn) clearTimeout(drawn);
    });
    const loaded: LoadedReview = {
      data,
      journal: Promise.resolve([]),
      loadedFrom: cached ? 'cache' : 'overview',
      detail: 'overview',
      openMs: performance.now() - started,
      stamp,
      cached: Promise.resolve(),
      full: Promise.resolve(),
      needFull: () => start(),
      firstScreenServed: () => {
        drawn ??= setTimeout(start, opts.drawMs ?? DRAW_MS);
      },
      keepWarning,
    };
    // Cached: the full detail comes from the cache entry, swapped in once the first screen has been served.
    // Serving the first screen from the entry's full-resolution columns made a second open slower than the
    // first (every overview chart decimated from a day of 1 s rows; in-process CPU, load ~13: first screen
    // 15-120 ms from the entry vs 2-6 ms from the overview), and loading the entry competed with it.
    const hit =
      cached && cache ? firstScreen.then(() => cache.load(stamp).catch(cacheError)) : Promise.resolve(null);
    const swapped = hit.then((h) => {
      if (!h) return false;
      swapIn(h.data);
      return true;
    });
    // Not cached (or the entry went away): the full read, once the first screen has been served. What the
    // review keeps of it is its signal table and journal: the decoded columns (~200 MiB for a day) are garbage
    // once evaluated, and were kept for as long as the review stayed open.
    // The file's journal is answered as soon as it has been read, before the evaluation (1.5-2 s of CPU for a
    // day, in one turn) starts in a turn of its own: the page asks for it with the first screen.
    let journalRead: (j: JournalLine[]) => void = () => undefined;
    let journalFailed: (err: unknown) => void = () => undefined;
    const readJournal = new Promise<JournalLine[]>((resolve, reject) => {
      journalRead = resolve;
      journalFailed = reject;
    });
    // Nobody may ask (the review closed first); whoever does gets the rejection.
    readJournal.catch(() => undefined);
    const fresh = swapped.then((ok) =>
      ok
        ? null
        : firstScreen.then(async () => {
            try {
              const { rec, seen } = await readFull(path);
              journalRead(rec.journal);
              await new Promise((resolve) => setImmediate(resolve));
              return { data: buildReviewData(rec, seen), journal: rec.journal };
            } catch (err) {
              journalFailed(err);
              throw err;
            }
          }),
    );
    loaded.full = fresh.then(
      (f) => {
        if (!f) return;
        swapIn(f.data);
        loaded.loadedFrom = 'overview';
      },
      (err: Error) => {
        // The overview stays; the operator learns why zooming in shows no more detail.
        data.warnings.push(
          `The full detail of the recording could not be read (${err.message}): the review shows its overview only.`,
        );
      },
    );
    // From the cache the journal is read when first asked for (or after a while), as on a plain cache open.
    loaded.journal = lazy(
      () => hit.then((h) => (h ? h.journal() : readJournal)),
      opts.journalDelayMs ?? 1500,
    );
    loaded.cached = loaded.full.then(() =>
      loaded.detail === 'full'
        ? fresh.then((f) =>
            f
              ? cacheLater(
                  path,
                  stamp,
                  // What this open added (the sidecar's warning) is not the file's: the next open says it anew.
                  { ...loaded.data, warnings: loaded.data.warnings.filter((w) => !kept.includes(w)) },
                  f.journal,
                  opts,
                )
              : undefined,
          )
        : undefined,
    );
    return loaded;
  }
  if (cached && cache) {
    const hit = await cache.load(stamp).catch(cacheError);
    if (hit) {
      // Inflating and parsing the cached journal (~0.3 s for a day) would hold up the first screen's requests.
      const journal = lazy(hit.journal, opts.journalDelayMs ?? 1500);
      return {
        data: hit.data,
        journal,
        loadedFrom: 'cache',
        detail: 'full',
        openMs: performance.now() - started,
        stamp,
        cached: Promise.resolve(),
        full: Promise.resolve(),
        needFull: () => undefined,
        firstScreenServed: () => undefined,
        keepWarning: (w) => void hit.data.warnings.push(w),
      };
    }
  }
  const reading = performance.now();
  const { rec, seen } = await readFull(path);
  // Said of the file as read: building the review names its services as today's app does.
  const note = formatNote(rec.header.minorVersion, servicesNamed(rec.header));
  const data = buildReviewData(rec, seen);
  if (note && !opts.noOverview) data.warnings.push(note);
  // Said of this open only: the next one opens from the cache entry.
  const rebuilt = overview?.damage
    ? `The review was rebuilt from the recording's data in ${((performance.now() - reading) / 1000).toFixed(1)} s, as its overview is damaged.`
    : null;
  if (rebuilt) data.warnings.push(rebuilt);
  const openMs = performance.now() - started;
  return {
    data,
    journal: Promise.resolve(rec.journal),
    loadedFrom: 'recording',
    detail: 'full',
    openMs,
    stamp,
    cached: cacheLater(
      path,
      stamp,
      rebuilt ? { ...data, warnings: data.warnings.filter((w) => w !== rebuilt) } : data,
      rec.journal,
      opts,
    ),
    full: Promise.resolve(),
    needFull: () => undefined,
    firstScreenServed: () => undefined,
    keepWarning: (w) => void data.warnings.push(w),
  };
}

/** A promise of `read()` that starts it when first awaited, or after `afterMs`, whichever comes first. */
function lazy<T>(read: () => Promise<T>, afterMs: number): Promise<T> {
  let p: Promise<T> | null = null;
  const start = (): Promise<T> => (p ??= read());
  // In the background: errors go to whoever asks later (or nowhere, for a review closed at once).
  setTimeout(() => start().catch(() => undefined), afterMs).unref?.();
  const later: PromiseLike<T> & Pick<Promise<T>, 'catch' | 'finally'> = {
    then: (ok, fail) => start().then(ok, fail),
    catch: (fail) => start().catch(fail),
    finally: (done) => start().finally(done),
  };
  return later as Promise<T>;
}

/** Reads the series review mode needs, counting every series seen (for "families / series recorded"). */
async function readFull(path: string): Promise<{ rec: Recording; seen: Map<string, SeenSeries> }> {
  const seen = new Map<string, SeenSeries>();
  const rec = await readRecording(path, { series: reviewSeries(seen) });
  return { rec, seen };
}

function reviewSeries(seen: Map<string, SeenSeries>): (s: SeriesInfo) => boolean {
  return (s) => {
    let c = seen.get(s.target);
    if (!c) seen.set(s.target, (c = { families: new Set(), series: 0 }));
    c.families.add(s.family);
    c.series++;
    return isReviewInput(s.name);
  };
}

/** The cache is written once the first screen has been served, so the write does not compete with the first paint. */
function cacheLater(
  path: string,
  stamp: SourceStamp,
  data: ReviewData,
  journal: JournalLine[],
  opts: LoadOptions,
): Promise<void> {
  const cache = opts.cache;
  if (!cache || opts.live) return Promise.resolve();
  return delay(opts.cacheDelayMs ?? 1000)
    .then(() => cache.store(stamp, data, journal))
    .catch((err: Error) =>
      opts.onCacheError?.(new Error(`review cache not written for ${path}: ${err.message}`)),
    );
}
