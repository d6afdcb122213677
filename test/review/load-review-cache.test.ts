// A second open of a recording whose review is cached: the first screen comes from the file's overview, as on
// the first open (serving it from the cache entry's full-resolution columns made the second open slower than
// the first), and the full detail from the cache entry, never from a second read of the recording.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadReview } from '../../src/main/core/review/load-review';
import { OLD_FORMAT_NOTE } from '../../src/main/core/recording/format';
import { ReviewCache } from '../../src/main/core/review/review-cache';
import { RecordedDeployment } from '../../src/main/core/deployment/recorded-deployment';
import type { ReviewData } from '../../src/main/core/review/review-data';
import { writeSession, type WrittenSession } from './helpers';

let dir: string;
let session: WrittenSession;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdc-load-review-cache-'));
  // Long enough for overview members to cover most of it (one is written every few minutes).
  session = await writeSession(join(dir, 'recordings'), 40, { seed: 7 });
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const rows = (d: ReviewData): number => {
  let n = 0;
  for (const g of d.table.groups.values()) n += g.t.length;
  return n;
};

const firstScreen = (d: ReviewData) =>
  d.table.series(
    { keys: ['decode.kv_ratio', 'prefill.kv_ratio'], maxPoints: 400 },
    d.notExposed,
    () => undefined,
  );

/** A cache whose entry for the session was written by a first open (also returned) and then damaged past reading. */
async function unreadableEntry(cacheDir: string) {
  const cache = new ReviewCache(cacheDir);
  const first = await loadReview(session.path, { cache, fullDelayMs: 0, cacheDelayMs: 0 });
  await first.full;
  await first.cached;
  const entry = (await readdir(cacheDir)).find((n) => n.endsWith('.rvc'))!;
  await writeFile(join(cacheDir, entry), 'PDRVC001\xff\xff\xff\x7fnot json');
  return { cache, first };
}

describe('a cached recording opens from its overview', () => {
  it('shows the overview first and takes the full detail from the cache entry', async () => {
    const cache = new ReviewCache(join(dir, 'cache-a'));
    const first = await loadReview(session.path, { cache, fullDelayMs: 0, cacheDelayMs: 0 });
    expect(first.loadedFrom).toBe('overview');
    await first.full;
    await first.cached;
    expect(first.detail).toBe('full');
    const fullRows = rows(first.data);
    const second = await loadReview(session.path, { cache, fullDelayMs: 0 });
    expect(second.loadedFrom).toBe('cache');
    expect(second.detail).toBe('overview');
    expect(rows(second.data)).toBeLessThan(fullRows / 5);
    await second.full;
    expect(second.detail).toBe('full');
    expect(second.loadedFrom).toBe('cache');
    expect(rows(second.data)).toBe(fullRows);
    expect(firstScreen(second.data)).toEqual(firstScreen(first.data));
    expect(second.data.events).toEqual(first.data.events);
    expect((await second.journal).length).toBe((await first.journal).length);
    expect((await second.journal).length).toBeGreaterThan(0);
  });

  it('reads the recording for the full detail when the cache entry is unreadable, and says so', async () => {
    const cacheDir = join(dir, 'cache-b');
    const { cache, first } = await unreadableEntry(cacheDir);
    const problems: string[] = [];
    const second = await loadReview(session.path, {
      cache,
      fullDelayMs: 0,
      onCacheError: (e) => problems.push(e.message),
    });
    expect(second.detail).toBe('overview');
    await second.full;
    expect(second.detail).toBe('full');
    expect(second.loadedFrom).toBe('overview');
    expect(rows(second.data)).toBe(rows(first.data));
    expect(problems.join('\n')).toMatch(/review cache unreadable for .*recordings/);
  });
});

describe('the full detail after an open from the overview', () => {
  it('is read at once when the overview cannot answer (a zoom), not after the first-screen delay', async () => {
    // Without a cache: a minute's delay stands for "the first screen is still being drawn".
    const fresh = await loadReview(session.path, { fullDelayMs: 60_000 });
    expect(fresh.detail).toBe('overview');
    fresh.needFull();
    await fresh.full;
    expect(fresh.detail).toBe('full');
    // From the cache entry, likewise.
    const cache = new ReviewCache(join(dir, 'cache-c'));
    const first = await loadReview(session.path, { cache, fullDelayMs: 0, cacheDelayMs: 0 });
    await first.cached;
    const second = await loadReview(session.path, { cache, fullDelayMs: 60_000 });
    expect(second.loadedFrom).toBe('cache');
    expect(second.detail).toBe('overview');
    second.needFull();
    await second.full;
    expect(second.detail).toBe('full');
    expect(rows(second.data)).toBe(rows(first.data));
  });

  it('starts once the first screen has been served and drawn, not after the fallback delay', async () => {
    // A minute's fallback stands for "nobody asked for the first screen"; drawMs 0 for "the page drew it".
    const fresh = await loadReview(session.path, { fullDelayMs: 60_000, drawMs: 0 });
    expect(fresh.loadedFrom).toBe('overview');
    expect(fresh.detail).toBe('overview');
    fresh.firstScreenServed();
    await fresh.full;
    expect(fresh.detail).toBe('full');
    expect(fresh.loadedFrom).toBe('overview');
  });

  it("starts when the review's first history has been answered", async () => {
    const loaded = await loadReview(session.path, { fullDelayMs: 60_000, drawMs: 0 });
    const recorded = new RecordedDeployment({
      id: 'rec:first-screen',
      name: 'first screen',
      loaded,
      path: session.path,
      cursor: () => loaded.data.lastScrapeTs,
      events: () => loaded.data.events,
    });
    // The overview's charts: the whole session, at points the overview has (40 min: 80 rows).
    const answer = await recorded.readings.series({
      deploymentId: recorded.id,
      keys: ['decode.kv_ratio'],
      fromMs: loaded.data.firstTs,
      toMs: loaded.data.lastTs + 1,
      maxPoints: 100,
    });
    expect(answer.series[0].t.length).toBeGreaterThan(0);
    expect(loaded.detail).toBe('overview');
    await loaded.full;
    expect(loaded.detail).toBe('full');
  });

  it('answers the journal as soon as the file has been read, before the evaluation that follows', async () => {
    const loaded = await loadReview(session.path, { fullDelayMs: 0 });
    const journal = await loaded.journal;
    expect(journal.length).toBeGreaterThan(0);
    expect(loaded.detail).toBe('overview');
    await loaded.full;
    expect(loaded.detail).toBe('full');
  });

  it('reads the file at once after an unusable cache entry, without waiting for the first screen again', async () => {
    const cacheDir = join(dir, 'cache-f');
    const { cache, first } = await unreadableEntry(cacheDir);
    // The entry is tried once the first screen has been drawn; the read after it must not wait a minute more.
    const second = await loadReview(session.path, {
      cache,
      fullDelayMs: 60_000,
      drawMs: 0,
      onCacheError: () => undefined,
    });
    expect(second.loadedFrom).toBe('cache');
    second.firstScreenServed();
    await second.full;
    expect(second.detail).toBe('full');
    expect(second.loadedFrom).toBe('overview');
    expect(rows(second.data)).toBe(rows(first.data));
  });

  it("keeps this open's warnings when it replaces the overview, and does not cache them", async () => {
    const cache = new ReviewCache(join(dir, 'cache-d'));
    const sidecar =
      'recordings/x.sidecar.json is not a valid session sidecar; later renames and notes are not shown.';
    const first = await loadReview(session.path, { cache, fullDelayMs: 0, cacheDelayMs: 0 });
    first.keepWarning(sidecar);
    const overviewWarnings = [...first.data.warnings];
    expect(overviewWarnings).toContain(sidecar);
    await first.full;
    expect(first.detail).toBe('full');
    expect(first.data.warnings).toContain(sidecar);
    expect(first.data.warnings.filter((w) => w === sidecar)).toHaveLength(1);
    await first.cached;
    // The cached swap keeps it too; and the entry itself holds only what the file says.
    const second = await loadReview(session.path, { cache, fullDelayMs: 0 });
    expect(second.data.warnings).not.toContain(sidecar);
    second.keepWarning(sidecar);
    await second.full;
    expect(second.detail).toBe('full');
    expect(second.data.warnings).toEqual(first.data.warnings);
    const third = await loadReview(session.path, { cache, noOverview: true });
    expect(third.loadedFrom).toBe('cache');
    expect(third.data.warnings).not.toContain(sidecar);
  });
});

describe('a recording of format 1.1 (no overview)', () => {
  it('still opens, read whole, with the one-line note that re-saving makes it fast', async () => {
    const old = await writeSession(join(dir, 'recordings-11'), 3, { seed: 5, format: '1.1' });
    const l = await loadReview(old.path, { cache: new ReviewCache(join(dir, 'cache-e')), cacheDelayMs: 0 });
    expect(l.loadedFrom).toBe('recording');
    expect(l.detail).toBe('full');
    expect(l.data.warnings).toEqual([OLD_FORMAT_NOTE]);
    expect(OLD_FORMAT_NOTE).not.toMatch(/\n/);
    expect(rows(l.data)).toBeGreaterThan(100);
    expect(firstScreen(l.data).series.every((c) => c.t.length > 0)).toBe(true);
    await l.cached;
  });
});
