// Browser mode's transport against the real server (ws in Node standing in for the browser's WebSocket):
// nothing waits forever on a socket that is gone or never opened, a request over the frame cap is refused
// before it is sent (an upload chunk fits), and the bridge comes back by itself when the backend does, or when
// the backend closed it for falling behind.
import { EventEmitter } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_CLIENT_FRAME_BYTES, type ApiHandlers } from '../../src/shared/contract';
import { UPLOAD_CHUNK_BYTES } from '../../src/shared/api/review';
import { Core } from '../../src/main/core/core';
import { startWebServer, type WebServer } from '../../src/main/web/server';
import type { ApiEventBus } from '../../src/main/api/dispatch';
import {
  createWsTransport,
  type BridgeStatus,
  type SocketConstructor,
  type WsTransport,
} from '../../src/renderer/src/api/ws-bridge';
import { createApi } from '../../src/renderer/src/api/typed-client';
import type { ApiCallError } from '../../src/renderer/src/api/errors';

const dir = mkdtempSync(join(tmpdir(), 'pdc-ws-bridge-'));
writeFileSync(join(dir, 'index.html'), '<!doctype html>');

/** The `ws` client as the browser's WebSocket: same origin as the page, as a browser sends it. */
const socketFor = (port: number): SocketConstructor =>
  class extends WebSocket {
    constructor(url: string) {
      super(url, { origin: `http://127.0.0.1:${port}` });
    }
  } as unknown as SocketConstructor;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(
  opts: { port?: number; token?: string; handlers?: Partial<ApiHandlers>; bus?: ApiEventBus } = {},
  logged: string[] = [],
): Promise<WebServer> {
  const core = new Core({ shell: 'browser', version: 'test' });
  const server = await startWebServer({
    handlers: { ...core.handlers(), ...opts.handlers } as never,
    bus: opts.bus ?? core,
    rendererDir: dir,
    port: opts.port,
    token: opts.token,
    log: (l) => logged.push(l),
  });
  cleanups.push(() => server.close());
  return server;
}

function bridge(server: { port: number; token: string }, token = server.token): WsTransport {
  const t = createWsTransport({
    url: `ws://127.0.0.1:${server.port}/api?token=${token}`,
    WebSocket: socketFor(server.port),
    retry: { firstMs: 50, maxMs: 200 },
  });
  cleanups.push(() => t.dispose());
  return t;
}

const until = (t: WsTransport, ok: (s: BridgeStatus) => boolean): Promise<BridgeStatus> =>
  new Promise((resolve) => {
    if (ok(t.status())) return resolve(t.status());
    const off = t.onStatus((s) => {
      if (ok(s)) {
        off();
        resolve(s);
      }
    });
  });

const failure = (p: Promise<unknown>): Promise<ApiCallError> =>
  p.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (e: ApiCallError) => e,
  );

describe('browser-mode WebSocket bridge', () => {
  it('rejects what waits on a socket that closes before it opened (refused upgrade)', async () => {
    const server = await serve();
    const api = createApi(bridge(server, 'wrong-token'));
    const e = await failure(api.getAppInfo({}));
    expect(e.code).toBe('backend-lost');
    expect(e.message).toMatch(/lost the connection to the PD Console backend \(.*before it opened/);
    expect(e.hint).toMatch(/same port/);
  });

  it('refuses a request over the frame cap before sending it; a full upload chunk fits', async () => {
    const logged: string[] = [];
    const server = await serve({}, logged);
    const t = bridge(server);
    const api = createApi(t);
    expect(await api.getAppInfo({})).toMatchObject({ shell: 'browser' });
    const chunk = Buffer.alloc(UPLOAD_CHUNK_BYTES, 7).toString('base64');
    // Reaches the server (which answers about the unknown upload), not refused for its size.
    const fits = await failure(
      api.uploadRecordingChunk({ uploadId: 'a'.repeat(32), offset: 0, data: chunk }),
    );
    expect(fits.code).not.toBe('too-large');
    const tooBig = await failure(
      api.uploadRecordingChunk({
        uploadId: 'a'.repeat(32),
        offset: 0,
        data: 'A'.repeat(MAX_CLIENT_FRAME_BYTES),
      }),
    );
    expect(tooBig.code).toBe('too-large');
    expect(tooBig.message).toMatch(
      /^uploadRecordingChunk: the request is 1048\d{3} bytes; browser mode carries at most 1048576 bytes \(1 MiB\) per request$/,
    );
    // Refused here: the server saw no oversized frame and the connection is still up.
    expect(logged).toEqual([]);
    expect(t.status().state).toBe('open');
    expect(await api.getAppInfo({})).toMatchObject({ shell: 'browser' });
  });

  it('puts a request on an open socket in the caller’s own turn, so a long task after it does not hold it back', async () => {
    const server = await serve();
    const sent: string[] = [];
    const Base = socketFor(server.port);
    // The real socket, with each frame noted as the bridge hands it over.
    const Recording = class extends (Base as unknown as typeof WebSocket) {
      override send(data: string): void {
        sent.push(data);
        super.send(data);
      }
    } as unknown as SocketConstructor;
    const t = createWsTransport({
      url: `ws://127.0.0.1:${server.port}/api?token=${server.token}`,
      WebSocket: Recording,
    });
    cleanups.push(() => t.dispose());
    const api = createApi(t);
    // Before the socket opens the request waits for it, and leaves once it is open.
    const early = api.getAppInfo({});
    expect(sent).toEqual([]);
    await until(t, (s) => s.state === 'open');
    expect(await early).toMatchObject({ shell: 'browser' });
    expect(sent).toHaveLength(1);
    // A page asks for its history, then builds its charts in the same task: the frame is already out.
    const answer = api.getAppInfo({});
    expect(sent.map((f) => (JSON.parse(f) as { method: string }).method)).toEqual([
      'getAppInfo',
      'getAppInfo',
    ]);
    expect(await answer).toMatchObject({ shell: 'browser' });
  });

  it('carries a page’s history as one binary frame, read back as JSON would have carried it', async () => {
    const t = Array.from({ length: 700 }, (_, i) => 1_796_350_000_000 + i * 1000);
    const v = t.map((_, i) => (i === 5 ? null : Math.cos(i / 9) / 3));
    const result = {
      results: [
        {
          series: [{ key: 'decode.kv_ratio', t, v }],
          firstMs: t[0],
          lastMs: t[699],
          rawPoints: 86_400,
          decimated: true,
          missing: {},
        },
      ],
    };
    const server = await serve({
      handlers: { getSeriesBatch: () => Promise.resolve(result) } as Partial<ApiHandlers>,
    });
    // On the wire: a binary message (the page's socket takes it as one ArrayBuffer).
    const raw = new (socketFor(server.port) as unknown as typeof WebSocket)(
      `ws://127.0.0.1:${server.port}/api?token=${server.token}`,
    );
    cleanups.push(() => raw.close());
    await new Promise((r) => raw.once('open', r));
    raw.send(
      JSON.stringify({
        t: 'req',
        id: 1,
        method: 'getSeriesBatch',
        args: { deploymentId: 'demo', groups: [{ keys: ['decode.kv_ratio'], maxPoints: 700 }] },
      }),
    );
    const [bytes, isBinary] = await new Promise<[Buffer, boolean]>((r) =>
      raw.once('message', (d: Buffer, b: boolean) => r([d, b])),
    );
    expect(isBinary).toBe(true);
    expect(bytes.byteLength).toBeLessThan(JSON.stringify(result).length * 0.6);
    // Through the bridge, as the page reads it: the same answer as JSON text would have given.
    const api = createApi(bridge(server));
    const got = await api.getSeriesBatch({
      deploymentId: 'demo',
      groups: [{ keys: ['decode.kv_ratio'], maxPoints: 700 }],
    });
    expect(got).toEqual(JSON.parse(JSON.stringify(result)));
  });

  it('rejects pending requests when the backend goes, and recovers by itself when it is back', async () => {
    let answer = false;
    const handlers: Partial<ApiHandlers> = {
      listDeployments: () => (answer ? Promise.resolve([]) : new Promise(() => undefined)),
    };
    const first = await serve({ handlers });
    const t = bridge(first);
    const api = createApi(t);
    await until(t, (s) => s.state === 'open');
    const pending = failure(api.listDeployments({}));
    await first.close();
    const e = await pending;
    expect(e.code).toBe('backend-lost');
    const down = await until(t, (s) => s.state === 'closed');
    expect(down).toMatchObject({ lost: true, attempt: 1 });
    // While it is down, a request fails at once instead of waiting.
    expect((await failure(api.listDeployments({}))).code).toBe('backend-lost');
    const retried = await until(t, (s) => s.attempt >= 2);
    expect(retried.lost).toBe(true);
    // The backend restarts on the same port with the same token (PD_CONSOLE_WEB_TOKEN).
    answer = true;
    await serve({ port: first.port, token: first.token, handlers });
    expect(await until(t, (s) => s.state === 'open')).toEqual({ state: 'open', lost: false, attempt: 0 });
    expect(await api.listDeployments({})).toEqual([]);
  });

  it('reconnects by itself after the backend closed it for falling behind, saying why', async () => {
    const bus = new EventEmitter() as ApiEventBus;
    const logged: string[] = [];
    const server = await serve({ bus }, logged);
    // The bridge's sockets, so the test can make the first one stop reading (a frozen tab).
    const made: WebSocket[] = [];
    const Base = socketFor(server.port) as unknown as typeof WebSocket;
    const Recording = class extends Base {
      constructor(url: string) {
        super(url);
        made.push(this);
      }
    } as unknown as SocketConstructor;
    const t = createWsTransport({
      url: `ws://127.0.0.1:${server.port}/api?token=${server.token}`,
      WebSocket: Recording,
      retry: { firstMs: 50, maxMs: 200 },
    });
    cleanups.push(() => t.dispose());
    const api = createApi(t);
    const rows: number[] = [];
    t.on('signals', (p) => rows.push((p as { ts: number }).ts));
    await until(t, (s) => s.state === 'open');
    made[0].pause();
    // Pushes of 64 kB until the server gives up on the paused socket (100 MB is past any kernel buffer: a failure).
    const values = { big: 'x'.repeat(64 * 1024) };
    for (let ts = 1; server.clients()[0]?.state !== 'closing'; ts++) {
      if (ts > 1600) throw new Error('the server never closed the paused socket');
      bus.emit('signals', { deploymentId: 'd', ts, values } as never);
      await new Promise((r) => setImmediate(r));
    }
    made[0].resume();
    const lost = await until(t, (s) => s.lost);
    expect(lost.detail).toBe('this page fell behind the backend; reconnecting fetches everything again');
    expect(logged).toEqual([expect.stringMatching(/it stopped reading \(\d+ bytes queued, limit \d+\)/)]);
    expect(await until(t, (s) => s.state === 'open')).toEqual({ state: 'open', lost: false, attempt: 0 });
    expect(made).toHaveLength(2);
    expect(await api.getAppInfo({})).toMatchObject({ shell: 'browser' });
    // What was queued before the close still arrived, in order, and pushes flow on the new socket.
    expect(rows).toEqual(rows.map((_, i) => i + 1));
    const before = rows.length;
    bus.emit('signals', { deploymentId: 'd', ts: -1, values: {} } as never);
    await expect.poll(() => rows.length).toBe(before + 1);
  });
});
