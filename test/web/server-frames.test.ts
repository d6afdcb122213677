// One malformed WebSocket frame must cost only the socket that sent it: each hand-built bad frame below gets
// its own close code and one log line naming the client, and the server keeps serving every other client.
// (Before, ws emitted 'error' on a socket nobody listened to, and the whole browser-mode process died.)
import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_CLIENT_FRAME_BYTES } from '../../src/shared/contract';
import { Core } from '../../src/main/core/core';
import { startWebServer, type WebServer } from '../../src/main/web/server';

let server: WebServer;
const logged: string[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-web-frames-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>PD Console</title>');
  const core = new Core({ shell: 'browser', version: 'test' });
  server = await startWebServer({
    handlers: core.handlers() as never,
    bus: core,
    rendererDir: dir,
    log: (line) => logged.push(line),
  });
});
afterAll(async () => {
  await server?.close();
});

/** A raw TCP socket that has done the WebSocket handshake the way the renderer does (token, Origin, Host). */
async function rawSocket(): Promise<net.Socket> {
  const sock = net.connect(server.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  sock.write(
    [
      `GET /api?token=${server.token} HTTP/1.1`,
      `Host: 127.0.0.1:${server.port}`,
      `Origin: http://127.0.0.1:${server.port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
      '',
      '',
    ].join('\r\n'),
  );
  const head = await new Promise<string>((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      // Anything after the head is the first server frame: give it back to whoever reads frames.
      if (buf.length > end + 4) sock.unshift(buf.subarray(end + 4));
      resolve(buf.subarray(0, end).toString());
    };
    sock.on('data', onData);
    sock.once('error', reject);
  });
  expect(head).toMatch(/^HTTP\/1\.1 101 /);
  return sock;
}

/** The status code of the first close frame the server sends (server frames are unmasked). */
function closeCode(sock: net.Socket): Promise<number | 'no close frame'> {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2) {
        const opcode = buf[0] & 0x0f;
        let len = buf[1] & 0x7f;
        let at = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          at = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          at = 10;
        }
        if (buf.length < at + len) return;
        if (opcode === 0x8) {
          resolve(buf.readUInt16BE(at));
          sock.destroy();
          return;
        }
        buf = buf.subarray(at + len);
      }
    });
    sock.on('close', () => resolve('no close frame'));
  });
}

interface FrameSpec {
  first: number;
  payload?: Buffer;
  masked?: boolean;
  /** A declared length other than the payload's (the payload itself is then not sent). */
  declared?: { len7: number; ext: Buffer };
}

function frame({ first, payload = Buffer.alloc(0), masked = true, declared }: FrameSpec): Buffer {
  const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const maskBit = masked ? 0x80 : 0;
  if (declared) return Buffer.concat([Buffer.from([first, maskBit | declared.len7]), declared.ext]);
  let len: Buffer;
  if (payload.length < 126) len = Buffer.from([maskBit | payload.length]);
  else {
    len = Buffer.alloc(3);
    len[0] = maskBit | 126;
    len.writeUInt16BE(payload.length, 1);
  }
  const body = masked ? Buffer.from(payload.map((b, i) => b ^ mask[i % 4])) : payload;
  return Buffer.concat([Buffer.from([first]), len, masked ? mask : Buffer.alloc(0), body]);
}

const u64 = (n: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
};

const FIN = 0x80;
const CASES: { name: string; bytes: Buffer; code: number; reason: RegExp }[] = [
  {
    name: 'a text frame over the 1 MiB cap',
    bytes: frame({ first: FIN | 0x1, declared: { len7: 127, ext: u64(BigInt(MAX_CLIENT_FRAME_BYTES + 1)) } }),
    code: 1009,
    reason: /WS_ERR_UNSUPPORTED_MESSAGE_LENGTH/,
  },
  {
    name: 'invalid UTF-8 in a text frame',
    bytes: frame({ first: FIN | 0x1, payload: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }),
    code: 1007,
    reason: /WS_ERR_INVALID_UTF8/,
  },
  {
    name: 'the RSV1 bit without a negotiated extension',
    bytes: frame({ first: FIN | 0x40 | 0x1, payload: Buffer.from('{}') }),
    code: 1002,
    reason: /WS_ERR_UNEXPECTED_RSV_1/,
  },
  {
    name: 'an unknown opcode',
    bytes: frame({ first: FIN | 0x3, payload: Buffer.from('{}') }),
    code: 1002,
    reason: /WS_ERR_INVALID_OPCODE/,
  },
  {
    name: 'an unmasked client frame',
    bytes: frame({ first: FIN | 0x1, payload: Buffer.from('{}'), masked: false }),
    code: 1002,
    reason: /WS_ERR_EXPECTED_MASK/,
  },
  {
    name: 'a 2^63 payload length',
    bytes: frame({ first: FIN | 0x2, declared: { len7: 127, ext: u64(1n << 63n) } }),
    code: 1009,
    reason: /WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH/,
  },
  {
    name: 'close code 999',
    bytes: frame({ first: FIN | 0x8, payload: Buffer.from([0x03, 0xe7]) }),
    code: 1002,
    reason: /WS_ERR_INVALID_CLOSE_CODE/,
  },
  {
    name: 'a 126-byte ping',
    bytes: frame({ first: FIN | 0x9, payload: Buffer.alloc(126, 0x61) }),
    code: 1002,
    reason: /WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH/,
  },
  {
    name: 'a fragmented ping',
    bytes: frame({ first: 0x9, payload: Buffer.from('hi') }),
    code: 1002,
    reason: /WS_ERR_EXPECTED_FIN/,
  },
];

function healthyClient(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api?token=${server.token}`, {
      origin: `http://127.0.0.1:${server.port}`,
    });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

function appInfo(ws: WebSocket, id: number): Promise<unknown> {
  return new Promise((resolve) => {
    ws.on('message', function on(data) {
      const f = JSON.parse(String(data)) as { t: string; id?: number; envelope?: unknown };
      if (f.t === 'res' && f.id === id) {
        ws.off('message', on);
        resolve(f.envelope);
      }
    });
    ws.send(JSON.stringify({ t: 'req', id, method: 'getAppInfo', args: {} }));
  });
}

describe('browser mode: malformed WebSocket frames', () => {
  it('closes only the offending socket, with the matching code and a log line, and keeps serving', async () => {
    const bystander = await healthyClient();
    expect(await appInfo(bystander, 1)).toMatchObject({ ok: true, result: { shell: 'browser' } });
    for (const c of CASES) {
      const sock = await rawSocket();
      const client = `${sock.localAddress}:${sock.localPort}`;
      const closed = closeCode(sock);
      sock.write(c.bytes);
      expect(await closed, c.name).toBe(c.code);
      const line = logged.find((l) => l.includes(client));
      expect(line, `log line for ${c.name}`).toMatch(c.reason);
      expect(line).toContain('dropped WebSocket client');
    }
    expect(logged).toHaveLength(CASES.length);
    // The client that was connected all along still works, and a new one can connect and ask.
    expect(bystander.readyState).toBe(WebSocket.OPEN);
    expect(await appInfo(bystander, 2)).toMatchObject({ ok: true, result: { shell: 'browser' } });
    const fresh = await healthyClient();
    expect(await appInfo(fresh, 1)).toMatchObject({ ok: true, result: { shell: 'browser' } });
    bystander.close();
    fresh.close();
  });
});
