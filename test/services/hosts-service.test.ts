// Connecting to a saved host the way an operator would: the unknown host key is put to the UI as a prompt
// with the SHA256 fingerprint, nothing connects until it is accepted, and then discovery finds the units.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { utils } from 'ssh2';
import { createApp, type App } from '../../src/main/compose';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import type { SshPromptEvent } from '../../src/shared/api/hosts';

let app: App | undefined;
let demo: DemoHost | undefined;
afterEach(async () => {
  await app?.shutdown();
  await demo?.stop();
});

function fingerprint(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

async function setup(): Promise<{ a: App; d: DemoHost; home: string; hostId: string }> {
  const d = (demo = await startDemoHost({}));
  const home = mkdtempSync(join(tmpdir(), 'pdc-home-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const key = join(home, '.ssh', 'id_demo');
  writeFileSync(key, d.clientPrivateKey, { mode: 0o600 });
  chmodSync(key, 0o600);
  writeFileSync(join(home, '.ssh', 'config'), '');
  const a = (app = createApp({
    shell: 'browser',
    intervalMs: 500,
    dataDir: join(home, 'data'),
    homeDir: home,
    record: false,
  }));
  const host = await a.handlers.addHost({
    host: {
      label: 'gpu-test',
      kind: 'ssh',
      hostname: '127.0.0.1',
      port: d.port,
      user: d.username,
      identityFile: key,
    },
  });
  return { a, d, home, hostId: host.id };
}

describe('hosts and SSH prompts', () => {
  it('asks about an unknown host key with its fingerprint, connects after accept and remembers the key', async () => {
    const { a, d, home, hostId } = await setup();
    const prompts: SshPromptEvent[] = [];
    a.core.on('sshPrompt', (p) => {
      prompts.push(p);
      void a.handlers.answerSshPrompt({ promptId: p.promptId, accept: true });
    });
    const host = (await a.handlers.listHosts({})).hosts.find((h) => h.id === hostId)!;
    const summary = await a.handlers.connectHost({ host });
    expect(prompts).toHaveLength(1);
    expect(prompts[0].kind).toBe('hostKey');
    expect(prompts[0].info.fingerprint).toBe(fingerprint(d.hostKeyPublic));
    expect(summary.deployment.services.map((s) => s.unit).sort()).toEqual([
      'sglang-decode.service',
      'sglang-prefill.service',
      'sglang-router.service',
    ]);
    const known = readFileSync(join(home, '.ssh', 'known_hosts'), 'utf8');
    const keyB64 = (utils.parseKey(d.hostKeyLine) as { getPublicSSH(): Buffer })
      .getPublicSSH()
      .toString('base64');
    // Plain `[host]:port`, or hashed when the system's ssh_config says HashKnownHosts yes (Debian's does).
    expect(known.includes(`[127.0.0.1]:${d.port}`) || /^\|1\|/m.test(known)).toBe(true);
    expect(known).toContain(keyB64);
  });

  it('refusing the host key refuses the connection with a message', async () => {
    const { a, hostId } = await setup();
    a.core.on('sshPrompt', (p) => void a.handlers.answerSshPrompt({ promptId: p.promptId, accept: false }));
    const host = (await a.handlers.listHosts({})).hosts.find((h) => h.id === hostId)!;
    await expect(a.handlers.connectHost({ host })).rejects.toThrow(/host key/i);
    expect(await a.handlers.listDeployments({})).toEqual([]);
  });

  it('reports a broken hosts file with its path and line instead of resetting it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'pdc-home-'));
    mkdirSync(join(home, 'data'));
    writeFileSync(join(home, 'data', 'hosts.json'), '{\n  "version": 1,\n  "hosts": [ oops ]\n}\n');
    app = createApp({ shell: 'browser', dataDir: join(home, 'data'), homeDir: home, record: false });
    const r = await app.handlers.listHosts({});
    expect(r.error?.message).toMatch(/hosts\.json:3:\d+/);
    expect(readFileSync(join(home, 'data', 'hosts.json'), 'utf8')).toContain('oops');
  });
});
