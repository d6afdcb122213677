// SshConnection's decisions without a real sshd: which failures are retried (with growing, capped, jittered
// backoff) and which are not, the handshake deadline for a host that accepts TCP but never speaks SSH, and that
// time spent waiting for the operator (host-key prompt) does not count against that deadline.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectConfig } from 'ssh2';
import { SshError } from '../../src/main/core/ssh/errors';
import { HandshakeDeadline } from '../../src/main/core/ssh/handshake-deadline';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { connection, waitFor } from './sshd-helpers';

const failing = (code: string) => {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    configure: async (): Promise<ConnectConfig> => {
      calls++;
      throw new SshError({ code, message: `simulated ${code}` });
    },
  };
};

describe('retry policy', () => {
  it('does not retry credential, host-key or config failures', async () => {
    for (const code of ['auth-failed', 'host-key-changed', 'passphrase', 'config', 'unknown-host']) {
      const f = failing(code);
      const conn = connection(f.configure, { backoff: { initialMs: 20, maxMs: 40 } });
      await conn.start();
      expect(conn.status, code).toMatchObject({ state: 'failed', reason: `simulated ${code}` });
      await new Promise((r) => setTimeout(r, 120));
      expect(f.calls, code).toBe(1);
      await expect(conn.waitConnected(100)).rejects.toMatchObject({ explained: { code } });
      // A network change does not re-ask for credentials (but may fix a name that did not resolve, e.g. VPN up);
      // the operator's "retry" always tries again.
      expect(conn.reconnectNow('network changed', { automatic: true })).toBe(code === 'unknown-host');
      if (code === 'unknown-host')
        await waitFor('the automatic retry', () => f.calls === 2 && conn.status.state === 'failed', 1000);
      expect(conn.reconnectNow('retry button')).toBe(true);
      await waitFor('the manual retry', () => f.calls === (code === 'unknown-host' ? 3 : 2), 1000);
      await conn.stop();
    }
  });

  it('retries transient failures with exponential backoff, jitter and a cap', async () => {
    const f = failing('refused');
    const waits: Array<{ attempt: number; delay: number; since: number }> = [];
    const conn = connection(f.configure, { backoff: { initialMs: 40, maxMs: 160 } });
    conn.on('status', (s) => {
      if (s.state === 'reconnecting')
        waits.push({ attempt: s.attempt, delay: s.nextAttemptAt - Date.now(), since: s.since });
    });
    await conn.start();
    await waitFor('six attempts', () => f.calls >= 6, 5000);
    await conn.stop();
    expect(waits.map((w) => w.attempt).slice(0, 5)).toEqual([2, 3, 4, 5, 6]);
    // One outage: every status carries when it began, not when the latest attempt started.
    expect(new Set(waits.map((w) => w.since)).size).toBe(1);
    const bases = [40, 80, 160, 160, 160];
    waits.slice(0, 5).forEach((w, i) => {
      expect(w.delay).toBeGreaterThanOrEqual(bases[i] / 2 - 2);
      expect(w.delay).toBeLessThanOrEqual(bases[i] + 2);
    });
  });

  it('fails a name that never resolved', async () => {
    const dns = failing('dns');
    const conn = connection(dns.configure);
    await conn.start();
    expect(conn.status).toMatchObject({ state: 'failed', reason: 'simulated dns' });
    await conn.stop();
  });
});

describe('handshake deadline', () => {
  let silent: net.Server;
  let silentPort: number;
  let demo: DemoHost;
  beforeAll(async () => {
    // Accepts TCP and never sends an SSH banner: an overloaded or hung sshd.
    silent = net.createServer((sock) => sock.on('error', () => sock.destroy()));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    silentPort = (silent.address() as net.AddressInfo).port;
    demo = await startDemoHost();
  });
  afterAll(async () => {
    silent.close();
    await demo.stop();
  });

  it('gives up on a host that accepts the connection but never completes the handshake', async () => {
    const conn = connection(
      async () => ({ host: '127.0.0.1', port: silentPort, username: 'x', readyTimeout: 300 }),
      {
        backoff: { initialMs: 5000, maxMs: 5000 },
      },
    );
    await conn.start();
    // start() returns once the first attempt timed out (the one waiting is the second), not after the 5 s
    // backoff and another try.
    expect(conn.status).toMatchObject({
      state: 'reconnecting',
      attempt: 2,
      lastError: expect.stringContaining('the SSH handshake and login did not complete within 0.3 s'),
    });
    await conn.stop();
  });

  it('does not count the time the operator spends on a host-key prompt', async () => {
    let asked = 0;
    const conn = connection(async () => ({
      host: demo.host,
      port: demo.port,
      username: demo.username,
      privateKey: demo.clientPrivateKey,
      readyTimeout: 300,
      hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
        asked++;
        setTimeout(() => verify(key.equals(demo.hostKeyPublic)), 800); // a human reading the fingerprint
      },
    }));
    await conn.start();
    expect(asked).toBe(1);
    expect(conn.status, JSON.stringify(conn.status)).toMatchObject({ state: 'connected' });
    await conn.stop();
  });

  it('keeps retrying a DNS failure once the host has been reached (VPN dropped, not a typo)', async () => {
    let dnsDown = false;
    const conn = connection(async () => {
      if (dnsDown) throw new SshError({ code: 'dns', message: 'simulated dns' });
      return {
        host: demo.host,
        port: demo.port,
        username: demo.username,
        privateKey: demo.clientPrivateKey,
        hostVerifier: (k: Buffer) => k.equals(demo.hostKeyPublic),
      };
    });
    await conn.start();
    expect(conn.status.state).toBe('connected');
    dnsDown = true;
    expect(conn.reconnectNow('network changed', { automatic: true })).toBe(true);
    await waitFor('the failed attempt', () => conn.status.state === 'reconnecting', 5000);
    expect(conn.status).toMatchObject({ state: 'reconnecting', lastError: 'simulated dns' });
    dnsDown = false;
    await conn.waitConnected(5000);
    await conn.stop();
  });

  it('pauses and resumes (nested), and never fires after cancel', async () => {
    let fired = 0;
    const d = new HandshakeDeadline(150, () => fired++);
    const t0 = Date.now();
    d.start();
    await new Promise((r) => setTimeout(r, 50));
    d.pause();
    d.pause();
    await new Promise((r) => setTimeout(r, 300));
    d.resume();
    expect(fired).toBe(0);
    d.resume();
    await waitFor('the deadline', () => fired === 1, 1000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(440);
    const c = new HandshakeDeadline(50, () => fired++);
    c.start();
    c.cancel();
    await new Promise((r) => setTimeout(r, 120));
    expect(fired).toBe(1);
    // A pause nobody ends still expires after the pause cap.
    const stuck = new HandshakeDeadline(10_000, () => fired++, 100);
    stuck.start();
    stuck.pause();
    await waitFor('the pause cap', () => fired === 2, 1000);
  });
});
