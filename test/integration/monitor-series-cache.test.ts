// The monitor keeps one series cache per scrape target, over real SSH against the demo host: each holds
// exactly the labeled series its own endpoint serves (a cache shared by the endpoints would hold their sum),
// and disposing the monitor frees them.
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/main/core/clock';
import { DeploymentMonitor, type ScrapeEvent } from '../../src/main/core/monitor/deployment-monitor';
import { SshConnection } from '../../src/main/core/ssh/connection';
import { standardDeployment } from '../../src/main/compose';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import type { Exposition } from '../../src/main/core/probes/exposition/types';
import { demoConnectConfig } from '../support/demo-ssh';

let demo: DemoHost | undefined;
let conn: SshConnection | undefined;
afterEach(async () => {
  await conn?.stop();
  await demo?.stop();
});

/** Series with a label set: those the cache stores (a series without labels needs no label parsing). */
function labeledSeries(e: Exposition): Set<string> {
  const out = new Set<string>();
  for (const f of e.families)
    for (const s of f.samples)
      if (Object.keys(s.labels).length > 0) out.add(`${s.name}${JSON.stringify(s.labels)}`);
  return out;
}

describe('deployment monitor series caches', () => {
  it('holds each endpoint’s own series in its own cache and frees them on dispose', async () => {
    const d = (demo = await startDemoHost({ seed: 11, dpRanks: 2 }));
    conn = new SshConnection({
      label: 'demo',
      configure: async () => demoConnectConfig(d),
    });
    await conn.start();
    await conn.waitConnected(10_000);
    const deployment = { ...standardDeployment({ id: 'demo', label: 'demo', kind: 'demo' }), id: 'demo' };
    const monitor = new DeploymentMonitor('demo', deployment, conn, { clock: systemClock });
    const scrapes = new Map<string, Set<string>[]>();
    monitor.on('scrape', (e: ScrapeEvent) => {
      const list = scrapes.get(e.role) ?? [];
      list.push(labeledSeries(e.exposition));
      scrapes.set(e.role, list);
    });
    // stored on the second sighting, then held: a few polls settle every endpoint
    for (let i = 0; i < 4; i++) await monitor.pollOnce();
    const scraped = deployment.services.filter((s) => s.metricsUrl !== undefined);
    expect(scraped.length).toBe(3);
    const counts = scraped.map((s) => {
      const seen = scrapes.get(s.role) ?? [];
      expect(seen.length, `${s.role} scrapes`).toBe(4);
      const [previous, latest] = seen.slice(-2);
      const cached = monitor.seriesCached(s.metricsUrl!);
      // everything the endpoint served twice in a row is stored...
      expect(cached).toBeGreaterThanOrEqual([...latest].filter((k) => previous.has(k)).length);
      // ...and nothing it never served: not the other endpoints' series
      expect(cached).toBeLessThanOrEqual(new Set(seen.flatMap((x) => [...x])).size);
      return cached;
    });
    // the router serves other series than the servers: the caches are not one shared pool
    expect(new Set(counts).size).toBeGreaterThan(1);
    monitor.dispose();
    for (const s of scraped) expect(monitor.seriesCached(s.metricsUrl!)).toBe(0);
  });
});
