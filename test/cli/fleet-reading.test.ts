// `status` on a fleet waits on the app's observations, not on the clock: it prints at the first observation in
// which every reachable service has answered — a router's answer is its scrape, it has no KV figure — and when
// its bound runs out first it names the services still missing something, and what.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { Observation, ServiceConfig, ServiceObservation, UnitState } from '@shared/domain';
import { awaitFleetReading, serverKey, type ObservedCore } from '../../src/main/cli/fleet-reading';

const services: ServiceConfig[] = [
  {
    role: 'router',
    id: 'router',
    hostId: 'gpu-a',
    unit: 'sglang-router.service',
    apiUrl: 'http://127.0.0.1:30001',
    metricsUrl: 'http://127.0.0.1:29001/metrics',
  },
  {
    role: 'decode',
    id: 'decode-0',
    hostId: 'gpu-b',
    unit: 'sglang-decode-0.service',
    apiUrl: 'http://127.0.0.3:30200',
    metricsUrl: 'http://127.0.0.3:30200/metrics',
  },
];

const running = (unit: string): UnitState => ({
  unit,
  loadState: 'loaded',
  activeState: 'active',
  subState: 'running',
  mainPid: 1,
  nRestarts: 0,
  activeEnterTimestamp: 0,
  result: 'success',
});
const health = { ok: true, status: 200, detail: '200 OK', checkedAt: 0 };
const scraped = { ok: true as const, scrapedAt: 0, durationMs: 1, families: 3, samples: 9 };

function observation(decode: Partial<ServiceObservation>): Observation {
  return {
    deploymentId: 'gpu-a',
    hostId: 'gpu-a',
    ts: 0,
    services: [
      {
        role: 'router',
        unit: services[0].unit,
        systemd: running(services[0].unit),
        health,
        metrics: scraped,
      },
      { role: 'decode', unit: services[1].unit, systemd: running(services[1].unit), ...decode },
    ],
  };
}

const kv = {
  usedTokens: 10,
  capacityTokens: 100,
  ratio: 0.1,
  source: 'kv_tokens',
} as ServiceObservation['kv'];

describe('awaitFleetReading', () => {
  it('answers at the first observation in which every service answered, a router by its scrape', async () => {
    const core = new EventEmitter();
    const reading = awaitFleetReading(core as unknown as ObservedCore, 'gpu-a', services, 60_000);
    core.emit('observation', { ...observation({ health, metrics: scraped, kv }), deploymentId: 'other' });
    core.emit('observation', observation({ health, metrics: scraped }));
    core.emit('observation', observation({ health, metrics: scraped, kv }));
    const r = await reading;
    expect(r.late).toEqual([]);
    expect(r.reading.servers.get(serverKey('gpu-b', services[1].apiUrl))?.kv).toEqual(kv);
    expect(core.listenerCount('observation')).toBe(0);
  });

  it('when the bound runs out, prints the newest and names what each late service lacks', async () => {
    const core = new EventEmitter();
    const reading = awaitFleetReading(core as unknown as ObservedCore, 'gpu-a', services, 200);
    core.emit('observation', observation({ metrics: scraped, kv }));
    const r = await reading;
    expect(r.late).toEqual(['decode-0 on gpu-b (health)']);
    expect(core.listenerCount('observation')).toBe(0);
  });

  it('with no observation at all, fails naming the deployment', async () => {
    const core = new EventEmitter();
    await expect(awaitFleetReading(core as unknown as ObservedCore, 'gpu-a', services, 100)).rejects.toThrow(
      "no observation of gpu-a within 0.1 s: the app's monitors sent nothing",
    );
  });
});
