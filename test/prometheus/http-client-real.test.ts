// The typed client against Debian's real Prometheus: it scrapes itself every second, and the client reads
// its instant and range queries, its targets, its loaded config and its retention flag — the answers
// discovery and history are built on. Also the real engine's own refusals: a step too fine for the range,
// and a query that does not parse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PromHttpClient, PromRequestError } from '../../src/main/core/prometheus/http-client';
import {
  prometheusUnavailableReason,
  startPrometheus,
  type PrometheusServer,
} from '../support/prometheus-server';

const unavailable = prometheusUnavailableReason();
if (unavailable) console.warn(`SKIP test/prometheus/http-client-real: ${unavailable}`);

describe.skipIf(unavailable !== null)('PromHttpClient against the real Prometheus', () => {
  let prom: PrometheusServer;
  let client: PromHttpClient;

  beforeAll(async () => {
    prom = await startPrometheus({
      retention: '9d',
      configYaml: (port) =>
        [
          'global:',
          '  scrape_interval: 1s',
          'scrape_configs:',
          '  - job_name: self',
          '    static_configs:',
          `      - targets: ['127.0.0.1:${port}']`,
          '        labels: { worker: prom-itself }',
          '',
        ].join('\n'),
    });
    client = new PromHttpClient({ baseUrl: prom.url, label: 'test prometheus' });
    // The first scrape lands within a couple of intervals; under load allow much longer.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const t = await client.targets();
      if (t.some((x) => x.health === 'up')) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  }, 120_000);

  afterAll(async () => {
    client?.dispose();
    await prom?.stop();
  });

  it('lists its targets with job, instance, scrape URL, health and interval', async () => {
    const targets = await client.targets();
    expect(targets).toHaveLength(1);
    expect(targets[0]).toMatchObject({
      job: 'self',
      instance: `127.0.0.1:${prom.port}`,
      scrapeUrl: `http://127.0.0.1:${prom.port}/metrics`,
      health: 'up',
      scrapeIntervalS: 1,
      labels: { worker: 'prom-itself' },
    });
  });

  it('answers an instant query as one point per series', async () => {
    const r = await client.query('up{job="self"}');
    expect(r.series).toHaveLength(1);
    expect(r.series[0]!.metric).toMatchObject({ job: 'self', worker: 'prom-itself' });
    expect(r.series[0]!.values[0]![1]).toBe(1);
    expect(r.bytes).toBeGreaterThan(0);
    expect(r.warnings).toEqual([]);
  });

  it('answers a range query (sent as a POST form) with [seconds, number] points', async () => {
    const now = Math.floor(Date.now() / 1000);
    // A long expression is why the form is POSTed: 8 KB would overflow a GET request line on many proxies.
    const others = Array.from({ length: 800 }, (_, i) => `decode-${i}`).join('|');
    const long = `up{job=~"self|${others}"}`;
    // The end lies a little ahead: the one sample so far may be younger than the current whole second.
    const r = await client.queryRange(long, now - 30, now + 2, 1);
    expect(r.series).toHaveLength(1);
    const pts = r.series[0]!.values;
    expect(pts.length).toBeGreaterThan(0);
    for (const [t, v] of pts) {
      expect(t).toBeGreaterThanOrEqual(now - 30);
      expect(v).toBe(1);
    }
  });

  it('reads the loaded configuration and the retention flag', async () => {
    const yaml = await client.configYaml();
    expect(yaml).toContain('job_name: self');
    expect(await client.retentionS()).toBe(9 * 86400);
  });

  it('turns the engine refusing a too-fine step into "use a step ≥ …"', async () => {
    const now = Math.floor(Date.now() / 1000);
    const err = await client.queryRange('up', now - 7 * 86400, now, 15).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PromRequestError);
    const f = (err as PromRequestError).failure;
    expect(f.code).toBe('resolution-too-fine');
    expect(f.query).toBe('up');
    expect(f.message).toContain('exceeded maximum resolution of 11,000 points');
    expect(f.fix).toContain('step ≥ 55 s');
  });

  it('names a query that does not parse', async () => {
    const err = await client.query('rate(up[').catch((e: unknown) => e);
    expect((err as PromRequestError).failure).toMatchObject({ code: 'bad-query', query: 'rate(up[' });
    expect((err as PromRequestError).failure.message).toMatch(/parse error/);
  });

  it('says "unreachable" with the address when nothing listens there', async () => {
    const gone = new PromHttpClient({ baseUrl: 'http://127.0.0.1:1', label: 'nowhere' });
    const err = await gone.query('up').catch((e: unknown) => e);
    gone.dispose();
    expect((err as PromRequestError).failure.code).toBe('unreachable');
    expect((err as PromRequestError).failure.message).toContain('http://127.0.0.1:1/api/v1/query');
  });
});
