// The scrape path hands the parser the response bytes (http-agent → probes/metrics), so invalid UTF-8 from an
// endpoint is reported instead of being decoded to U+FFFD first. A scrape asks for gzip (prometheus_client, which
// serves SGLang's /metrics, compresses for it) and reads a compressed answer exactly as a plain one; a damaged body,
// one too large once decompressed, and an encoding nobody asked for each fail with a message that names the
// endpoint. Real HTTP on a loopback server.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
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

const TEXT = [
  '# HELP sglang:num_running_reqs The number of running requests.',
  '# TYPE sglang:num_running_reqs gauge',
  'sglang:num_running_reqs{engine_type="decode",model_name="m",tp_rank="0"} 7.0',
  '# HELP sglang:token_usage The token usage.',
  '# TYPE sglang:token_usage gauge',
  'sglang:token_usage{engine_type="decode",model_name="m",tp_rank="0"} 0.42',
  '',
].join('\n');
const gzipped = gzipSync(TEXT);

// Answers sent with a Content-Encoding: [encoding, body]. /gzip only when the request asked for it.
const ENCODED: Record<string, [string, Buffer]> = {
  '/gzip': ['gzip', gzipped],
  // A proxy that cut the stream short: the gzip header and half the deflate data.
  '/damaged': ['gzip', gzipped.subarray(0, gzipped.length >> 1)],
  // 8 MB of one repeated line, 8 kB on the wire.
  '/bomb': ['gzip', gzipSync(Buffer.from('m 1\n'.repeat(2 * 1024 * 1024)), { level: 9 })],
  '/brotli': ['br', Buffer.from([0x0b, 0x02, 0x80])],
};
const acceptEncoding: Record<string, string | undefined> = {};

let server: http.Server;
let base: string;
const agent = new http.Agent();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '';
    acceptEncoding[path] = req.headers['accept-encoding'];
    const headers = { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' };
    const encoded = ENCODED[path];
    const asked = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    if (encoded && (path !== '/gzip' || asked)) {
      res.writeHead(200, { ...headers, 'content-encoding': encoded[0] });
      return res.end(encoded[1]);
    }
    res.writeHead(200, headers);
    res.end(path === '/plain' || path === '/gzip' ? TEXT : BODIES[path]);
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
  what: 'decode (sglang-decode.service)',
  unit: 'sglang-decode.service',
  kind: 'server' as const,
});

describe('scrapeMetrics reads bytes', () => {
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

describe('scrapeMetrics and Content-Encoding', () => {
  it('asks for gzip and reads a compressed answer exactly as the plain one', async () => {
    const gz = await scrapeMetrics(agent, target('/gzip'));
    const plain = await scrapeMetrics(agent, target('/plain'));
    expect(acceptEncoding['/gzip']).toBe('gzip');
    expect(gz.ok && plain.ok).toBe(true);
    if (!gz.ok || !plain.ok) return;
    expect(gz.exposition.families).toEqual(plain.exposition.families);
    // The size is the text's, not the wire's.
    expect(gz.bytes).toBe(Buffer.byteLength(TEXT));
  });

  it('names the endpoint when a gzip body is damaged', async () => {
    const r = await scrapeMetrics(agent, target('/damaged'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(
      `decode (sglang-decode.service): ${base}/damaged: the body says it is gzip-compressed`,
    );
    expect(r.error).toMatch(/does not decompress \(.+\); the server or a proxy in between sent it damaged/);
  });

  it('stops at the size cap counted after decompression, not on the wire', async () => {
    const r = await scrapeMetrics(agent, target('/bomb'), { maxBytes: 1024 * 1024 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(`${base}/bomb: response larger than 1 MB once decompressed; stopped reading`);
  });

  it('refuses an encoding it did not ask for, by name', async () => {
    const r = await scrapeMetrics(agent, target('/brotli'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toContain(
      `${base}/brotli: answered with Content-Encoding "br", which the console did not ask for and cannot read`,
    );
  });
});
