// The router's own list of its workers (its health, circuit breaker and load per worker) is in a review as it
// was live: at every scrape of a recorded one-host session, the review's dashboard at that moment lists the same
// workers, with the same health, as the live store had after that scrape — across a decode outage, which the
// router's gauges show as the decode worker going unhealthy and back. The review cache keeps the same list.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DemoSimulation } from '../../src/main/demo';
import { renderRouterMetrics } from '../../src/main/demo/router-metrics';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { RecordingWriter, readRecording } from '../../src/main/core/recording';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { buildReviewData } from '../../src/main/core/review/review-data';
import { snapshotAt } from '../../src/main/core/review/state-at';
import { ReviewCache } from '../../src/main/core/review/review-cache';
import type { RouterWorkerState } from '../../src/shared/contract';
import { header, manualClock, tempDir, oneHostByRole } from '../recording/helpers';

const START = Date.UTC(2026, 0, 5, 8, 0, 0);
const live = new Map<number, RouterWorkerState[] | undefined>();
let dir: { dir: string; cleanup: () => Promise<void> };
let data: ReturnType<typeof buildReviewData>;

beforeAll(async () => {
  dir = await tempDir('pdc-review-router-workers-');
  const clock = manualClock(START);
  const sim = new DemoSimulation({ clock, historyMs: 10 * 60_000 });
  const path = join(dir.dir, 's.pdrec.jsonl.gz');
  const w = await RecordingWriter.open(path, header({ deployment: oneHostByRole() }), { clock });
  const store = new SignalsStore();
  store.open('d', ['router']);
  for (let i = 0; i < 120; i++) {
    if (i === 30) sim.stopUnit('decode');
    if (i === 70) sim.startUnit('decode');
    clock.set(START + i * 5000);
    const r = sim.units.router.router;
    if (!r) continue;
    const exp = parseExposition(renderRouterMetrics(r, sim.routerEra), 'prometheus');
    w.appendScrape(clock.now(), 'router', exp);
    store.ingest('d', clock.now(), 'router', exp, 'router');
    live.set(clock.now(), store.routerWorkers('d'));
  }
  await w.close();
  data = buildReviewData(await readRecording(path));
}, 60_000);

afterAll(async () => {
  await dir?.cleanup();
});

const listed = (ws: RouterWorkerState[] | undefined): string[] =>
  (ws ?? []).map((w) => `${w.url} ${w.role ?? '?'} healthy=${w.healthy} cb=${w.cbState ?? '-'}`);

it("a review's dashboard lists the router's workers as live did after each scrape", () => {
  const mismatches: string[] = [];
  let unhealthy = 0;
  for (const [ts, want] of live) {
    const got = snapshotAt(data, [], 'd', ts).routerWorkers;
    if (listed(got).join('; ') !== listed(want).join('; ') && mismatches.length < 5)
      mismatches.push(`${new Date(ts).toISOString()}: live ${listed(want)} / review ${listed(got)}`);
    if (want?.some((x) => x.healthy === false)) unhealthy++;
  }
  expect(mismatches).toEqual([]);
  // Something to compare: two workers listed, and the outage seen as an unhealthy decode worker.
  expect(listed([...live.values()].at(-1))).toHaveLength(2);
  expect(unhealthy).toBeGreaterThan(3);
  // Before the first scrape there is no list yet.
  expect(snapshotAt(data, [], 'd', START - 1000).routerWorkers).toBeUndefined();
});

it('a review opened from the review cache lists them too (the cache keeps the router timeline)', async () => {
  const path = join(dir.dir, 's.pdrec.jsonl.gz');
  const st = await stat(path);
  const stamp = { path, size: st.size, mtimeMs: st.mtimeMs };
  const cache = new ReviewCache(join(dir.dir, 'cache'));
  await cache.store(stamp, data, []);
  const hit = await cache.load(stamp);
  expect(hit, 'the entry just stored loads').not.toBeNull();
  let compared = 0;
  for (const ts of live.keys()) {
    expect(listed(snapshotAt(hit!.data, [], 'd', ts).routerWorkers)).toEqual(
      listed(snapshotAt(data, [], 'd', ts).routerWorkers),
    );
    compared++;
  }
  expect(compared).toBeGreaterThan(100);
});
