// Cache of parsed series text (metric name + label set, exactly as written) across parses. An endpoint
// scraped every second repeats the same series text every time; like Prometheus' scrape cache, recognising
// the text skips label parsing entirely. The result does not depend on the cache: an entry is only ever the
// parse of exactly its key, so parseExposition stays a pure function.
//
// Storing a series costs several times more than parsing it (copies, long-lived objects for the GC), so a
// series is only stored the second time it is seen: a one-off parse or an exporter whose series change on
// every scrape then pays only a set lookup per series.

export interface CachedSeries {
  /** The key, detached from the scrape it was first read in. */
  key: string;
  name: string;
  /** Template; callers receive copies. */
  labels: Record<string, string>;
  names: string[];
  values: string[];
  /** Where each label value starts, relative to the start of the key (for error columns). */
  valueOffsets: number[];
  /** The series that followed this one in the last parse that read it: usually the next one again. */
  next: CachedSeries | undefined;
  /** Memo of the `le` label read as a float (null: not a float), filled by the first check that needs it. */
  le: number | null | undefined;
  /** Same for the `quantile` label. */
  quantile: number | null | undefined;
  /** Memo of the OpenMetrics group key of this series without the label `groupKeyExcluded`. */
  groupKey: string | undefined;
  groupKeyExcluded: string;
}

/**
 * Two generations of at most `generationSize` entries each: when the current one is full it becomes the
 * previous one and the older entries are dropped, so series that are still scraped survive (a hit in the
 * previous generation moves the entry forward) and memory stays bounded.
 */
export class SeriesCache {
  private current = new Map<string, CachedSeries>();
  private previous = new Map<string, CachedSeries>();
  private readonly generationSize: number;
  // Series seen once, keyed by views into recent scrapes (the map lookup already hashed them); forgotten every
  // few parses so that those views keep only a few scrapes alive.
  private seenOnce = new Set<string>();
  private seenParses = 0;
  private seenChars = 0;

  constructor(generationSize: number) {
    this.generationSize = generationSize;
  }

  /** Called once per parse with the size of its text; bounds how much recent text seenOnce may keep alive. */
  beginParse(textLength: number): void {
    if (this.seenParses >= 8 || this.seenChars + textLength > 32 * 1024 * 1024) {
      this.seenOnce = new Set();
      this.seenParses = 0;
      this.seenChars = 0;
    }
    this.seenParses++;
    this.seenChars += textLength;
  }

  /**
   * Whether `key` is worth storing: true when it was seen in one of the last few parses; otherwise remembers
   * it and returns false.
   */
  admit(key: string): boolean {
    if (this.seenOnce.has(key)) return true;
    // The cache holds two generations; remembering more first sightings than that can never pay off, and an
    // exposition of a million one-off series would otherwise hold a million entries here (~50 bytes each).
    if (this.seenOnce.size < this.generationSize * 2) this.seenOnce.add(key);
    return false;
  }

  get(key: string): CachedSeries | undefined {
    const hit = this.current.get(key);
    if (hit !== undefined) return hit;
    const old = this.previous.get(key);
    if (old !== undefined) this.set(old);
    return old;
  }

  set(entry: CachedSeries): void {
    if (this.current.size >= this.generationSize) {
      // Dropped entries must not keep others alive through their `next` links.
      for (const [key, dropped] of this.previous) {
        if (this.current.get(key) !== dropped) dropped.next = undefined;
      }
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(entry.key, entry);
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }

  clear(): void {
    this.current = new Map();
    this.previous = new Map();
    this.seenOnce = new Set();
    this.seenParses = 0;
    this.seenChars = 0;
  }
}

/** Room for a few thousand series per endpoint on several endpoints; ~1-2 kB per entry at most. */
const GENERATION_SIZE = 8192;

/**
 * One cache per format: a label set written with blanks is valid Prometheus text but not OpenMetrics, so an
 * entry made by the lenient dialect must never answer for the strict one.
 */
export const SERIES_CACHES = {
  prometheus: new SeriesCache(GENERATION_SIZE),
  openmetrics: new SeriesCache(GENERATION_SIZE),
};

/** Empties the caches (benchmarks measure cold parses with it). */
export function clearSeriesCaches(): void {
  SERIES_CACHES.prometheus.clear();
  SERIES_CACHES.openmetrics.clear();
}

/**
 * A copy of `s` that shares no memory with the text it was sliced from. V8 represents slices of 13 or more
 * characters as views that keep the whole parent string alive; a cached key or label value must not pin a
 * scrape of hundreds of kilobytes. Shorter strings are already copies.
 */
export function detach(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}
