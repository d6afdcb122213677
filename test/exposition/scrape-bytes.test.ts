// The scrape path hands the parser the response bytes (http-agent → probes/metrics), so invalid UTF-8 from an
// endpoint is reported instead of being decoded to U+FFFD first. Real HTTP on a loopback server.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrapeMetrics } from '../../src/main/core/probes/metrics';

const BODIES: Record<string, Buffer> = {
  '/invalid': Buffer.concat([
    Buffer.from('# TYPE m gauge\nm{path="'),
    Buffer.from([0xc0, 0xaf]),
    Buffer.from('"} 1\nm{path="/"} 2\n'),
  ]),
  '/valid': Buffer.from('# TYPE m gauge\nm{path="größe"} 1\n', 'utf8'),
  // Served as text/plain: only the body shows it is a page. JS's \s takes the BOM and U+00A0 before the '<'.
  '/page-after-spaces': Buffer.from('\n \t<!DOCTYPE html><title>Grafana</title>', 'utf8'),
  '/page-after-bom': Buffer.from('\ufeff\u00a0<html><title>Login</title></html>', 'utf8'),
};

let server: http.Server;
let base: string;
const agent = new http.Agent();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(BODIES[req.url ?? '']);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  agent.destroy();
  await new Promise((done) => server.close(done));
});

const target = (path: string) => ({
  url: `${base}${path}`,
  what: 'prefill (sglang-prefill.service)',
  unit: 'sglang-prefill.service',
  kind: 'server' as const,
});

describe('scrapeMetrics', () => {
  it('reports invalid UTF-8 in a label value with its line and column', async () => {
    // before: the overlong "/" became U+FFFD and the scrape succeeded
    const r = await scrapeMetrics(agent, target('/invalid'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(
      /is not valid prometheus exposition \(prometheus exposition, line 2, column 9: invalid UTF-8: bytes 0xc0 0xaf are an overlong encoding/,
    );
  });

  it('tells an HTML page from metrics by its first bytes, past ASCII and Unicode spaces', async () => {
    for (const [path, title] of [
      ['/page-after-spaces', 'Grafana'],
      ['/page-after-bom', 'Login'],
    ]) {
      const r = await scrapeMetrics(agent, target(path));
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.error).toContain(`returned an HTML page ("${title}") instead of Prometheus metrics`);
    }
  });

  it('reads valid UTF-8 and counts the size in bytes', async () => {
    const r = await scrapeMetrics(agent, target('/valid'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.exposition.families[0].samples[0].labels).toEqual({ path: 'größe' });
    expect(r.bytes).toBe(BODIES['/valid'].length);
  });
});
