// The transport against real OpenSSH sshds: ProxyJump through a second sshd, a dead link noticed by keepalives
// and healed by reconnecting when sshd comes back on the same port, many commands at once under sshd's
// MaxSessions, and HTTP scrapes tunnelled with forwardOut to a loopback server (the demo host's endpoints).
import { promises as fs } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from 'ssh2';
import type { ConnectionStatus } from '@shared/domain';
import { SshError } from '../../src/main/core/ssh/errors';
import { httpGet, HttpError } from '../../src/main/core/ssh/http-agent';
import { hasDiagnostics } from '../../src/main/core/ssh/diagnostics';
import { systemClock } from '../../src/main/core/clock';
import { DemoHttpServers, DemoSimulation, DEMO_PORTS } from '../../src/main/demo';
import { freePort, keygenFingerprint, sshdUnavailableReason, startSshd, type Sshd } from '../fixtures/sshd';
import {
  connection,
  demoAnswer,
  hostBlock,
  makeHome,
  recordingPrompts,
  resolverFor,
  sshHost,
  waitFor,
  type TestHome,
} from './sshd-helpers';

const skip = sshdUnavailableReason();
if (skip) console.warn(`[skipped] SSH transport tests against a real sshd: ${skip}`);

describe.skipIf(skip !== null)(
  'against real OpenSSH sshds: jump hosts, reconnects, sessions, tunnels',
  () => {
    let h: TestHome;
    let target: Sshd;
    let jump: Sshd;
    const targetAnswer = demoAnswer();
    const targetLoad = targetAnswer.load;

    beforeAll(async () => {
      h = await makeHome();
      [target, jump] = await Promise.all([
        startSshd({ answer: targetAnswer.answer, authorizedKeys: [h.keys.user.publicLine] }),
        // DEBUG1 makes sshd log each direct-tcpip request, which proves the target was reached through it.
        startSshd({
          answer: demoAnswer().answer,
          authorizedKeys: [h.keys.user.publicLine],
          logLevel: 'DEBUG1',
        }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([target?.stop(), jump?.stop()]);
      await h?.cleanup();
    });
    beforeEach(async () => {
      await fs.rm(h.knownHosts, { force: true });
    });

    const trust = (...servers: Sshd[]): Promise<void> =>
      fs.writeFile(h.knownHosts, servers.map((s) => `[127.0.0.1]:${s.port} ${s.hostKeyLine}\n`).join(''));

    describe('ProxyJump', () => {
      it('reaches the target through the jump host, verifying each host key under its own name', async () => {
        await h.writeConfig(
          hostBlock('bastion', jump.port, h) +
            hostBlock('gpu', target.port, h, [
              `IdentityFile ${h.keys.user.privateFile}`,
              'ProxyJump bastion',
            ]),
        );
        const { prompts, calls } = recordingPrompts({ hostKey: true });
        const { resolve } = resolverFor(h, prompts);
        const conn = connection(() => resolve(sshHost('gpu')));
        await conn.start();
        expect(conn.status.state).toBe('connected');

        expect(calls.hostKey.map((c) => [c.port, c.fingerprint, c.jumpFor])).toEqual([
          [jump.port, await keygenFingerprint(jump.hostKeyPubFile), 'gpu'],
          [target.port, await keygenFingerprint(target.hostKeyPubFile), undefined],
        ]);
        const r = await conn.exec('echo through the bastion');
        expect(r.stdout).toBe('through the bastion\n');
        // sshd's stderr arrives on its own pipe, possibly after the SSH traffic it describes.
        const tcpip = new RegExp(
          `server_request_direct_tcpip: originator .* target 127\\.0\\.0\\.1 port ${target.port}`,
        );
        await waitFor('the jump sshd to log the direct-tcpip request', () => tcpip.test(jump.log()), 5000);

        // Closing the target closes the hop: the jump sshd sees its client disconnect.
        const before = (jump.log().match(/Disconnected from user root/g) ?? []).length;
        await conn.stop();
        await waitFor(
          'the jump host connection to close',
          () => (jump.log().match(/Disconnected from user root/g) ?? []).length > before,
          5000,
        );
      });

      it('closes the hops when the target connection built from the config ends', async () => {
        await trust(jump, target);
        await h.writeConfig(
          hostBlock('bastion', jump.port, h) +
            hostBlock('gpu', target.port, h, [
              `IdentityFile ${h.keys.user.privateFile}`,
              'ProxyJump bastion',
            ]),
        );
        const { prompts } = recordingPrompts({});
        const config = await resolverFor(h, prompts).resolve(sshHost('gpu'));
        expect(config.sock).toBeDefined();
        const client = new Client();
        await new Promise<void>((resolve, reject) => {
          client.once('ready', () => resolve()).once('error', reject);
          client.connect(config);
        });
        const before = (jump.log().match(/Disconnected from user root/g) ?? []).length;
        client.end();
        await waitFor(
          'the hop to disconnect after the target ended',
          () => (jump.log().match(/Disconnected from user root/g) ?? []).length > before,
          5000,
        );
        expect(hasDiagnostics(config)).toBe(true);
      });

      it('refuses when the jump host key changed, naming the jump host', async () => {
        await fs.writeFile(
          h.knownHosts,
          `[127.0.0.1]:${jump.port} ${target.hostKeyLine}\n[127.0.0.1]:${target.port} ${target.hostKeyLine}\n`,
        );
        await h.writeConfig(
          hostBlock('bastion', jump.port, h) +
            hostBlock('gpu', target.port, h, [
              `IdentityFile ${h.keys.user.privateFile}`,
              'ProxyJump bastion',
            ]),
        );
        const { prompts } = recordingPrompts({ hostKey: true });
        const conn = connection(() => resolverFor(h, prompts).resolve(sshHost('gpu')));
        await conn.start();
        expect(conn.status.state).toBe('failed');
        const err = (await conn.waitConnected(100).catch((e: unknown) => e)) as SshError;
        expect(err.explained.code).toBe('host-key-changed');
        expect(err.message).toContain('jump host bastion');
        expect(err.message).toContain(`${h.knownHosts}:1`);
        await conn.stop();
      });

      it('explains a jump host that forbids forwarding', async () => {
        const closed = await startSshd({
          answer: demoAnswer().answer,
          authorizedKeys: [h.keys.user.publicLine],
          allowTcpForwarding: false,
        });
        try {
          await trust(closed, target);
          await h.writeConfig(
            hostBlock('locked', closed.port, h) +
              hostBlock('gpu', target.port, h, [
                `IdentityFile ${h.keys.user.privateFile}`,
                'ProxyJump locked',
              ]),
          );
          const { prompts } = recordingPrompts({});
          const err = (await resolverFor(h, prompts)
            .resolve(sshHost('gpu'))
            .catch((e: unknown) => e)) as SshError;
          expect(err).toBeInstanceOf(SshError);
          expect(err.explained.code).toBe('jump');
          expect(err.message).toContain(
            `jump host locked could not open a connection to gpu (127.0.0.1:${target.port})`,
          );
          expect(err.explained.hint).toContain('AllowTcpForwarding');
        } finally {
          await closed.stop();
        }
      });
    });

    it('notices a dead link by its keepalives, leaves other hosts alone, and reconnects by itself when sshd is back', async () => {
      const flaky = await startSshd({
        answer: demoAnswer().answer,
        authorizedKeys: [h.keys.user.publicLine],
      });
      try {
        await trust(flaky, target);
        await h.writeConfig(hostBlock('gpu', flaky.port, h) + hostBlock('steady', target.port, h));
        const { prompts } = recordingPrompts({});
        const { resolve } = resolverFor(h, prompts);
        // A second host on the same resolver: each host has its own connection and state.
        const steady = connection(() => resolve(sshHost('steady')));
        await steady.start();
        const seen: ConnectionStatus[] = [];
        const conn = connection(() => resolve(sshHost('gpu')), {
          keepaliveIntervalMs: 300,
          keepaliveCountMax: 2,
          backoff: { initialMs: 200, maxMs: 1000 },
        });
        conn.on('status', (s) => seen.push(s));
        await conn.start();
        expect(conn.status.state).toBe('connected');
        expect((await conn.exec('echo before')).stdout).toBe('before\n');

        // Frozen processes keep the TCP connection open but never answer: only keepalives can tell.
        flaky.freeze();
        await waitFor('status reconnecting', () => conn.status.state === 'reconnecting', 30_000);
        const lost = conn.status as Extract<ConnectionStatus, { state: 'reconnecting' }>;
        expect(lost.lastError).toMatch(/keepalive/i);

        expect(steady.status.state).toBe('connected');
        expect((await steady.exec('echo unaffected')).stdout).toBe('unaffected\n');

        await flaky.restart();
        await conn.waitConnected(15_000);
        expect((await conn.exec('echo after')).stdout).toBe('after\n');
        const states = seen.map((s) => s.state);
        expect(states.indexOf('reconnecting')).toBeGreaterThan(states.indexOf('connected'));
        expect(states.at(-1)).toBe('connected');
        await conn.stop();
        await steady.stop();
      } finally {
        await flaky.stop();
      }
    });

    describe('one connection carries everything', () => {
      let conn: ReturnType<typeof connection>;
      beforeAll(async () => {
        await trust(target);
        await h.writeConfig(hostBlock('gpu', target.port, h));
        const { prompts } = recordingPrompts({});
        const { resolve } = resolverFor(h, prompts);
        conn = connection(() => resolve(sshHost('gpu')));
        await conn.start();
        expect(conn.status.state).toBe('connected');
      });
      afterAll(() => conn?.stop());

      it('runs 12 concurrent commands without a channel failure (sshd MaxSessions is 10)', async () => {
        targetLoad.max = 0;
        const results = await Promise.all(Array.from({ length: 12 }, () => conn.exec('test-sleep 400')));
        expect(results.map((r) => r.stdout)).toEqual(Array(12).fill('slept 400\n'));
        // They really ran side by side on the host, and never more than the connection's session limit (8).
        expect(targetLoad.max).toBeGreaterThan(1);
        expect(targetLoad.max).toBeLessThanOrEqual(8);

        // Control: the same burst with the session limit lifted does hit sshd's MaxSessions.
        await fs.rm(h.knownHosts, { force: true });
        await trust(target);
        const { prompts } = recordingPrompts({});
        const { resolve } = resolverFor(h, prompts);
        const unbounded = connection(() => resolve(sshHost('gpu')), { maxChannels: 12 });
        await unbounded.start();
        // Held longer than the connection asks again after a refusal (≈ 0.6 s): the refusal is real.
        const outcomes = await Promise.allSettled(
          Array.from({ length: 12 }, () => unbounded.exec('test-sleep 2000')),
        );
        await unbounded.stop();
        const failures = outcomes
          .filter((o) => o.status === 'rejected')
          .map((o) => String((o as PromiseRejectedResult).reason));
        expect(failures.length).toBeGreaterThan(0);
        expect(failures[0]).toMatch(/refused a new session channel \(Channel open failure: open failed\)/);
        expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject(
          {
            explained: { code: 'session-refused', hint: expect.stringMatching(/MaxSessions/) },
          },
        );
      });

      it('hands a closed channel’s slot straight to the next command even when sshd still counts it', async () => {
        // A budget of exactly MaxSessions: each next open follows our close of the last one on the wire, and
        // sshd, which frees a session only on its next pass over its channels, often refuses it ("open
        // failed"). The connection asks again after a moment instead of failing the command.
        await trust(target);
        const { prompts } = recordingPrompts({});
        const { resolve } = resolverFor(h, prompts);
        const atLimit = connection(() => resolve(sshHost('gpu')), { maxChannels: 10 });
        await atLimit.start();
        try {
          const results = await Promise.allSettled(
            Array.from({ length: 60 }, (_, i) => atLimit.exec(`test-sleep ${20 + (i % 7) * 5}`)),
          );
          const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
          expect(failed).toEqual([]);
        } finally {
          await atLimit.stop();
        }
      });

      it('tunnels HTTP with forwardOut to a loopback server on the host (the demo /metrics)', async () => {
        const sim = new DemoSimulation({ clock: systemClock });
        const servers = new DemoHttpServers(sim);
        const ports = await servers.listen();
        try {
          const agent = conn.httpAgent();
          const res = await httpGet(agent, `http://127.0.0.1:${ports[DEMO_PORTS.decode]}/metrics`);
          expect(res.status).toBe(200);
          expect(res.body).toMatch(/^# (HELP|TYPE) sglang:/m);
          const again = await httpGet(agent, `http://127.0.0.1:${ports[DEMO_PORTS.decode]}/metrics`);
          expect(again.status).toBe(200);

          // Nothing listens on that port: the tunnel reports it as refused, not as a hang.
          const nobody = await freePort();
          const err = await httpGet(agent, `http://127.0.0.1:${nobody}/metrics`, { timeoutMs: 5000 }).catch(
            (e) => e,
          );
          expect(err).toBeInstanceOf(HttpError);
          expect((err as HttpError).code, String(err)).toBe('refused');
        } finally {
          await servers.close();
        }
      });
    });
  },
);
