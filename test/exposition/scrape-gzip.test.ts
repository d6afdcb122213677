// A scrape asks for gzip (prometheus_client, which serves SGLang's /metrics, compresses for it) and reads a
// compressed answer exactly as a plain one; a damaged body, one too large once decompressed, and an encoding
// nobody asked for each fail with a message that names the endpoint. Real HTTP on a loopback server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrapeMetrics } from '../../src/main/core/probes/metrics';

const TEXT = [
  '# HELP sglang:num_running_reqs The number of running requests.',
  '# TYPE sglang:num_running_reqs gauge',
  'sglang:num_running_reqs{engine_type="decode",model_name="m",tp_rank="0"} 7.0',
  '# HELP sglang:token_usage The token usage.',
  '# TYPE sglang:token_usage gauge',
  'sglang:token_usage{engine_type="decode",model_name="m",tp_rank="0"} 0.42',
  '',
].join('\n');

const seen: Record<string, string | undefined> = {};

let server: http.Server;
let base: string;
const agent = new http.Agent();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '';
    seen[path] = req.headers['accept-encoding'];
    const headers = { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' };
    if (path === '/gzip' && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip' });
      return res.end(gzipSync(TEXT));
    }
    if (path === '/plain') return void res.writeHead(200, headers).end(TEXT);
    if (path === '/damaged') {
      // A proxy that cut the stream short: the gzip header and half the deflate data.
      const gz = gzipSync(TEXT);
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip' });
      return res.end(gz.subarray(0, gz.length >> 1));
    }
    if (path === '/bomb') {
      // 8 MB of one repeated line, 8 kB on the wire.
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip' });
      return res.end(gzipSync(Buffer.from('m 1\n'.repeat(2 * 1024 * 1024)), { level: 9 }));
    }
    if (path === '/brotli') {
      res.writeHead(200, { ...headers, 'content-encoding': 'br' });
      return res.end(Buffer.from([0x0b, 0x02, 0x80]));
    }
    res.writeHead(404).end();
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

describe('scrapeMetrics and Content-Encoding', () => {
  it('asks for gzip and reads a compressed answer exactly as the plain one', async () => {
    const gz = await scrapeMetrics(agent, target('/gzip'));
    const plain = await scrapeMetrics(agent, target('/plain'));
    expect(seen['/gzip']).toBe('gzip');
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
