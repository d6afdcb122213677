// An https Prometheus, for real: node:https servers with certificates of a test CA made by openssl, reached
// directly and through a real OpenSSH sshd's tunnel. The client speaks TLS (the servers only understand TLS),
// sends the URL's host as SNI, refuses a certificate it cannot verify saying what was presented and which
// setting to change, succeeds with the CA file named, and a plain-HTTP server behind an https URL receives
// a TLS hello and never the credentials. Credentials go only to their own scheme, host and port.
import { promises as fs } from 'node:fs';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PromHttpClient,
  PromRequestError,
  promSecretKey,
  type PromHttpClientOptions,
} from '../../src/main/core/prometheus/http-client';
import type { PromFailure } from '../../src/main/core/prometheus/prom-api';
import { sshdUnavailableReason, startSshd, type Sshd } from '../fixtures/sshd';
import {
  connection,
  demoAnswer,
  hostBlock,
  makeHome,
  memorySecrets,
  recordingPrompts,
  resolverFor,
  sshHost,
  type TestHome,
} from '../ssh/sshd-helpers';
import { makeTestPki, opensslUnavailableReason, type TestPki } from '../support/test-ca';

const noOpenssl = opensslUnavailableReason();
if (noOpenssl) console.warn(`SKIP test/prometheus/https-prometheus: ${noOpenssl}`);
const noSshd = sshdUnavailableReason();
if (noSshd) console.warn(`SKIP the tunnel half of test/prometheus/https-prometheus: ${noSshd}`);

const PASSWORD = 'pa55-w0rd-only-for-tls';
const VECTOR = JSON.stringify({
  status: 'success',
  data: { resultType: 'vector', result: [{ metric: { job: 'prometheus' }, value: [1_700_000_000, '1'] }] },
});

interface Seen {
  path: string;
  authorization?: string;
}

interface TlsServer {
  port: number;
  /** The SNI of each TLS connection (false: the client sent none). */
  sni: Array<string | false | null>;
  requests: Seen[];
  close(): Promise<void>;
}

async function startTls(cert: { key: string; cert: string }, plainPort: () => number): Promise<TlsServer> {
  const sni: Array<string | false | null> = [];
  const requests: Seen[] = [];
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    requests.push({
      path: req.url ?? '',
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    req.resume();
    if (req.url?.startsWith('/prefix/')) {
      res.writeHead(308, { location: req.url.slice('/prefix'.length) });
      return void res.end();
    }
    if (req.url?.startsWith('/away/')) {
      res.writeHead(307, { location: `http://127.0.0.1:${plainPort()}${req.url.slice('/away'.length)}` });
      return void res.end();
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(VECTOR);
  });
  server.on('secureConnection', (s: TLSSocket) => sni.push(s.servername));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    sni,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A plain-TCP server that records every byte it is sent and answers like a plain HTTP server would. */
async function startPlain(): Promise<{ port: number; received: () => Buffer; close: () => Promise<void> }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('data', (c) => {
      chunks.push(c);
      s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    });
    s.on('close', () => sockets.delete(s));
    s.on('error', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    received: () => Buffer.concat(chunks),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

async function failure(
  client: PromHttpClient,
  call: (c: PromHttpClient) => Promise<unknown>,
): Promise<PromFailure> {
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

describe.skipIf(noOpenssl !== null)('an https Prometheus', () => {
  let pki: TestPki;
  let trusted: TlsServer;
  let stranger: TlsServer;
  let plain: Awaited<ReturnType<typeof startPlain>>;

  beforeAll(async () => {
    pki = makeTestPki(['localhost']);
    plain = await startPlain();
    [trusted, stranger] = await Promise.all([
      startTls(pki.server, () => plain.port),
      startTls(pki.stranger, () => plain.port),
    ]);
  });
  afterAll(async () => {
    await Promise.all([trusted?.close(), stranger?.close(), plain?.close()]);
    pki?.cleanup();
  });

  /** A client of `url` with basic auth saved for exactly that URL. */
  async function clientOf(url: string, opts: Partial<PromHttpClientOptions> = {}): Promise<PromHttpClient> {
    const secrets = memorySecrets();
    await secrets.set(promSecretKey(url, { kind: 'basic', user: 'ops' }), PASSWORD);
    return new PromHttpClient({
      baseUrl: url,
      label: `Prometheus at ${url}`,
      auth: { kind: 'basic', user: 'ops' },
      secrets,
      timeoutMs: 10_000,
      ...opts,
    });
  }

  const basic = `Basic ${Buffer.from(`ops:${PASSWORD}`).toString('base64')}`;

  /** The same cases directly and through the tunnel: `agent` absent is direct. */
  function cases(name: string, agentOf: () => PromHttpClientOptions['agent']): void {
    describe(name, () => {
      it('speaks TLS with the CA file named, with the URL host as SNI, and sends the credentials', async () => {
        const before = trusted.requests.length;
        const sniBefore = trusted.sni.length;
        const client = await clientOf(`https://localhost:${trusted.port}`, {
          caFile: pki.caFile,
          ...(agentOf() ? { agent: agentOf() } : {}),
        });
        const r = await client.query('up');
        client.dispose();
        expect(r.series[0]!.values).toEqual([[1_700_000_000, 1]]);
        // The server only speaks TLS: the request arrived decrypted, with its credentials.
        expect(trusted.requests.slice(before)).toEqual([{ path: '/api/v1/query', authorization: basic }]);
        expect(trusted.sni.slice(sniBefore)).toEqual(['localhost']);
      });

      it('refuses a certificate of a CA it does not know: what was presented, and the CA file setting', async () => {
        const before = trusted.requests.length;
        const client = await clientOf(
          `https://localhost:${trusted.port}`,
          agentOf() ? { agent: agentOf() } : {},
        );
        const f = await failure(client, (c) => c.query('up'));
        expect(f.code).toBe('tls');
        expect(f.message).toMatch(
          /refused localhost:\d+: its certificate is not signed by a CA among the system's CAs/,
        );
        expect(f.message).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/);
        expect(f.message).toContain('subject CN=localhost');
        expect(f.message).toContain('issuer CN=PD Console Test CA');
        expect(f.message).toMatch(/valid .* to .*; SHA-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}/);
        expect(f.fix).toContain('CA file');
        expect(trusted.requests.length).toBe(before);
      });

      it('refuses a certificate the named CA file did not sign, naming the file', async () => {
        const client = await clientOf(`https://localhost:${stranger.port}`, {
          caFile: pki.caFile,
          ...(agentOf() ? { agent: agentOf() } : {}),
        });
        const f = await failure(client, (c) => c.query('up'));
        expect(f.code).toBe('tls');
        expect(f.message).toContain(`the system's CAs and ${pki.caFile}`);
        expect(f.message).toContain('issuer CN=Somebody Else CA');
        expect(stranger.requests).toEqual([]);
      });

      it('refuses a certificate that is not for the URL host', async () => {
        const client = await clientOf(`https://127.0.0.1:${trusted.port}`, {
          caFile: pki.caFile,
          ...(agentOf() ? { agent: agentOf() } : {}),
        });
        const f = await failure(client, (c) => c.query('up'));
        expect(f.code).toBe('tls');
        expect(f.message).toContain('its certificate is not for 127.0.0.1 (ERR_TLS_CERT_ALTNAME_INVALID)');
        expect(f.message).toContain('names DNS:localhost');
      });

      it('a plain HTTP server behind an https URL gets a TLS hello, never the credentials', async () => {
        const from = plain.received().length;
        const client = await clientOf(
          `https://127.0.0.1:${plain.port}`,
          agentOf() ? { agent: agentOf() } : {},
        );
        const f = await failure(client, (c) => c.query('up'));
        const got = plain.received().subarray(from);
        const text = got.toString('latin1');
        expect(text).not.toMatch(/authorization/i);
        expect(text).not.toContain(Buffer.from(`ops:${PASSWORD}`).toString('base64'));
        expect(text).not.toContain('/api/v1/query');
        expect(got[0]).toBe(0x16); // a TLS handshake record
        expect(f.code).toBe('tls');
        expect(f.message).toContain('does not speak TLS');
        expect(f.message).toContain('never falls back to plain HTTP');
      });
    });
  }

  cases('dialled directly', () => undefined);

  describe.skipIf(noSshd !== null)('through the SSH tunnel of a real sshd', () => {
    let h: TestHome;
    let sshd: Sshd;
    let conn: ReturnType<typeof connection>;
    beforeAll(async () => {
      h = await makeHome();
      sshd = await startSshd({ answer: demoAnswer().answer, authorizedKeys: [h.keys.user.publicLine] });
      await fs.writeFile(h.knownHosts, `[127.0.0.1]:${sshd.port} ${sshd.hostKeyLine}\n`);
      await h.writeConfig(hostBlock('gpu', sshd.port, h));
      const { prompts } = recordingPrompts({});
      const { resolve } = resolverFor(h, prompts);
      conn = connection(() => resolve(sshHost('gpu')));
      await conn.start();
    }, 60_000);
    afterAll(async () => {
      await conn?.stop();
      await sshd?.stop();
      await h?.cleanup();
    });
    cases('tunnelled', () => () => conn.httpAgent());

    it('gives each refused tunnel back: more refusals in a row than the link has channels', async () => {
      for (let i = 0; i < 12; i++) {
        const client = await clientOf(`https://localhost:${trusted.port}`, { agent: () => conn.httpAgent() });
        const f = await failure(client, (c) => c.query('up'));
        expect(f.code, f.message).toBe('tls');
      }
    });
  });

  describe('credentials stay with their scheme, host and port', () => {
    it('follows a redirect within the origin, credentials included', async () => {
      const before = trusted.requests.length;
      const client = await clientOf(`https://localhost:${trusted.port}/prefix`, { caFile: pki.caFile });
      await client.query('up');
      client.dispose();
      expect(trusted.requests.slice(before)).toEqual([
        { path: '/prefix/api/v1/query', authorization: basic },
        { path: '/api/v1/query', authorization: basic },
      ]);
    });

    it('does not follow a redirect to another origin: neither the query nor the credentials go there', async () => {
      const from = plain.received().length;
      const client = await clientOf(`https://localhost:${trusted.port}/away`, { caFile: pki.caFile });
      const f = await failure(client, (c) => c.query('up'));
      expect(f.message).toContain(`a redirect to http://127.0.0.1:${plain.port}/api/v1/query`);
      expect(f.message).toContain('not followed');
      expect(plain.received().length).toBe(from);
    });

    it('keys a secret by scheme, host and port: the same host in plain http has none', async () => {
      const basicAuth = { kind: 'basic' as const, user: 'ops' };
      expect(promSecretKey('https://prom.example', basicAuth)).toBe(
        promSecretKey('https://prom.example:443/x/', basicAuth),
      );
      expect(promSecretKey('https://prom.example', basicAuth)).not.toBe(
        promSecretKey('http://prom.example', basicAuth),
      );
      expect(promSecretKey('https://prom.example', basicAuth)).not.toBe(
        promSecretKey('https://prom.example:8443', basicAuth),
      );
      const secrets = memorySecrets();
      await secrets.set(promSecretKey(`http://localhost:${trusted.port}`, basicAuth), PASSWORD);
      const client = new PromHttpClient({
        baseUrl: `https://localhost:${trusted.port}`,
        label: 'p',
        auth: basicAuth,
        secrets,
        caFile: pki.caFile,
      });
      const f = await failure(client, (c) => c.query('up'));
      expect(f.code).toBe('auth');
      expect(f.message).toContain('none is saved');
    });
  });
});
