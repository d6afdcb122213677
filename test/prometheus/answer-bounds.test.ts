// Answers bigger than what was asked, from a real HTTP server: a range answer with far more points than the
// query's grid (kept to one per step, and said), one with more series than any chart draws (refused, reading
// stopped), one past the points budget (refused) — and sample values that are not numbers (gaps, counted).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PromHttpClient, PromRequestError } from '../../src/main/core/prometheus/http-client';

let body: Buffer = Buffer.from('');
/** Bytes the server managed to write before the client hung up (a refused answer stops reading). */
let written = 0;
/** Settles when the server's last response closed (ended, or cut by the client). */
let closed: Promise<void> = Promise.resolve();
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      written = 0;
      // In 64 KB pieces, each after the last drained, so a client that stops reading stops the writes.
      let at = 0;
      const next = (): void => {
        while (at < body.length) {
          const piece = body.subarray(at, at + 65536);
          at += piece.length;
          written += piece.length;
          if (!res.write(piece)) return void res.once('drain', next);
        }
        res.end();
      };
      closed = new Promise((r) =>
        res.on('close', () => {
          at = body.length;
          r();
        }),
      );
      next();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const START = 1_700_000_000;
const STEP = 60;
const END = START + 1000 * STEP; // a grid of 1,001 points

const matrix = (series: string[]): Buffer =>
  Buffer.from(`{"status":"success","data":{"resultType":"matrix","result":[${series.join(',')}]}}`);

describe('an answer is bounded by what was asked', () => {
  it('keeps one point per step of the grid from 1.4 M points (30 MB) and says so', async () => {
    const n = 1_400_000;
    const pts: string[] = [];
    for (let i = 0; i < n; i++) pts.push(`[${(START + (i * (END - START)) / n).toFixed(3)},"${i % 10}"]`);
    body = matrix([`{"metric":{"job":"sglang-decode"},"values":[${pts.join(',')}]}`]);
    expect(body.length).toBeGreaterThan(28e6);
    const client = new PromHttpClient({ baseUrl: base, label: 'p', timeoutMs: 60_000 });
    const r = await client.queryRange('x', START, END, STEP);
    client.dispose();
    expect(r.series).toHaveLength(1);
    const v = r.series[0]!.values;
    expect(v.length).toBeLessThanOrEqual(1001);
    expect(v.length).toBeGreaterThan(990);
    // One per step, in order, on the grid's steps.
    for (let i = 1; i < v.length; i++) expect(v[i]![0] - v[i - 1]![0]).toBeGreaterThan(STEP / 2);
    expect(r.warnings.join(' ')).toMatch(
      /held 1,400,000 points where the query's grid has 1,001 per series .* 1,39\d,\d{3} were left out/,
    );
    expect(r.bytes).toBe(body.length);
  }, 60_000);

  it('refuses an answer of 50,000 series, naming the bound, and stops reading it', async () => {
    const series = Array.from(
      { length: 50_000 },
      (_, s) =>
        `{"metric":{"__name__":"up","job":"sglang-decode","instance":"10.1.${s >> 8}.${s & 255}:30000"},"values":[[${START},"1"],[${START + STEP},"1"]]}`,
    );
    body = matrix(series);
    const client = new PromHttpClient({ baseUrl: base, label: 'prometheus on gpu-a', timeoutMs: 60_000 });
    const err = await client.queryRange('up', START, END, STEP).catch((e: unknown) => e);
    client.dispose();
    expect(err).toBeInstanceOf(PromRequestError);
    const f = (err as PromRequestError).failure;
    expect(f).toMatchObject({ code: 'too-many-samples', query: 'up' });
    expect(f.message).toContain('prometheus on gpu-a');
    expect(f.message).toContain('more than 1,000 series');
    expect(f.fix).toMatch(/Narrow the query/);
    // The client hung up: the server could not write the whole answer.
    await closed;
    expect(written).toBeLessThan(body.length);
  }, 60_000);

  it('refuses an answer past the points budget', async () => {
    const series = Array.from(
      { length: 30 },
      (_, s) =>
        `{"metric":{"s":"${s}"},"values":[${Array.from({ length: 100 }, (_, i) => `[${START + i * STEP},"1"]`).join(',')}]}`,
    );
    body = matrix(series);
    const client = new PromHttpClient({ baseUrl: base, label: 'p', maxPoints: 1000 });
    const err = await client.queryRange('x', START, END, STEP).catch((e: unknown) => e);
    client.dispose();
    expect((err as PromRequestError).failure.code).toBe('too-many-samples');
    expect((err as PromRequestError).failure.message).toContain('more than 1,000 points');
  });
});

describe('values that are not numbers', () => {
  it('are gaps, not zeros, and the answer says how many', async () => {
    body = Buffer.from(
      JSON.stringify({
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            {
              metric: { job: 'decode' },
              values: [
                [START, '0.5'],
                [START + 60, ''],
                [START + 120, 'NaN'],
                [START + 180, 'abc'],
                [START + 240, '+Inf'],
                [START + 300, '-Inf'],
                [START + 360, '0x10'],
                [START + 420, '1e3'],
              ],
            },
          ],
        },
      }),
    );
    const client = new PromHttpClient({ baseUrl: base, label: 'p' });
    const r = await client.queryRange('x', START, END, STEP);
    client.dispose();
    const v = r.series[0]!.values;
    expect(v.map(([t]) => t - START)).toEqual([0, 120, 240, 300, 420]);
    expect(v[0]![1]).toBe(0.5);
    expect(v[1]![1]).toBeNaN();
    expect(v[2]![1]).toBe(Infinity);
    expect(v[3]![1]).toBe(-Infinity);
    expect(v[4]![1]).toBe(1000);
    expect(r.warnings).toEqual(['3 values were not a number (e.g. "") and are shown as gaps']);
  });

  it('native histogram samples are left out and said', async () => {
    body = Buffer.from(
      JSON.stringify({
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            { metric: { job: 'a' }, values: [[START, '1']] },
            { metric: { job: 'b' }, histograms: [[START, { count: '3', sum: '1', buckets: [] }]] },
          ],
        },
      }),
    );
    const client = new PromHttpClient({ baseUrl: base, label: 'p' });
    const r = await client.queryRange('x', START, END, STEP);
    client.dispose();
    expect(r.series.map((s) => s.values.length)).toEqual([1, 0]);
    expect(r.warnings).toEqual([
      '1 native histogram sample was left out (the console reads float samples only)',
    ]);
  });

  it('an instant query of an empty value has no point', async () => {
    body = Buffer.from(
      JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: [{ metric: { job: 'decode' }, value: [START, ''] }] },
      }),
    );
    const client = new PromHttpClient({ baseUrl: base, label: 'p' });
    const r = await client.query('x');
    client.dispose();
    expect(r.series[0]!.values).toEqual([]);
    expect(r.warnings[0]).toContain('1 value was not a number');
  });
});
