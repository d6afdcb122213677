// Parse state of one scrape target: the parsed series text (metric name + label set, exactly as written) of
// that target's recent scrapes. An endpoint scraped every second repeats the same series text every time;
// like the cache of a Prometheus scrape loop, recognising the text skips label parsing entirely. The result
// does not depend on the cache: an entry is only ever the parse of exactly its key, so parseExposition stays
// a pure function.
//
// One cache belongs to one target and lives as long as the caller's poller of that target (dispose it with
// the poller). It grows with the target's series and drops the ones the target stopped serving, so it never
// has to cycle through entries the way a fixed-size cache shared by many targets does: once the shared
// total exceeded that size, every scrape stored every series again and never hit, which made warm parses
// several times slower than no cache at all.
//
// Storing a series costs several times more than parsing it (copies, long-lived objects for the GC), so a
// series is only stored the second time it is seen: an exporter whose series change on every scrape then
// pays only a set lookup per series.

import type { ExpositionFormat } from './types';

export interface CachedSeries {
  /** The key, detached from the scrape it was first read in. */
  key: string;
  name: string;
  /**
   * Frozen, and handed to every sample of the series in every parse that reads it from the cache: a copy per
   * sample per scrape was most of a warm parse's allocation.
   */
  labels: Record<string, string>;
  names: string[];
  values: string[];
  /** Where each label value starts, relative to the start of the key (for error columns). */
  valueOffsets: number[];
  /** The series that followed this one in the last parse that read it: usually the next one again. */
  next: CachedSeries | undefined;
  /** Number of the last parse that read this series (see SeriesCache.parseNumber). */
  seen: number;
  /** Memo of the `le` label read as a float (null: not a float), filled by the first check that needs it. */
  le: number | null | undefined;
  /** Same for the `quantile` label. */
  quantile: number | null | undefined;
  /** Memo of the OpenMetrics group key of this series without the label `groupKeyExcluded`. */
  groupKey: string | undefined;
  groupKeyExcluded: string;
}

/**
 * A series no parse read for this many parses is dropped. Exporters omit a series for a scrape or two (a
 * histogram with no observations yet, a worker briefly gone); longer than that, it is not being served.
 */
export const UNSEEN_PARSES_KEPT = 4;

/**
 * Interned names and HELP texts kept per target before the table starts again: a target serves a few hundred
 * names; one whose names change on every scrape must not grow it without end.
 */
const MAX_INTERNED = 16_384;

/**
 * The series cache of one scrape target. Pass the same instance to every parse of that target's expositions
 * (ParseOptions.cache), and none for a one-off parse. It only ever changes the speed of a parse, never its
 * result. Not for sharing between targets: each one would evict what the others serve.
 */
export class SeriesCache {
  private entries = new Map<string, CachedSeries>();
  // Series seen in this parse and the previous one without being stored, keyed by views into those scrapes
  // (the map lookup already hashed them): a series is stored when it comes back in the next parse.
  private seenNow = new Set<string>();
  private seenBefore = new Set<string>();
  /** Metric names and HELP texts this target serves, each held once and detached from its scrape. */
  private strings = new Map<string, string>();
  /** Entries are only ever the parse of one dialect: a lenient Prometheus label set is not OpenMetrics. */
  private format: ExpositionFormat | undefined;
  private parses = 0;
  private disposed = false;
  /** Samples whose series came from the cache, and series stored, over the cache's life (tests, benchmarks). */
  hits = 0;
  stored = 0;

  /** Number of the parse under way; entries read by it carry it in `seen`. */
  get parseNumber(): number {
    return this.parses;
  }

  /**
   * Called once at the start of every parse. Drops what the target stopped serving and returns false when the
   * cache was disposed (a scrape still in flight when its poller went away), in which case the parse runs
   * uncached.
   */
  beginParse(format: ExpositionFormat): boolean {
    if (this.disposed) return false;
    if (format !== this.format) {
      // the endpoint changed dialect (an upgrade, a proxy): nothing stored for the other one may answer
      this.clear();
      this.format = format;
    }
    this.parses++;
    this.seenBefore = this.seenNow;
    this.seenNow = new Set();
    // A sweep costs a pass over the entries, far less than a parse of the series they stand for; doing it
    // every few parses keeps that share small. Entries unseen for UNSEEN_PARSES_KEPT parses go; so an entry
    // outlives its last sighting by at most twice that.
    if (this.parses % UNSEEN_PARSES_KEPT === 0) this.evictUnseen(this.parses - UNSEEN_PARSES_KEPT);
    return true;
  }

  /**
   * Whether `key` is worth storing: true when the previous parse saw it too; otherwise remembers it and
   * returns false.
   */
  admit(key: string): boolean {
    if (this.seenBefore.has(key) || this.seenNow.has(key)) return true;
    this.seenNow.add(key);
    return false;
  }

  /**
   * `s` as a string of the cache's own. A name or HELP text read from a scrape is a view of the whole scrape
   * text (see detach); one kept by a long-lived reader (a live series' name, a family's help) would keep that
   * text alive, and the texts of every target lived a round and were promoted to the old generation. The same
   * name in every scrape is then also the same string, which compares at once.
   */
  intern(s: string): string {
    let own = this.strings.get(s);
    if (own === undefined) {
      if (this.strings.size >= MAX_INTERNED) this.strings = new Map();
      own = detach(s);
      this.strings.set(own, own);
    }
    return own;
  }

  get(key: string): CachedSeries | undefined {
    return this.entries.get(key);
  }

  set(entry: CachedSeries): void {
    this.stored++;
    entry.seen = this.parses;
    this.entries.set(entry.key, entry);
  }

  /** Stored series. At most the series of the target's last few scrapes. */
  get size(): number {
    return this.entries.size;
  }

  /** Series remembered as seen once (the admission sets), for tests of the bound. */
  get pendingSize(): number {
    return this.seenNow.size + this.seenBefore.size;
  }

  clear(): void {
    this.entries = new Map();
    this.strings = new Map();
    this.seenNow = new Set();
    this.seenBefore = new Set();
  }

  /** Frees everything; later parses given this cache run uncached. */
  dispose(): void {
    this.disposed = true;
    this.clear();
  }

  private evictUnseen(before: number): void {
    // forEach, not for…of over entries: no [key, entry] pair per series (deleting the visited entry is safe).
    this.entries.forEach((entry, key) => {
      if (entry.seen < before) {
        this.entries.delete(key);
      } else if (entry.next !== undefined && entry.next.seen < before) {
        // a dropped entry must not stay alive (and answer predictions) through the link of a kept one
        entry.next = undefined;
      }
    });
  }
}

/**
 * A copy of `s` that shares no memory with the text it was sliced from. V8 represents slices of 13 or more
 * characters as views that keep the whole parent string alive; a cached key or label value must not pin a
 * scrape of hundreds of kilobytes. Shorter strings are already copies.
 */
export function detach(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}
