// Browser mode's guards, each refusal tested: token, Host (DNS rebinding), Origin (cross-site WebSocket
// hijacking), no CORS, no path traversal, and argument validation on the socket.
import http from 'node:http';
import { mkdtempSync, writeFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Core } from '../../src/main/core/core';
import { startWebServer, type WebServer } from '../../src/main/web/server';

let server: WebServer;
let core: Core;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-web-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>PD Console</title>');
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, '..', 'secret.txt'), 'do not serve');
  const exportsDir = mkdtempSync(join(tmpdir(), 'pdc-web-exports-'));
  writeFileSync(join(exportsDir, 's1-export-20261129T055202000Z.signals.csv'), 'time_utc,timestamp_ms\n');
  writeFileSync(join(exportsDir, '.hidden'), 'no');
  symlinkSync(join(dir, '..', 'secret.txt'), join(exportsDir, 'link.csv'));
  core = new Core({ shell: 'browser', version: 'test' });
  server = await startWebServer({
    handlers: core.handlers() as never,
    bus: core,
    rendererDir: dir,
    exportsDir,
  });
});
afterAll(async () => {
  await server.close();
});

function get(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path, headers }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function wsOpen(opts: {
  token?: string;
  origin?: string;
  host?: string;
}): Promise<{ ws?: WebSocket; status?: number }> {
  return new Promise((resolve) => {
    const q = opts.token === undefined ? '' : `?token=${opts.token}`;
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api${q}`, {
      origin: opts.origin,
      headers: opts.host ? { host: opts.host } : {},
    });
    ws.on('open', () => resolve({ ws }));
    ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode }));
    ws.on('error', () => resolve({ status: -1 }));
  });
}

const goodOrigin = (): string => `http://127.0.0.1:${server.port}`;

describe('browser mode server', () => {
  it('serves an export as a download, with the token, from the export folder only (no path, dot-file or link)', async () => {
    const name = 's1-export-20261129T055202000Z.signals.csv';
    expect((await get(`/exports/${name}`)).status).toBe(401);
    const ok = await get(`/exports/${name}?token=${server.token}`);
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('time_utc,timestamp_ms\n');
    expect(ok.headers['content-disposition']).toBe(`attachment; filename="${name}"`);
    expect(ok.headers['content-type']).toBe('text/csv; charset=utf-8');
    for (const bad of ['..%2Fsecret.txt', '.hidden', 'link.csv', 'missing.csv', '%2Fetc%2Fpasswd'])
      expect((await get(`/exports/${bad}?token=${server.token}`)).status, bad).toBe(404);
  });

  it('listens on loopback only', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
  });

  it('requires the per-run token for the page and sets a strict cookie + CSP, no CORS', async () => {
    expect((await get('/')).status).toBe(401);
    expect((await get('/?token=wrong')).status).toBe(401);
    const ok = await get(`/?token=${server.token}`);
    expect(ok.status).toBe(200);
    expect(ok.headers['set-cookie']?.[0]).toMatch(/HttpOnly; SameSite=Strict/);
    expect(ok.headers['content-security-policy']).toContain("script-src 'self'");
    expect(ok.headers['content-security-policy']).not.toContain('unsafe-eval');
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
    // Assets load with the cookie the page set.
    const cookie = ok.headers['set-cookie']![0].split(';')[0];
    expect((await get('/assets/app.js', { cookie })).status).toBe(200);
    expect((await get('/assets/app.js')).status).toBe(401);
  });

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const r = await get(`/?token=${server.token}`, { host: `evil.example:${server.port}` });
    expect(r.status).toBe(421);
  });

  it('does not serve files outside the renderer folder', async () => {
    const r = await get(`/..%2Fsecret.txt?token=${server.token}`);
    expect(r.status).toBe(404);
    expect(r.body).not.toContain('do not serve');
  });

  it('answers 400 with a plain message to a path with a malformed %-escape', async () => {
    for (const path of ['/%', '/%E0%A4%A', '/assets/%zz.js']) {
      const r = await get(`${path}?token=${server.token}`);
      expect(r.status, path).toBe(400);
      expect(r.headers['content-type']).toMatch(/^text\/plain/);
      expect(r.body).toContain('malformed %-escape');
    }
  });

  it('refuses WebSocket upgrades without the token, from another origin, or with a foreign Host', async () => {
    expect((await wsOpen({ origin: goodOrigin() })).status).toBe(401);
    expect((await wsOpen({ token: 'nope', origin: goodOrigin() })).status).toBe(401);
    expect((await wsOpen({ token: server.token, origin: 'http://evil.example' })).status).toBe(403);
    expect((await wsOpen({ token: server.token })).status).toBe(403);
    expect((await wsOpen({ token: server.token, origin: goodOrigin(), host: 'evil.example' })).status).toBe(
      421,
    );
  });

  it('carries requests over the socket and validates their arguments', async () => {
    const { ws } = await wsOpen({ token: server.token, origin: goodOrigin() });
    expect(ws).toBeDefined();
    const call = (id: number, method: string, args: unknown): Promise<unknown> =>
      new Promise((resolve) => {
        ws!.on('message', function on(data) {
          const f = JSON.parse(String(data));
          if (f.t === 'res' && f.id === id) {
            ws!.off('message', on);
            resolve(f.envelope);
          }
        });
        ws!.send(JSON.stringify({ t: 'req', id, method, args }));
      });
    expect(await call(1, 'getAppInfo', {})).toMatchObject({
      ok: true,
      result: { shell: 'browser', version: 'test' },
    });
    expect(await call(2, 'nope', {})).toMatchObject({ ok: false, error: { code: 'unknown-method' } });
    expect(await call(3, 'journalAround', { deploymentId: 'x', role: 'evil', ts: 0 })).toMatchObject({
      ok: false,
      error: { code: 'bad-arguments' },
    });
    expect(await call(4, 'listEvents', { deploymentId: 'x', extra: 1 })).toMatchObject({
      ok: false,
      error: { code: 'bad-arguments' },
    });
    expect(await call(5, 'closeDeployment', { deploymentId: 'missing' })).toMatchObject({ ok: true });
    expect(await call(6, 'listEvents', { deploymentId: 'missing' })).toMatchObject({
      ok: false,
      error: { code: 'unknown-deployment' },
    });
    ws!.close();
  });

  it('closes a socket that sends non-JSON frames', async () => {
    const { ws } = await wsOpen({ token: server.token, origin: goodOrigin() });
    const closed = new Promise<number>((resolve) => ws!.on('close', (code) => resolve(code)));
    ws!.send('not json');
    expect(await closed).toBe(1003);
  });
});
