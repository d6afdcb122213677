// A fleet's hosts poll at their own moments; the deployment's observation merges their newest polls under the
// newest host's ts. Each worker's scrape was written at its own host's poll, so its systemd/health values must
// join that row — written at the merged ts instead, they opened a row of their own with no scrape value in it,
// and the dashboard read every worker's running, queued and rates (and the router's) as "—".
import { expect, it } from 'vitest';
import type { DeploymentConfig, Observation, ServiceObservation } from '../../src/shared/domain';
import { mergeFleetObservation } from '../../src/main/core/deployment/merge-observations';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { SignalsStore } from '../../src/main/core/signals/signals-store';

const DEPLOYMENT: DeploymentConfig = {
  id: 'fleet',
  name: 'fleet',
  services: [
    { role: 'router', id: 'router', hostId: 'gpu-a', unit: 'router.service', apiUrl: 'http://a:30001' },
    { role: 'decode', id: 'decode-0', hostId: 'gpu-a', unit: 'd0.service', apiUrl: 'http://a:30200' },
    { role: 'decode', id: 'decode-1', hostId: 'gpu-b', unit: 'd1.service', apiUrl: 'http://b:30200' },
  ],
};

const server = (running: number) =>
  parseExposition(
    `# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{engine_type="unified",tp_rank="0"} ${running}\n`,
    'prometheus',
  );

function seen(id: string, unit: string, role: 'decode' | 'router', ts: number): ServiceObservation {
  return {
    role,
    id,
    unit,
    systemd: {
      unit,
      description: '',
      loadState: 'loaded',
      activeState: 'active',
      subState: 'running',
      mainPid: 1,
      nRestarts: 0,
      result: 'success',
    },
    metrics: { ok: true, scrapedAt: ts, durationMs: 5, families: 1, samples: 1 },
  } as ServiceObservation;
}

it("keeps each worker's scraped values in its latest row when its host polled before the newest host", () => {
  const store = new SignalsStore();
  store.open('fleet', ['router', 'decode']);
  // gpu-a polls at 1,000, gpu-b at 1,400: the merged observation carries ts 1,400.
  store.ingest('fleet', 1_000, 'decode', server(7), 'decode-0');
  store.ingest('fleet', 1_400, 'decode', server(3), 'decode-1');
  const a: Observation = {
    deploymentId: 'fleet',
    hostId: 'gpu-a',
    ts: 1_000,
    services: [
      seen('router', 'router.service', 'router', 1_000),
      seen('decode-0', 'd0.service', 'decode', 1_000),
    ],
  };
  const b: Observation = {
    deploymentId: 'fleet',
    hostId: 'gpu-b',
    ts: 1_400,
    services: [seen('decode-1', 'd1.service', 'decode', 1_400)],
  };
  const merged = mergeFleetObservation({
    deployment: DEPLOYMENT,
    origin: 'gpu-a',
    ts: 1_400,
    latest: new Map([
      ['gpu-a', a],
      ['gpu-b', b],
    ]),
    unreachable: () => null,
  });
  expect(merged.services.map((s) => s.polledAt)).toEqual([1_000, 1_000, 1_400]);
  store.ingestObservation(merged);
  const latest = store.latest('fleet');
  expect(latest['decode.running@decode-0']).toBe(7);
  expect(latest['decode.running@decode-1']).toBe(3);
  expect(latest['decode.active@decode-0']).toBe(1);
  expect(latest['decode.active@decode-1']).toBe(1);
  // The role reads as one server: its running requests are its workers' sum.
  expect(latest['decode.running']).toBe(10);
  // One row per poll: the systemd values joined the scrape's row rather than opening one at 1,400.
  const series = store.getSeries({
    deploymentId: 'fleet',
    keys: ['decode.running@decode-0'],
    maxPoints: 100,
  });
  expect(series.series[0].t).toEqual([1_000]);
});
