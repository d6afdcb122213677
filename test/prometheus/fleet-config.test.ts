// The prometheus.yml generated for the demo fleet (router and prefill on gpu-a, decode on gpu-b/gpu-c) is one a
// single Prometheus can scrape: every target at the address the router uses for its workers (the router itself at
// its host's address), no 127.0.0.1 of one host beside another host's address, headed by where to run it and the
// commands that install it. Proven with Debian's real Prometheus scraping the fleet's real listening sockets: every
// target up.
import http from 'node:http';
import yaml from 'js-yaml';
import { expect, it } from 'vitest';
import type { HostConfig } from '../../src/shared/domain';
import { manualClock } from '../demo/helpers';
import { fleetApps } from '../support/fleet-app';
import { prometheusUnavailableReason, startPrometheus } from '../support/prometheus-server';

const openFleetApp = fleetApps('prom-fleet-config');
const gpuA: HostConfig = { id: 'gpu-a', label: 'gpu-a', kind: 'ssh', alias: 'gpu-a' };

interface Config {
  global: Record<string, string>;
  scrape_configs: Array<{
    job_name: string;
    static_configs: Array<{ targets: string[]; labels: Record<string, string> }>;
  }>;
}

const getJson = (url: string): Promise<unknown> =>
  new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(JSON.parse(body)));
      })
      .on('error', reject);
  });

it('targets the addresses the router uses, says where to run it and how to install it; one Prometheus scrapes all', async () => {
  const { app, fleet } = await openFleetApp({
    fleet: { clock: manualClock(), seed: 3, historyMs: 10 * 60_000, listenHttp: true },
    app: { intervalMs: 300, record: false },
  });
  expect(fleet.fallback, 'the fleet has its own addresses (127.0.0.2–.4) on this machine').toBeNull();
  const s = await app.handlers.connectHost({ host: gpuA });
  const file = await app.handlers.exportPrometheusConfig({ deploymentId: s.deployment.id });
  const doc = yaml.load(file.text) as Config;
  const targets = new Map(
    doc.scrape_configs.flatMap((j) => j.static_configs.map((c) => [c.labels.worker, c.targets[0]] as const)),
  );
  const addr = (h: 'gpu-a' | 'gpu-b') => fleet.host(h).address;
  // Each worker where the router dials it; the router at gpu-a's own address — nothing on one host's 127.0.0.1.
  expect(Object.fromEntries(targets)).toEqual({
    router: `${addr('gpu-a')}:29001`,
    'prefill-0': `${addr('gpu-a')}:30100`,
    'prefill-1': `${addr('gpu-a')}:30101`,
    'decode-0': `${addr('gpu-b')}:30200`,
    'decode-1': `${addr('gpu-b')}:30201`,
    'decode-2': `${addr('gpu-b')}:30202`,
  });
  for (const w of fleet.groundTruth().workers) expect([...targets.values()]).toContain(new URL(w.url).host);
  expect(file.text).toMatch(/^# Where to run it: on gpu-a \(the router's host/m);
  expect(file.text).toContain(`#   promtool check config ${file.fileName}`);
  expect(file.text).toContain(`#   sudo install -m 0644 ${file.fileName} /etc/prometheus/prometheus.yml`);
  expect(file.text).toContain('#   sudo systemctl reload prometheus');
  expect(file.notes?.[0]).toMatch(/^Where to run it: on gpu-a/);

  const unavailable = prometheusUnavailableReason();
  if (unavailable) {
    console.warn(`skipped the real Prometheus part: ${unavailable}`);
    return;
  }
  // The simulated ports listen on real ports of each host's address: the same config with those ports (and a 1 s
  // interval) is what a Prometheus on the fleet's network would run. A target no host listens at stays down.
  const real = (target: string): string => {
    const [a, p] = [
      target.slice(0, target.lastIndexOf(':')),
      Number(target.slice(target.lastIndexOf(':') + 1)),
    ];
    const h = fleet.hosts.find((x) => x.address === a);
    return h?.httpPorts[p] ? `${a}:${h.httpPorts[p]}` : target;
  };
  const runnable: Config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    scrape_configs: doc.scrape_configs.map((j) => ({
      ...j,
      static_configs: j.static_configs.map((c) => ({ ...c, targets: c.targets.map(real) })),
    })),
  };
  const prom = await startPrometheus({ configYaml: yaml.dump(runnable) });
  try {
    type Targets = { data: { activeTargets: Array<{ labels: { worker: string }; health: string }> } };
    await expect
      .poll(
        async () => {
          const t = (await getJson(`${prom.url}/api/v1/targets`)) as Targets;
          return Object.fromEntries(t.data.activeTargets.map((x) => [x.labels.worker, x.health]));
        },
        { timeout: 30_000, interval: 500 },
      )
      .toEqual({
        router: 'up',
        'prefill-0': 'up',
        'prefill-1': 'up',
        'decode-0': 'up',
        'decode-1': 'up',
        'decode-2': 'up',
      });
  } finally {
    await prom.stop();
  }
}, 120_000);
