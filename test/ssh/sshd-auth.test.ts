// Host keys and authentication against a real OpenSSH sshd: unknown/changed/revoked/hashed known_hosts entries,
// key files (plain, encrypted, rejected, unsafe permissions, wrong format) and ssh-agent (holding keys, empty,
// absent, too many keys). Each expectation is what an operator sees in the app.
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SshError } from '../../src/main/core/ssh/errors';
import { fingerprintSha256 } from '../../src/main/core/ssh/known-hosts';
import {
  keygen,
  keygenFingerprint,
  SSH_KEYGEN,
  sshdUnavailableReason,
  startSshAgent,
  startSshd,
  type Sshd,
  type SshAgent,
} from '../fixtures/sshd';
import {
  connection,
  demoAnswer,
  hostBlock,
  makeHome,
  memorySecrets,
  PASSPHRASE,
  recordingPrompts,
  resolverFor,
  sshHost,
  waitFor,
  type TestHome,
} from './sshd-helpers';

const run = promisify(execFile);
const skip = sshdUnavailableReason();
if (skip) console.warn(`[skipped] SSH tests against a real sshd: ${skip}`);

describe.skipIf(skip !== null)('against a real OpenSSH sshd: host keys and authentication', () => {
  let h: TestHome;
  let sshd: Sshd;
  const agents: SshAgent[] = [];

  beforeAll(async () => {
    h = await makeHome();
    sshd = await startSshd({
      answer: demoAnswer().answer,
      authorizedKeys: [h.keys.user.publicLine, h.keys.enc.publicLine, h.keys.agent.publicLine],
      maxAuthTries: 3,
    });
  });
  afterAll(async () => {
    for (const a of agents) await a.stop();
    await sshd?.stop();
    await h?.cleanup();
  });
  beforeEach(async () => {
    await fs.rm(h.knownHosts, { recursive: true, force: true });
    await h.writeConfig(hostBlock('gpu', sshd.port, h));
  });

  const trustHostKey = (): Promise<void> =>
    fs.writeFile(h.knownHosts, `[127.0.0.1]:${sshd.port} ${sshd.hostKeyLine}\n`);

  async function failureOf(conn: ReturnType<typeof connection>): Promise<SshError> {
    await conn.start();
    expect(conn.status.state).toBe('failed');
    const err = await conn.waitConnected(1000).then(
      () => null,
      (e: unknown) => e,
    );
    await conn.stop();
    expect(err).toBeInstanceOf(SshError);
    return err as SshError;
  }

  describe('host keys', () => {
    it('asks about an unknown key with the fingerprint ssh-keygen -lf prints, records it on accept, and runs commands', async () => {
      const { prompts, calls } = recordingPrompts({ hostKey: true });
      const { resolve } = resolverFor(h, prompts);
      const conn = connection(() => resolve(sshHost('gpu')));
      await conn.start();
      expect(conn.status.state).toBe('connected');

      expect(calls.hostKey).toHaveLength(1);
      expect(calls.hostKey[0]).toMatchObject({
        host: '127.0.0.1',
        port: sshd.port,
        keyType: 'ssh-ed25519',
        fingerprint: await keygenFingerprint(sshd.hostKeyPubFile),
        knownHostsFile: h.knownHosts,
        otherKnownKeys: [],
      });
      expect(await fs.readFile(h.knownHosts, 'utf8')).toBe(`[127.0.0.1]:${sshd.port} ${sshd.hostKeyLine}\n`);
      // OpenSSH's own tools find the recorded entry.
      const found = await run(SSH_KEYGEN, ['-F', `[127.0.0.1]:${sshd.port}`, '-f', h.knownHosts]);
      expect(found.stdout).toContain(sshd.hostKeyLine);

      // The command went through sshd's ForceCommand to the demo host's emulation.
      const r = await conn.exec('systemctl show sglang-decode.service -p ActiveState --no-pager');
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toContain('ActiveState=');
      await conn.stop();

      // Known now: the next connection does not ask.
      const again = connection(() => resolve(sshHost('gpu')));
      await again.start();
      expect(again.status.state).toBe('connected');
      expect(calls.hostKey).toHaveLength(1);
      await again.stop();
    });

    it('refuses when the operator rejects the unknown key and records nothing', async () => {
      const { prompts, calls } = recordingPrompts({ hostKey: false });
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(calls.hostKey).toHaveLength(1);
      expect(err.explained.code).toBe('host-key-rejected');
      expect(err.message).toContain(calls.hostKey[0].fingerprint);
      await expect(fs.stat(h.knownHosts)).rejects.toThrow(/ENOENT/);
    });

    it('refuses a changed key with both fingerprints, the file:line to check and the ssh-keygen -R command', async () => {
      const old = await keygen(path.join(h.root, `old_host_${Date.now()}`));
      await fs.writeFile(
        h.knownHosts,
        `# managed by hand\n[127.0.0.1]:${sshd.port} ${old.publicLine.split(' ').slice(0, 2).join(' ')}\n`,
      );
      const { prompts, calls } = recordingPrompts({ hostKey: true });
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(calls.hostKey).toHaveLength(0);
      expect(err.explained.code).toBe('host-key-changed');
      expect(err.message).toContain('REMOTE HOST IDENTIFICATION HAS CHANGED');
      expect(err.message).toContain(await keygenFingerprint(sshd.hostKeyPubFile));
      expect(err.message).toContain(await keygenFingerprint(old.publicFile));
      expect(err.message).toContain(`${h.knownHosts}:2`);
      expect(err.explained.hint).toContain(`ssh-keygen -f "${h.knownHosts}" -R "[127.0.0.1]:${sshd.port}"`);
    });

    it('refuses a key marked @revoked', async () => {
      await fs.writeFile(h.knownHosts, `@revoked * ${sshd.hostKeyLine}\n`);
      const { prompts, calls } = recordingPrompts({ hostKey: true });
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(calls.hostKey).toHaveLength(0);
      expect(err.explained.code).toBe('host-key-revoked');
      expect(err.message).toContain(`${h.knownHosts}:1`);
    });

    it('reads entries hashed by ssh-keygen -H, and hashes what it records when HashKnownHosts is yes', async () => {
      await trustHostKey();
      await run(SSH_KEYGEN, ['-H', '-f', h.knownHosts]);
      expect(await fs.readFile(h.knownHosts, 'utf8')).toMatch(/^\|1\|/);
      const { prompts, calls } = recordingPrompts({ hostKey: true });
      const conn = connection(() => resolverFor(h, prompts).resolve(sshHost('gpu')));
      await conn.start();
      expect(conn.status.state).toBe('connected');
      expect(calls.hostKey).toHaveLength(0);
      await conn.stop();

      await fs.rm(h.knownHosts);
      await h.writeConfig(
        hostBlock('gpu', sshd.port, h, [`IdentityFile ${h.keys.user.privateFile}`, 'HashKnownHosts yes']),
      );
      const second = connection(() => resolverFor(h, prompts).resolve(sshHost('gpu')));
      await second.start();
      expect(second.status.state).toBe('connected');
      await second.stop();
      const text = await fs.readFile(h.knownHosts, 'utf8');
      expect(text).toMatch(/^\|1\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+ ssh-ed25519 /);
      expect(text).not.toContain('127.0.0.1');
      const found = await run(SSH_KEYGEN, ['-F', `[127.0.0.1]:${sshd.port}`, '-f', h.knownHosts]);
      expect(found.stdout).toContain('ssh-ed25519');
    });

    it('warns about a known_hosts line that does not parse, naming file and line, and uses the rest', async () => {
      await fs.writeFile(h.knownHosts, `this line is broken\n[127.0.0.1]:${sshd.port} ${sshd.hostKeyLine}\n`);
      const { prompts, calls } = recordingPrompts({ hostKey: false });
      const { resolve, warnings } = resolverFor(h, prompts);
      const conn = connection(() => resolve(sshHost('gpu')));
      await conn.start();
      expect(conn.status.state).toBe('connected');
      expect(calls.hostKey).toHaveLength(0);
      expect(warnings.map((w) => w.message)).toEqual([expect.stringContaining(`${h.knownHosts}:1:`)]);
      await conn.stop();
    });

    it('fails closed when known_hosts exists but cannot be read', async () => {
      await fs.mkdir(h.knownHosts); // unreadable as a file, even for root
      const { prompts, calls } = recordingPrompts({ hostKey: true });
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(calls.hostKey).toHaveLength(0);
      expect(err.explained.code).toBe('known-hosts-unreadable');
      expect(err.message).toContain(h.knownHosts);
    });
  });

  describe('key files', () => {
    it('decrypts an encrypted key with the right passphrase, asking once per session', async () => {
      await trustHostKey();
      await h.writeConfig(hostBlock('gpu', sshd.port, h, [`IdentityFile ${h.keys.enc.privateFile}`]));
      const { prompts, calls } = recordingPrompts({ passphrases: [PASSPHRASE] });
      const { resolve } = resolverFor(h, prompts);
      const conn = connection(() => resolve(sshHost('gpu')));
      await conn.start();
      expect(conn.status.state).toBe('connected');
      expect(calls.passphrase).toEqual([
        expect.objectContaining({ keyFile: h.keys.enc.privateFile, attempt: 1, previousWasWrong: false }),
      ]);
      // A reconnect re-resolves the host: the passphrase is kept in memory, not asked again.
      conn.reconnectNow('test');
      await conn.waitConnected(10_000);
      expect(calls.passphrase).toHaveLength(1);
      await conn.stop();
      expect(sshd.log()).toContain(`Accepted publickey for root from 127.0.0.1`);
    });

    it('stops after three wrong passphrases, before connecting, with a specific message', async () => {
      await trustHostKey();
      await h.writeConfig(hostBlock('gpu', sshd.port, h, [`IdentityFile ${h.keys.enc.privateFile}`]));
      const { prompts, calls } = recordingPrompts({ passphrases: ['wrong 1', 'wrong 2', 'wrong 3'] });
      // Let sshd finish logging earlier sessions, so what follows is this test's alone.
      let seen = -1;
      await waitFor(
        'sshd log to settle',
        () => {
          const now = sshd.log().length;
          const stable = now === seen;
          seen = now;
          return stable;
        },
        5000,
        200,
      );
      const logBefore = sshd.log().length;
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(calls.passphrase.map((c) => [c.attempt, c.previousWasWrong])).toEqual([
        [1, false],
        [2, true],
        [3, true],
      ]);
      expect(err.explained.code).toBe('passphrase');
      expect(err.message).toContain(`wrong passphrase for key ${h.keys.enc.privateFile} (3 attempts)`);
      await new Promise((r) => setTimeout(r, 300));
      // sshd never saw a connection: it logs every one that ends before or after authentication.
      expect(sshd.log().slice(logBefore)).not.toMatch(/Connection closed|Accepted|authenticating|preauth/);
    });

    it('remembers a passphrase in the SecretStore when asked to, so a new session does not prompt', async () => {
      await trustHostKey();
      await h.writeConfig(hostBlock('gpu', sshd.port, h, [`IdentityFile ${h.keys.enc.privateFile}`]));
      const secrets = memorySecrets();
      const first = recordingPrompts({ passphrases: [{ passphrase: PASSPHRASE, remember: true }] });
      const a = connection(() => resolverFor(h, first.prompts, { secrets }).resolve(sshHost('gpu')));
      await a.start();
      expect(a.status.state).toBe('connected');
      expect(first.calls.passphrase[0].canRemember).toBe(true);
      expect([...secrets.data.values()]).toEqual([PASSPHRASE]);
      await a.stop();

      const second = recordingPrompts({});
      const b = connection(() => resolverFor(h, second.prompts, { secrets }).resolve(sshHost('gpu')));
      await b.start();
      expect(b.status.state).toBe('connected');
      expect(second.calls.passphrase).toHaveLength(0);
      await b.stop();
    });

    it('names the key the server rejected', async () => {
      await trustHostKey();
      await h.writeConfig(hostBlock('gpu', sshd.port, h, [`IdentityFile ${h.keys.other.privateFile}`]));
      const { prompts } = recordingPrompts({});
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(err.explained.code).toBe('auth-failed');
      expect(err.message).toContain(h.keys.other.privateFile);
      expect(err.message).toContain(await keygenFingerprint(h.keys.other.publicFile));
      expect(err.explained.hint).toContain('authorized_keys');
    });

    it('refuses a private key readable by others, naming the file and the chmod to run', async () => {
      await trustHostKey();
      const loose = path.join(h.root, 'loose_key');
      await fs.copyFile(h.keys.user.privateFile, loose);
      await fs.chmod(loose, 0o644);
      await h.writeConfig(hostBlock('gpu', sshd.port, h, [`IdentityFile ${loose}`]));
      const { prompts } = recordingPrompts({});
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(err.explained.code).toBe('bad-key');
      expect(err.message).toContain(`permissions 0644 for private key ${loose}`);
      expect(err.explained.hint).toBe(`Run: chmod 600 "${loose}"`);
    });

    it('refuses a file that is not a private key, naming it', async () => {
      await trustHostKey();
      const junk = path.join(h.root, 'not_a_key');
      await fs.writeFile(junk, 'hello, I am not a key\n', { mode: 0o600 });
      await h.writeConfig(hostBlock('gpu', sshd.port, h, [`IdentityFile ${junk}`]));
      const { prompts } = recordingPrompts({});
      const err = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(err.explained.code).toBe('bad-key');
      expect(err.message).toContain(`${junk} is not a private key`);
    });
  });

  describe('ssh-agent', () => {
    it('authenticates with a key held by ssh-agent', async () => {
      await trustHostKey();
      const agent = await startSshAgent(h.root);
      agents.push(agent);
      await agent.add(h.keys.agent.privateFile);
      await h.writeConfig(hostBlock('gpu', sshd.port, h, []));
      const { prompts } = recordingPrompts({});
      const conn = connection(() =>
        resolverFor(h, prompts, { agentSocket: agent.socket }).resolve(sshHost('gpu')),
      );
      await conn.start();
      expect(conn.status.state).toBe('connected');
      await conn.stop();
      const agentFp = await keygenFingerprint(h.keys.agent.publicFile);
      expect(sshd.log()).toContain(`Accepted publickey for root from 127.0.0.1`);
      expect(sshd.log()).toContain(agentFp);
    });

    it('says the agent is empty when it holds no keys and nothing else is configured', async () => {
      await trustHostKey();
      const agent = await startSshAgent(h.root);
      agents.push(agent);
      await h.writeConfig(hostBlock('gpu', sshd.port, h, []));
      const { prompts } = recordingPrompts({});
      const err = await failureOf(
        connection(() => resolverFor(h, prompts, { agentSocket: agent.socket }).resolve(sshHost('gpu'))),
      );
      expect(err.explained.code).toBe('agent-empty');
      expect(err.message).toContain('holds no keys');
      expect(err.explained.hint).toContain('ssh-add');
    });

    it('says there is no agent when SSH_AUTH_SOCK is unset or points nowhere', async () => {
      await trustHostKey();
      await h.writeConfig(hostBlock('gpu', sshd.port, h, []));
      const { prompts } = recordingPrompts({});
      const unset = await failureOf(connection(() => resolverFor(h, prompts).resolve(sshHost('gpu'))));
      expect(unset.explained.code).toBe('agent-unavailable');
      expect(unset.message).toContain('SSH_AUTH_SOCK is not set');

      const gone = path.join(h.root, 'no-agent-here.sock');
      const dead = await failureOf(
        connection(() => resolverFor(h, prompts, { agentSocket: gone }).resolve(sshHost('gpu'))),
      );
      expect(dead.explained.code).toBe('agent-unavailable');
      expect(dead.message).toContain(`ssh-agent is not reachable (SSH_AUTH_SOCK=${gone})`);
    });

    it('reports too many authentication failures, and IdentitiesOnly avoids them', async () => {
      await trustHostKey();
      const agent = await startSshAgent(h.root);
      agents.push(agent);
      // sshd runs with MaxAuthTries 3; the agent offers four keys it does not accept before the right one.
      for (let i = 0; i < 4; i++) {
        const k = await keygen(path.join(h.root, `stranger_${i}_${Date.now()}`));
        await agent.add(k.privateFile);
      }
      await agent.add(h.keys.agent.privateFile);
      await h.writeConfig(hostBlock('gpu', sshd.port, h, []));
      const { prompts } = recordingPrompts({});
      const err = await failureOf(
        connection(() => resolverFor(h, prompts, { agentSocket: agent.socket }).resolve(sshHost('gpu'))),
      );
      expect(err.explained.code).toBe('auth-too-many');
      expect(err.explained.hint).toContain('IdentitiesOnly yes');

      // IdentitiesOnly: only the configured identity is offered (through the agent, which holds it).
      await h.writeConfig(
        hostBlock('gpu', sshd.port, h, [`IdentityFile ${h.keys.agent.privateFile}`, 'IdentitiesOnly yes']),
      );
      const conn = connection(() =>
        resolverFor(h, prompts, { agentSocket: agent.socket }).resolve(sshHost('gpu')),
      );
      await conn.start();
      expect(conn.status.state).toBe('connected');
      await conn.stop();
    });
  });

  it('fingerprints match ssh-keygen for the host key blob itself', async () => {
    const blob = Buffer.from(sshd.hostKeyLine.split(' ')[1], 'base64');
    expect(fingerprintSha256(blob)).toBe(await keygenFingerprint(sshd.hostKeyPubFile));
  });
});
