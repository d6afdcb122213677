// Matching a Prometheus's targets to a fleet's endpoints by host and port as each side dials them: a
// Prometheus on gpu-a scrapes 127.0.0.1:30200 where the router lists http://10.1.0.13:30200, and another
// host's worker is reached by its address; what is not scraped gets lines that point at the right address.
import { describe, expect, it } from 'vitest';
import { coverageOf } from '../../src/main/core/prometheus/coverage';
import type { ScrapeEndpoint } from '../../src/main/core/prometheus/export-config';
import type { PromTarget } from '../../src/main/core/prometheus/prom-api';

const ep = (
  id: string,
  role: ScrapeEndpoint['role'],
  hostId: string,
  port: number,
  workerHost?: string,
): ScrapeEndpoint => ({
  id,
  name: id,
  role,
  hostId,
  hostLabel: hostId,
  unit: `sglang-${role}.service`,
  metricsUrl: `http://127.0.0.1:${port}/metrics`,
  ...(workerHost ? { workerUrl: `http://${workerHost}:${port}` } : {}),
});

const target = (job: string, address: string, health: PromTarget['health'] = 'up'): PromTarget => ({
  job,
  instance: address,
  scrapeUrl: `http://${address}/metrics`,
  health,
  lastError: health === 'down' ? 'connection refused' : '',
  lastScrape: '2026-12-01T20:00:00Z',
  scrapeIntervalS: 15,
  labels: { job, instance: address },
});

const endpoints = [
  ep('decode-1', 'decode', 'gpu-a', 30200, '10.1.0.13'),
  ep('prefill-1', 'prefill', 'gpu-b', 30100, '10.1.0.14'),
  ep('decode-2', 'decode', 'gpu-c', 30200),
  ep('router', 'router', 'gpu-a', 29001),
];

describe('coverageOf', () => {
  it("matches its own host's 127.0.0.1 and other hosts' addresses; names what it misses, with the address to add", () => {
    const cov = coverageOf({
      endpoints,
      promLabel: 'prometheus.service on gpu-a',
      promHostId: 'gpu-a',
      hostAddresses: { 'gpu-c': ['10.1.0.15'] },
      targets: [
        target('sglang', '127.0.0.1:30200'),
        target('sglang', '10.1.0.14:30100', 'down'),
        // Another host's 127.0.0.1 is not gpu-a's: a target on gpu-a's loopback port 30100 is not prefill-1.
        target('other', '127.0.0.1:30100'),
      ],
    });
    const by = Object.fromEntries(cov.map((c) => [c.endpoint.id, c]));
    expect(by['decode-1']).toMatchObject({
      scraped: true,
      job: 'sglang',
      instance: '127.0.0.1:30200',
      intervalS: 15,
    });
    expect(by['prefill-1']).toMatchObject({ scraped: true, health: 'down' });
    expect(by['prefill-1']!.message).toContain('the last scrape failed: connection refused');
    expect(by['decode-2']!.scraped).toBe(false);
    expect(by['decode-2']!.message).toBe(
      'decode-2 http://127.0.0.1:30200/metrics is not scraped by prometheus.service on gpu-a — add:',
    );
    // gpu-c's worker is dialled from gpu-a at gpu-c's address, not at 127.0.0.1.
    expect(by['decode-2']!.addLines).toContain('10.1.0.15:30200');
    expect(by['decode-2']!.addLines).toContain('instance: gpu-c:30200');
    expect(by['router']!.scraped).toBe(false);
    expect(by['router']!.addLines).toContain('127.0.0.1:29001');
  });

  it('matches a target relabelled elsewhere by its instance label naming the host', () => {
    const t: PromTarget = {
      ...target('sglang-decode', '127.0.0.1:45000'),
      instance: 'gpu-c:30200',
      labels: { job: 'sglang-decode', instance: 'gpu-c:30200' },
    };
    const cov = coverageOf({ endpoints, targets: [t], promLabel: 'p', promHostId: 'gpu-a' });
    expect(cov.find((c) => c.endpoint.id === 'decode-2')!.scraped).toBe(true);
    expect(cov.filter((c) => c.scraped)).toHaveLength(1);
  });

  it('a remote Prometheus (URL given, host unknown) matches by address only', () => {
    const cov = coverageOf({
      endpoints,
      promLabel: 'http://prom.example:9090',
      targets: [target('sglang', '10.1.0.13:30200'), target('sglang', '127.0.0.1:29001')],
    });
    expect(cov.filter((c) => c.scraped).map((c) => c.endpoint.id)).toEqual(['decode-1']);
  });
});
