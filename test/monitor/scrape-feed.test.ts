// The monitors' scrapes as a restart reads them: the latest per service, the next one to arrive, a bounded
// wait when none comes, and a closed deployment's waiters answered at once.
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { CoreHooks } from '../../src/main/core/core-hooks';
import { MonitorScrapes, scrapeKey } from '../../src/main/core/monitor/scrape-feed';
import type { Exposition } from '../../src/main/core/probes/exposition/types';

const exposition = (n: number): Exposition => ({ format: 'prometheus', families: [], sampleCount: n });

let feed: MonitorScrapes | undefined;
afterEach(() => feed?.dispose());

function setup(): { hooks: EventEmitter<CoreHooks>; feed: MonitorScrapes } {
  const hooks = new EventEmitter<CoreHooks>();
  feed = new MonitorScrapes(hooks);
  return { hooks, feed };
}

function scrape(hooks: EventEmitter<CoreHooks>, deploymentId: string, ts: number, id?: string): void {
  hooks.emit('scrape', {
    deploymentId,
    hostId: 'h',
    ts,
    role: 'decode',
    ...(id ? { id } : {}),
    exposition: exposition(ts),
  });
}

describe('monitor scrapes for restarts', () => {
  it('keys a service by its id, and a one-host service without one by its role', () => {
    expect(scrapeKey({ role: 'decode', id: 'decode-1' })).toBe('decode-1');
    expect(scrapeKey({ role: 'decode' })).toBe('decode');
  });

  it('keeps the latest scrape of each service of each deployment', () => {
    const { hooks, feed } = setup();
    scrape(hooks, 'a', 1, 'decode-0');
    scrape(hooks, 'a', 2, 'decode-1');
    scrape(hooks, 'a', 3, 'decode-0');
    scrape(hooks, 'b', 4);
    expect(feed.of('a').latest('decode-0')?.ts).toBe(3);
    expect(feed.of('a').latest('decode-1')?.ts).toBe(2);
    expect(feed.of('a').latest('decode')).toBeUndefined();
    expect(feed.of('b').latest('decode')?.exposition.sampleCount).toBe(4);
  });

  it('next resolves with the first scrape that arrives after the call, not the one before', async () => {
    const { hooks, feed } = setup();
    scrape(hooks, 'a', 1);
    const next = feed.of('a').next('decode');
    scrape(hooks, 'a', 2);
    scrape(hooks, 'a', 3);
    expect((await next)?.ts).toBe(2);
  });

  it('next answers undefined when no scrape comes within twice the cadence seen (bounded below by 1 s)', async () => {
    const { hooks, feed } = setup();
    scrape(hooks, 'a', 1);
    scrape(hooks, 'a', 2);
    const t0 = Date.now();
    expect(await feed.of('a').next('decode')).toBeUndefined();
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(990);
    expect(waited).toBeLessThan(5_000);
  });

  it('a closed deployment: its waiters learn at once that no scrape comes, and its scrapes are forgotten', async () => {
    const { hooks, feed } = setup();
    scrape(hooks, 'a', 1);
    const next = feed.of('a').next('decode');
    hooks.emit('closed', { deploymentId: 'a' });
    expect(await next).toBeUndefined();
    expect(feed.of('a').latest('decode')).toBeUndefined();
  });
});
