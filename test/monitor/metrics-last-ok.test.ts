// A /metrics that fails or hangs says since when nothing was read from it. A hung endpoint read "no answer yet
// from …/metrics (waiting 1.8 s)" on decode's card for minutes: each probe times out and a new one starts, so the
// wait never grew past the probe's timeout and the card never said how old its figures were. The endpoint here
// is a real HTTP server that answers, then answers 500, then never answers; the connection is a test transport
// (the monitor's side of SshConnection) that answers systemctl at once.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import type { DeploymentConfig } from '../../src/shared/domain';
import { systemClock } from '../../src/main/core/clock';
import { DeploymentMonitor } from '../../src/main/core/monitor/deployment-monitor';
import type { SshConnection } from '../../src/main/core/ssh/connection';

const SHOW = [
  'Id=sglang-decode.service',
  'LoadState=loaded',
  'ActiveState=active',
  'SubState=running',
  'MainPID=42',
  'NRestarts=0',
  'Result=success',
  '',
].join('\n');

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

it('a failing or hung /metrics carries the time of the last scrape that answered', async () => {
  let mode: 'ok' | '500' | 'hang' = 'ok';
  server = http.createServer((req, res) => {
    if (req.url === '/health') return res.end('ok');
    if (mode === 'hang') return; // headers never come
    if (mode === '500') {
      res.statusCode = 500;
      return res.end('internal error');
    }
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end('# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs 3\n');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deployment: DeploymentConfig = {
    id: 'pair',
    name: 'pair',
    services: [
      {
        role: 'decode',
        hostId: 'gpu',
        unit: 'sglang-decode.service',
        apiUrl: base,
        metricsUrl: `${base}/metrics`,
      },
    ],
  };
  const agent = new http.Agent({ keepAlive: false });
  const conn = {
    label: 'gpu',
    isConnected: true,
    execInShell: async () => ({ exitCode: 0, stdout: SHOW, stderr: '' }),
    httpAgent: () => agent,
    markStale: () => undefined,
    markFresh: () => undefined,
  } as unknown as SshConnection;
  const t0 = 1_700_000_000_000;
  let now = t0;
  const clock = { ...systemClock, now: () => now };
  const monitor = new DeploymentMonitor('gpu', deployment, conn, { clock, intervalMs: 250 });
  try {
    const first = await monitor.pollOnce();
    expect(first.services[0].metrics).toMatchObject({ ok: true, scrapedAt: t0 });

    mode = '500';
    now += 1000;
    const failing = await monitor.pollOnce();
    expect(failing.services[0].metrics).toMatchObject({ ok: false, lastOkAt: t0 });
    expect(failing.services[0].metrics?.ok === false && failing.services[0].metrics.error).toMatch(/500/);

    mode = 'hang';
    now += 1000;
    const hung = await monitor.pollOnce();
    expect(hung.services[0].metrics).toMatchObject({ ok: false, lastOkAt: t0 });
    expect(hung.services[0].metrics?.ok === false && hung.services[0].metrics.error).toMatch(/no answer yet/);

    // Answering again: the figures are current, and no "last good scrape" is said.
    mode = 'ok';
    now += 6000;
    await expect
      .poll(async () => (await monitor.pollOnce()).services[0].metrics, { timeout: 10_000 })
      .toMatchObject({ ok: true });
    const back = await monitor.pollOnce();
    expect(back.services[0].metrics).not.toHaveProperty('lastOkAt');
  } finally {
    monitor.dispose();
    agent.destroy();
  }
});
