// A second open of a recording whose review is cached: the first screen comes from the file's overview, as on
// the first open (serving it from the cache entry's full-resolution columns made the second open slower than
// the first), and the full detail from the cache entry, never from a second read of the recording.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadReview } from '../../src/main/core/review/load-review';
import { ReviewCache } from '../../src/main/core/review/review-cache';
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

describe('a cached recording opens from its overview', () => {
  it('shows the overview first and takes the full detail from the cache entry', async () => {
    const cache = new ReviewCache(join(dir, 'cache-a'));
    const first = await loadReview(session.path, { cache, fullDelayMs: 0, cacheDelayMs: 0 });
    expect(first.loadedFrom).toBe('overview');
    await first.full;
    await first.cached;
    expect(first.detail).toBe('full');
    const fullRows = rows(first.data);
    // A full read of the recording would wait a minute: the detail below can only come from the cache.
    const second = await loadReview(session.path, { cache, cacheSwapDelayMs: 0, fullDelayMs: 60_000 });
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
    const cache = new ReviewCache(cacheDir);
    const first = await loadReview(session.path, { cache, fullDelayMs: 0, cacheDelayMs: 0 });
    await first.full;
    await first.cached;
    const entry = (await readdir(cacheDir)).find((n) => n.endsWith('.rvc'))!;
    await writeFile(join(cacheDir, entry), 'PDRVC001\xff\xff\xff\x7fnot json');
    const problems: string[] = [];
    const second = await loadReview(session.path, {
      cache,
      cacheSwapDelayMs: 0,
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
