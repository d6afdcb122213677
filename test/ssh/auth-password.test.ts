// Password as the last resort, through the prompt interface: asked only when no key or agent identity is
// available, never stored, and a refusal says what was tried. Runs against the demo host's SSH server (ssh2),
// which, unlike the test sshd (no PAM), accepts passwords.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshError } from '../../src/main/core/ssh/errors';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { connection, recordingPrompts, sshHost } from './sshd-helpers';
import { createSshResolver } from '../../src/main/core/ssh/resolve-host';
import type { SshPrompts } from '../../src/main/core/ssh/prompts';

let demo: DemoHost;
let home: string;

beforeAll(async () => {
  demo = await startDemoHost();
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-ssh-pw-'));
  await fs.mkdir(path.join(home, '.ssh'));
  await fs.writeFile(
    path.join(home, '.ssh', 'config'),
    `Host demo\n  HostName 127.0.0.1\n  Port ${demo.port}\n  User ${demo.username}\n  UserKnownHostsFile ~/.ssh/known_hosts\n`,
  );
  await fs.writeFile(
    path.join(home, '.ssh', 'known_hosts'),
    `[127.0.0.1]:${demo.port} ${demo.hostKeyLine}\n`,
  );
});
afterAll(async () => {
  await demo?.stop();
  await fs.rm(home, { recursive: true, force: true });
});

const resolverWith = (prompts: SshPrompts) =>
  createSshResolver({
    prompts,
    sshBinary: null,
    homeDir: home,
    env: {},
    globalKnownHostsFiles: [],
    configFile: path.join(home, '.ssh', 'config'),
  });

describe('password authentication', () => {
  it('asks for the password when nothing else can log in, and connects with the right one', async () => {
    const { prompts, calls } = recordingPrompts({ password: demo.password });
    const conn = connection(() => resolverWith(prompts)(sshHost('demo')));
    await conn.start();
    expect(conn.status.state).toBe('connected');
    expect(calls.password).toEqual([
      expect.objectContaining({
        kind: 'password',
        user: demo.username,
        host: '127.0.0.1',
        port: demo.port,
        echo: false,
      }),
    ]);
    await conn.stop();
  });

  it('says the password was refused, and does not retry by itself', async () => {
    const { prompts, calls } = recordingPrompts({ password: 'not-the-password' });
    const conn = connection(() => resolverWith(prompts)(sshHost('demo')));
    await conn.start();
    expect(conn.status.state).toBe('failed');
    const err = (await conn.waitConnected(100).catch((e: unknown) => e)) as SshError;
    expect(err.explained.code).toBe('auth-failed');
    expect(err.message).toContain('offered password');
    await new Promise((r) => setTimeout(r, 300));
    expect(calls.password).toHaveLength(1);
    await conn.stop();
  });

  it('treats a cancelled prompt as "no password", not as an empty one', async () => {
    const { prompts, calls } = recordingPrompts({ password: null });
    const conn = connection(() => resolverWith(prompts)(sshHost('demo')));
    await conn.start();
    expect(calls.password).toHaveLength(1);
    expect(conn.status.state).toBe('failed');
    const err = (await conn.waitConnected(100).catch((e: unknown) => e)) as SshError;
    expect(err.explained.code).toMatch(/^agent-unavailable|auth-failed$/);
    await conn.stop();
  });
});
