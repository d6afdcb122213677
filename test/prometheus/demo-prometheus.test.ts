// Finding the operator's Prometheus the way the app does on a GPU host: the demo host carries Debian's
// prometheus.service (`/usr/bin/prometheus $ARGS`, ARGS in /etc/default/prometheus), discovery reads it over
// real SSH, and the app asks the REAL Prometheus behind the unit's listen port through the demo's SSH tunnel
// which of the deployment's endpoints it scrapes. The config Prometheus runs is the one the app generates
// (promtool checks it); an endpoint left out gets the lines to add, and adding them makes it scraped.
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrometheusService } from '../../src/main/core/services/prometheus';
import { installDemoPrometheus } from '../../src/main/demo/prometheus-unit';
import type { PrometheusStatus } from '../../src/shared/api/prometheus';
import { openDemoCore, type DemoCore } from '../support/demo-core';
import {
  freePort,
  prometheusUnavailableReason,
  promtool,
  startPrometheus,
  withDemoPorts,
  type PrometheusServer,
} from '../support/prometheus-server';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { prometheusHistory } from '../../src/main/core/prometheus/history-provider';
import os from 'node:os';
import path from 'node:path';

const unavailable = prometheusUnavailableReason();
if (unavailable) console.warn(`SKIP test/prometheus/demo-prometheus: ${unavailable}`);

/** Scrape every second in tests: the generated 15 s would make each wait a quarter minute. */
const fast = (configYaml: string): string =>
  configYaml.replace(/scrape_interval: 15s/, 'scrape_interval: 1s');

async function until(
  what: string,
  read: () => Promise<PrometheusStatus>,
  ok: (s: PrometheusStatus) => boolean,
  timeoutMs = 90_000,
): Promise<PrometheusStatus> {
  const deadline = Date.now() + timeoutMs;
  let last: PrometheusStatus | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(
    `${what} within ${timeoutMs / 1000} s; last status: ${JSON.stringify(last?.endpoints, null, 2)}; problem: ${JSON.stringify(last?.problem)}`,
  );
}

describe.skipIf(unavailable !== null)('the demo host’s prometheus.service, through the SSH tunnel', () => {
  let dc: DemoCore;
  let svc: PrometheusService;
  let prom: PrometheusServer | undefined;
  let realPort: number;
  const start = async (configYaml: string): Promise<void> => {
    await prom?.stop();
    prom = await startPrometheus({
      configYaml: withDemoPorts(fast(configYaml), dc.demo.httpPorts),
      port: realPort,
      retention: '9d',
    });
  };

  beforeAll(async () => {
    realPort = await freePort();
    dc = await openDemoCore({
      seed: 14,
      intervalMs: 1000,
      demo: { listenHttp: true, prometheus: { listen: '127.0.0.1:9090', realPort, retention: '9d' } },
      attach: (core) => {
        svc = new PrometheusService(core);
      },
    });
  }, 60_000);

  afterAll(async () => {
    svc?.dispose();
    await prom?.stop();
    await dc?.stop();
  });

  it('finds prometheus.service from its ExecStart and /etc/default/prometheus, and says when it cannot be asked', async () => {
    const s = await svc.status(dc.deploymentId);
    expect(s.found).toEqual([
      expect.objectContaining({
        unit: 'prometheus.service',
        engine: 'prometheus',
        hostId: 'demo',
        listenAddress: '127.0.0.1:9090',
        url: 'http://127.0.0.1:9090',
        configFile: '/etc/prometheus/prometheus.yml',
        notes: [],
      }),
    ]);
    expect(s.source).toMatchObject({
      kind: 'unit',
      label: 'prometheus.service on demo GPU host (simulated)',
    });
    // Nothing listens behind the unit's port yet: the failure says so, and every endpoint is "unknown".
    expect(s.problem?.code).toBe('unreachable');
    expect(s.problem?.message).toContain('prometheus.service on demo GPU host (simulated)');
    expect(s.endpoints.every((e) => !e.scraped)).toBe(true);
    expect(s.endpoints[0]!.message).toContain('could not be asked');

    // With the config file on the host, what it lists is read over SSH instead, said as not live.
    const configYaml = svc.exportConfig(dc.deploymentId).text;
    installDemoPrometheus(dc.demo.sim, { listen: '127.0.0.1:9090', realPort, retention: '9d', configYaml });
    const f = await svc.status(dc.deploymentId);
    expect(f.problem?.code).toBe('unreachable');
    expect(f.endpoints.map((e) => [e.id, e.name, e.scraped, e.job])).toEqual([
      ['prefill-0', 'prefill', true, 'sglang-prefill'],
      ['decode-0', 'decode', true, 'sglang-decode'],
      ['router', 'router', true, 'sglang-router'],
    ]);
    expect(f.endpoints[1]!.message).toBe(
      'decode http://127.0.0.1:30200/metrics is in /etc/prometheus/prometheus.yml on demo GPU host (simulated) as job="sglang-decode" instance="demo:30200"; whether its scrapes succeed is not known while prometheus.service on demo GPU host (simulated) cannot be asked',
    );
  });

  it('the generated config passes promtool, and the real Prometheus running it scrapes every endpoint', async () => {
    const exported = svc.exportConfig(dc.deploymentId);
    expect(exported.fileName).toBe('prometheus-demo.yml');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pd-promcfg-'));
    try {
      await writeFile(path.join(dir, 'prometheus.yml'), exported.text);
      const check = await promtool(['check', 'config', path.join(dir, 'prometheus.yml')]);
      expect(check.stdout + check.stderr).toContain('SUCCESS');
      expect(check.code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const jobs = (yaml.load(exported.text) as { scrape_configs: Array<{ job_name: string }> }).scrape_configs;
    expect(jobs.map((j) => j.job_name)).toEqual(['sglang-prefill', 'sglang-decode', 'sglang-router']);

    await start(exported.text);
    const s = await until(
      'every endpoint scraped and up',
      () => svc.status(dc.deploymentId),
      (x) => x.endpoints.length === 3 && x.endpoints.every((e) => e.scraped && e.health === 'up'),
    );
    expect(s.problem).toBeUndefined();
    expect(s.retentionS).toBe(9 * 86400);
    const decode = s.endpoints.find((e) => e.role === 'decode')!;
    expect(decode).toMatchObject({
      metricsUrl: 'http://127.0.0.1:30200/metrics',
      job: 'sglang-decode',
      instance: 'demo:30200',
      intervalS: 1,
    });
    expect(decode.message).toBe(
      'decode http://127.0.0.1:30200/metrics is scraped by prometheus.service on demo GPU host (simulated) as job="sglang-decode" instance="demo:30200" every 1 s',
    );
    // Prometheus holds the demo's real series under those labels.
    const client = await svc.clientFor(dc.deploymentId);
    const up = await client!.query('up{job=~"sglang-.*"}');
    expect(up.series.map((x) => x.metric.worker).sort()).toEqual(['decode-0', 'prefill-0', 'router']);
    // History's view of the same answer: each role's matchers select exactly that role's series there.
    const target = await prometheusHistory(svc, () => Date.now())(dc.deploymentId);
    expect(target?.scrapeIntervalS).toBe(1);
    for (const role of ['prefill', 'decode', 'router'] as const) {
      const selector = target!.selector(role);
      expect(selector, role).not.toBeNull();
      const mine = await client!.query(`up{${selector}}`);
      expect(
        mine.series.map((x) => [x.metric.worker, x.metric.job]),
        role,
      ).toEqual([[role === 'router' ? role : `${role}-0`, `sglang-${role}`]]);
    }
  }, 180_000);

  it('an endpoint left out is named with the lines to add, and adding them makes it scraped', async () => {
    const full = yaml.load(svc.exportConfig(dc.deploymentId).text) as {
      global: unknown;
      scrape_configs: Array<{ job_name: string }>;
    };
    const without = {
      ...full,
      scrape_configs: full.scrape_configs.filter((j) => j.job_name !== 'sglang-decode'),
    };
    const withoutText = yaml.dump(without);
    await start(withoutText);
    const s = await until(
      'prefill and router scraped, decode not',
      () => svc.status(dc.deploymentId),
      (x) => x.endpoints.filter((e) => e.scraped && e.health === 'up').length === 2,
    );
    const decode = s.endpoints.find((e) => e.role === 'decode')!;
    expect(decode.scraped).toBe(false);
    expect(decode.message).toBe(
      'decode http://127.0.0.1:30200/metrics is not scraped by prometheus.service on demo GPU host (simulated) — add:',
    );
    expect(decode.addLines).toContain('- job_name: sglang-decode');
    expect(decode.addLines).toContain('127.0.0.1:30200');

    // The operator pastes the lines under scrape_configs: and reloads.
    const pasted = `${withoutText.trimEnd()}\n${decode.addLines!}`;
    await start(pasted);
    await until(
      'decode scraped after adding the suggested lines',
      () => svc.status(dc.deploymentId),
      (x) => x.endpoints.every((e) => e.scraped && e.health === 'up'),
    );
  }, 240_000);
});
