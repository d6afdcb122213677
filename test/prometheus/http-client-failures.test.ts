// Each way a Prometheus request fails, answered by a real HTTP server the way Prometheus (or a proxy in front
// of it) really answers — the error JSON of web/api/v1/api.go, a proxy's HTML 502, basic auth's bare 401 — and
// the operator-facing failure the client makes of it: which query, what happened, what to change.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PromHttpClient,
  PromRequestError,
  promSecretKey,
  type PromHttpClientOptions,
} from '../../src/main/core/prometheus/http-client';
import type { PromFailure } from '../../src/main/core/prometheus/prom-api';
import type { SecretStore } from '../../src/main/core/ssh/prompts';

interface Answer {
  status: number;
  body: string;
  type?: string;
  /** Never answer (for the timeout case). */
  hang?: boolean;
}

let answer: Answer = { status: 200, body: '' };
let lastRequest: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string } | null =
  null;
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      lastRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      if (answer.hang) return;
      res.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const apiError = (status: number, errorType: string, error: string): Answer => ({
  status,
  body: JSON.stringify({ status: 'error', errorType, error }),
});

async function failure(
  a: Answer,
  call: (c: PromHttpClient) => Promise<unknown>,
  opts: Partial<PromHttpClientOptions> = {},
): Promise<PromFailure> {
  answer = a;
  const client = new PromHttpClient({ baseUrl: base, label: 'prometheus.service on gpu-a', ...opts });
  try {
    await call(client);
  } catch (e) {
    expect(e).toBeInstanceOf(PromRequestError);
    return (e as PromRequestError).failure;
  } finally {
    client.dispose();
  }
  throw new Error('the call did not fail');
}

const SEVEN_DAYS = 7 * 86400;
const rangeOf = (expr: string) => (c: PromHttpClient) =>
  c.queryRange(expr, 1_000_000, 1_000_000 + SEVEN_DAYS, 5);

describe('Prometheus API errors become failures that say what to change', () => {
  it('resolution too fine: names the query and the smallest step for the range', async () => {
    const f = await failure(
      apiError(
        400,
        'bad_data',
        'exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)',
      ),
      rangeOf('sglang:token_usage'),
    );
    expect(f).toMatchObject({ code: 'resolution-too-fine', query: 'sglang:token_usage' });
    expect(f.message).toContain('prometheus.service on gpu-a');
    expect(f.fix).toBe('Use a step ≥ 55 s for this 7 d range (Prometheus allows 11,000 points per series).');
  });

  it('too many samples: suggests a shorter range, a coarser step or --query.max-samples', async () => {
    const f = await failure(
      apiError(
        422,
        'execution',
        'query processing would load too many samples into memory in query execution',
      ),
      rangeOf('rate(x[5m])'),
    );
    expect(f).toMatchObject({ code: 'too-many-samples', query: 'rate(x[5m])' });
    expect(f.fix).toContain('--query.max-samples');
  });

  it('query timeout inside Prometheus: suggests --query.timeout', async () => {
    const f = await failure(
      apiError(503, 'timeout', 'query timed out in expression evaluation'),
      rangeOf('histogram_quantile(0.99, x)'),
    );
    expect(f).toMatchObject({ code: 'timeout', query: 'histogram_quantile(0.99, x)' });
    expect(f.fix).toContain('--query.timeout');
  });

  it("an internal error keeps Prometheus' words and the HTTP status", async () => {
    const f = await failure(apiError(500, 'internal', 'expanding series: out of memory'), rangeOf('up'));
    expect(f.code).toBe('server-error');
    expect(f.message).toContain('expanding series: out of memory');
    expect(f.message).toContain('HTTP 500');
  });

  it('a proxy answering 502 with HTML is a server error quoting the body', async () => {
    const f = await failure(
      { status: 502, type: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
      (c) => c.query('up'),
    );
    expect(f.code).toBe('server-error');
    expect(f.message).toContain('HTTP 502');
    expect(f.message).toContain('502 Bad Gateway');
  });

  it('a 404 (wrong base URL or route prefix) says to check the URL', async () => {
    const f = await failure({ status: 404, type: 'text/plain', body: '404 page not found\n' }, (c) =>
      c.targets(),
    );
    expect(f.code).toBe('bad-query');
    expect(f.fix).toContain('--web.route-prefix');
  });

  it('a 200 that is not the API JSON is garbage, naming what came back', async () => {
    const f = await failure(
      { status: 200, type: 'text/html', body: '<!doctype html><title>Grafana</title>' },
      (c) => c.query('up'),
    );
    expect(f.code).toBe('garbage');
    expect(f.message).toContain('Grafana');
  });

  it('JSON of the wrong shape is garbage too', async () => {
    const f = await failure(
      {
        status: 200,
        body: JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: 'x' } }),
      },
      rangeOf('up'),
    );
    expect(f).toMatchObject({ code: 'garbage', query: 'up' });
  });

  it('401 from basic auth: asks for credentials when none are set', async () => {
    const f = await failure({ status: 401, type: 'text/plain', body: 'Unauthorized\n' }, (c) =>
      c.query('up'),
    );
    expect(f.code).toBe('auth');
    expect(f.message).toContain('HTTP 401');
    expect(f.fix).toContain('basic auth or a bearer token');
  });

  it('403 with saved credentials: says to check them', async () => {
    const secrets = memorySecrets({ [promSecretKey(base, { kind: 'bearer' })]: 'tok' });
    const f = await failure({ status: 403, type: 'text/plain', body: 'Forbidden' }, (c) => c.query('up'), {
      auth: { kind: 'bearer' },
      secrets,
    });
    expect(f.code).toBe('auth');
    expect(f.fix).toContain('Check the user and password');
  });

  it('a missing secret fails before sending anything', async () => {
    lastRequest = null;
    const f = await failure({ status: 200, body: '' }, (c) => c.query('up'), {
      auth: { kind: 'basic', user: 'ops' },
      secrets: memorySecrets({}),
    });
    expect(f.code).toBe('auth');
    expect(f.message).toContain('the password of ops');
    expect(lastRequest).toBeNull();
  });

  it('no answer in time: a timeout naming the query', async () => {
    const f = await failure({ status: 200, body: '', hang: true }, rangeOf('up'), { timeoutMs: 300 });
    expect(f).toMatchObject({ code: 'timeout', query: 'up' });
    expect(f.message).toContain('no complete answer within 0.3 s');
  });

  it('an answer over the size cap stops reading and says to coarsen the query', async () => {
    const big = JSON.stringify({
      status: 'success',
      data: { resultType: 'matrix', result: [{ metric: {}, values: Array(5000).fill([1, '1']) }] },
    });
    const f = await failure({ status: 200, body: big }, rangeOf('up'), { maxBytes: 1024 });
    expect(f.code).toBe('too-many-samples');
    expect(f.fix).toContain('coarser step');
  });

  it('an aborted request fails at once', async () => {
    const ac = new AbortController();
    answer = { status: 200, body: '', hang: true };
    const client = new PromHttpClient({ baseUrl: base, label: 'p', timeoutMs: 60_000 });
    const p = client.query('up', undefined, ac.signal).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 50);
    const err = (await p) as PromRequestError;
    client.dispose();
    expect(err.failure.message).toContain('cancelled');
  });
});

describe('what the client sends and keeps', () => {
  it('sends basic auth from the secret store and POSTs the range query as a form', async () => {
    const secrets = memorySecrets({ [promSecretKey(base, { kind: 'basic', user: 'ops' })]: 'pa:ss' });
    answer = {
      status: 200,
      body: JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }),
    };
    const client = new PromHttpClient({
      baseUrl: `${base}/`,
      label: 'p',
      auth: { kind: 'basic', user: 'ops' },
      secrets,
    });
    await client.queryRange('sum by (job) (rate(x[1m]))', 100, 200, 10);
    client.dispose();
    expect(lastRequest!.method).toBe('POST');
    expect(lastRequest!.url).toBe('/api/v1/query_range');
    expect(lastRequest!.headers.authorization).toBe(`Basic ${Buffer.from('ops:pa:ss').toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(lastRequest!.body))).toEqual({
      query: 'sum by (job) (rate(x[1m]))',
      start: '100',
      end: '200',
      step: '10',
    });
  });

  it('sends a bearer token', async () => {
    const secrets = memorySecrets({ [promSecretKey(base, { kind: 'bearer' })]: 'abc' });
    answer = {
      status: 200,
      body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }),
    };
    const client = new PromHttpClient({ baseUrl: base, label: 'p', auth: { kind: 'bearer' }, secrets });
    await client.query('up');
    client.dispose();
    expect(lastRequest!.headers.authorization).toBe('Bearer abc');
  });

  it('partial data: keeps the points and the warnings (Thanos / federated stores)', async () => {
    answer = {
      status: 200,
      body: JSON.stringify({
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            {
              metric: { job: 'decode' },
              values: [
                [10, '0.5'],
                [20, 'NaN'],
                [30, '+Inf'],
              ],
            },
          ],
        },
        warnings: ['partial response: store gateway eu-1 unreachable'],
      }),
    };
    const client = new PromHttpClient({ baseUrl: base, label: 'p' });
    const r = await client.queryRange('x', 10, 30, 10);
    client.dispose();
    expect(r.warnings).toEqual(['partial response: store gateway eu-1 unreachable']);
    expect(r.series[0]!.values[0]).toEqual([10, 0.5]);
    expect(r.series[0]!.values[1]![1]).toBeNaN();
    expect(r.series[0]!.values[2]![1]).toBe(Infinity);
    expect(r.bytes).toBe(Buffer.byteLength(answer.body));
  });
});

function memorySecrets(init: Record<string, string>): SecretStore {
  const m = new Map(Object.entries(init));
  return {
    get: async (k) => m.get(k) ?? null,
    set: async (k, v) => void m.set(k, v),
    delete: async (k) => void m.delete(k),
  };
}
