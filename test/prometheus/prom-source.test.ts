// A Prometheus URL carrying a user and password (`http://ops:PW@host:9090`), given in the app (the API the panel
// calls) and to `pd-console history --prometheus`: the credentials are sent as basic auth to that URL's origin,
// the operator is told they were moved to the secret store, and the password appears in no message, status,
// label or CLI output. A URL that cannot be used is refused without echoing it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSecretKey } from '../../src/main/core/prometheus/http-client';
import { PromSourceError } from '../../src/main/core/prometheus/prom-source';
import { PrometheusService } from '../../src/main/core/services/prometheus';
import { validateArgs } from '../../src/shared/schemas';
import { cliCaptured } from '../cli/run-on-app';
import { openDemoCore, type DemoCore } from '../support/demo-core';
import { memorySecrets } from '../ssh/sshd-helpers';

const PW = 'Hunter2-secret-pw';
const basic = `Basic ${Buffer.from(`ops:${PW}`).toString('base64')}`;

let server: http.Server;
let port: number;
const seen: Array<{ path: string; authorization?: string }> = [];

beforeAll(async () => {
  // A Prometheus behind basic auth (web.config.yml basic_auth_users): 401 without the right credentials.
  server = http.createServer((req, res) => {
    req.resume();
    seen.push({
      path: req.url ?? '',
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    if (req.headers.authorization !== basic) {
      res.writeHead(401, { 'www-authenticate': 'Basic', 'content-type': 'text/plain' });
      return void res.end('Unauthorized\n');
    }
    const data = req.url?.startsWith('/api/v1/targets')
      ? { activeTargets: [] }
      : req.url?.startsWith('/api/v1/status/flags')
        ? { 'storage.tsdb.retention.time': '15d' }
        : { resultType: 'matrix', result: [] };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('a URL with a user and password, given in the app', () => {
  let dc: DemoCore;
  let svc: PrometheusService;
  const secrets = memorySecrets();

  beforeAll(async () => {
    dc = await openDemoCore({
      seed: 41,
      intervalMs: 1000,
      attach: (core) => {
        svc = new PrometheusService(core, { secrets });
      },
    });
  }, 60_000);
  afterAll(async () => {
    svc?.dispose();
    await dc?.stop();
  });

  it('uses them as basic auth for that origin, says so, and never shows the password', async () => {
    const from = seen.length;
    const args = validateArgs('setPrometheusSource', {
      deploymentId: dc.deploymentId,
      url: `http://ops:${PW}@127.0.0.1:${port}/`,
    });
    const status = await svc.handlers().setPrometheusSource(args);
    expect(JSON.stringify(status)).not.toContain(PW);
    expect(status.source).toMatchObject({ kind: 'url', url: `http://127.0.0.1:${port}`, auth: 'basic' });
    expect(status.source!.label).toBe(`http://127.0.0.1:${port}`);
    expect(status.source!.warnings).toEqual([
      `the user and password in the URL were moved to the secret store as basic auth for http://127.0.0.1:${port} only (user ops); the URL is used without them`,
    ]);
    expect(status.problem).toBeUndefined();
    expect(status.retentionS).toBe(15 * 86400);
    // Sent, with the credentials, to that origin.
    expect(seen.slice(from).every((s) => s.authorization === basic)).toBe(true);
    expect(seen.length).toBeGreaterThan(from);
    expect(secrets.data.get(promSecretKey(`http://127.0.0.1:${port}`, { kind: 'basic', user: 'ops' }))).toBe(
      PW,
    );
    // Asked again later (the panel's "Check again"), still nothing of it.
    expect(
      JSON.stringify(await svc.handlers().getPrometheusStatus({ deploymentId: dc.deploymentId })),
    ).not.toContain(PW);
  });

  it('refuses a URL whose credentials cannot be used, without echoing them', async () => {
    const refuse = async (a: Parameters<PrometheusService['setSource']>[0]): Promise<PromSourceError> => {
      const e = await svc
        .handlers()
        .setPrometheusSource(a)
        .catch((x: unknown) => x);
      expect(e).toBeInstanceOf(PromSourceError);
      expect(JSON.stringify({ m: (e as Error).message, h: (e as PromSourceError).hint })).not.toContain(PW);
      return e as PromSourceError;
    };
    const both = await refuse({
      deploymentId: dc.deploymentId,
      url: `http://ops:${PW}@127.0.0.1:${port}`,
      auth: { kind: 'bearer', token: 'tok' },
    });
    expect(both.message).toContain('carries a user and password, and credentials were given too');
    expect(both.message).toContain('http://…@127.0.0.1');
    const noPassword = await refuse({ deploymentId: dc.deploymentId, url: `http://ops@127.0.0.1:${port}` });
    expect(noPassword.hint).toContain('basic auth');
    const badCa = await refuse({
      deploymentId: dc.deploymentId,
      url: `https://ops:${PW}@127.0.0.1:${port}`,
      caFile: '/nonexistent/ca.pem',
    });
    expect(badCa.message).toBe('the CA file /nonexistent/ca.pem cannot be used: ENOENT');
    expect(badCa.hint).toContain('PEM file of the CA');
  });
});

describe('pd-console history --prometheus with a user and password in the URL', () => {
  it('sends them as basic auth to that URL, says so, and prints the password nowhere', async () => {
    const from = seen.length;
    const r = await cliCaptured([
      'history',
      'decode.kv_ratio',
      '--since',
      '2h',
      '--prometheus',
      `http://ops:${PW}@127.0.0.1:${port}`,
      '--direct',
    ]);
    expect(r.out + r.err).not.toContain(PW);
    expect(r.err).toContain(`moved to the secret store as basic auth for http://127.0.0.1:${port} only`);
    expect(r.out).not.toContain('refused');
    const asked = seen.slice(from);
    expect(asked.some((s) => s.path.startsWith('/api/v1/query_range'))).toBe(true);
    expect(asked.every((s) => s.authorization === basic)).toBe(true);
  }, 60_000);

  it('refuses a URL it cannot use without echoing its password', async () => {
    const r = await cliCaptured([
      'history',
      'decode.kv_ratio',
      '--prometheus',
      `ftp://ops:${PW}@127.0.0.1:${port}`,
    ]);
    expect(r.code).toBe(2);
    // The user-info is masked (by the CLI's output sink as `***`, as everywhere the CLI prints a URL).
    expect(r.err).toMatch(/--prometheus: the Prometheus URL "ftp:\/\/(\*\*\*|…)@127\.0\.0\.1/);
    expect(r.err).toContain('is not http or https');
    expect(r.err).not.toContain(PW);
  });
});
