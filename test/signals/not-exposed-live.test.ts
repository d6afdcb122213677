// The live store's "not exposed" list follows the families of the rate window: a family that leaves the window
// is listed, one that comes back is not. The store only re-reads the window's family names when its series come
// or go (LiveColumns.seriesGeneration), so each step here is one where they must be re-read.
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { LiveColumns } from '../../src/main/core/signals/live-columns';
import { isSignalInput } from '../../src/main/core/signals/evaluate';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { SGLANG } from '../../src/shared/signals/metric-names';

const START = Date.UTC(2026, 0, 5, 8);
const WINDOW_MS = 10_000;

function scrape(withQueue: boolean) {
  return parseExposition(
    [
      `# TYPE ${SGLANG.runningReqs} gauge`,
      `${SGLANG.runningReqs}{tp_rank="0"} 3`,
      ...(withQueue ? [`# TYPE ${SGLANG.queueReqs} gauge`, `${SGLANG.queueReqs}{tp_rank="0"} 1`] : []),
      '',
    ].join('\n'),
    'prometheus',
  );
}

describe('not exposed, live', () => {
  it('lists a family once it has left the window and drops it when it is back', () => {
    const store = new SignalsStore({ rateWindowMs: WINDOW_MS });
    store.open('d', ['decode']);
    const listed = (): boolean => 'decode.queued' in store.notExposed('d');
    let t = START;
    const run = (n: number, withQueue: boolean): void => {
      for (let i = 0; i < n; i++) store.ingest('d', (t += 1000), 'decode', scrape(withQueue));
    };
    run(5, true);
    expect(listed()).toBe(false);
    // Still in the window for a while after its last scrape, then gone from it.
    run(5, false);
    expect(listed()).toBe(false);
    run(10, false);
    expect(listed()).toBe(true);
    run(3, false);
    expect(listed()).toBe(true);
    run(1, true);
    expect(listed()).toBe(false);
  });

  it('counts a generation when a series comes or leaves the window, not on every scrape', () => {
    const live = new LiveColumns({ keepMs: WINDOW_MS, track: isSignalInput });
    let t = START;
    live.append((t += 1000), scrape(true));
    const g = live.seriesGeneration;
    for (let i = 0; i < 5; i++) live.append((t += 1000), scrape(true));
    expect(live.seriesGeneration).toBe(g);
    for (let i = 0; i < 15; i++) live.append((t += 1000), scrape(false));
    expect(live.seriesGeneration).toBeGreaterThan(g);
  });
});
