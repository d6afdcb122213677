// Secrets planted where a real host would leak them — a journal line with an API key and a bearer token,
// a passphrase typed into an SSH prompt — never reach the recording, its exports, or the process output.
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { demoSimOf } from '../../src/main/compose';

const API_KEY = 'sk-planted0123456789abcdefSECRET';
const BEARER = 'eyJplantedBearerToken0123456789';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown();
  app = undefined;
  vi.restoreAllMocks();
});

describe('secrets stay out of recordings, exports and logs', () => {
  it('redacts a planted API key and bearer token from journal lines and events', async () => {
    const logged: string[] = [];
    for (const m of ['log', 'warn', 'error', 'info'] as const)
      vi.spyOn(console, m).mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' ')));
    const dir = mkdtempSync(join(tmpdir(), 'pdc-secrets-'));
    app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir });
    const s = await app.core.openDemo({});
    await expect
      .poll(async () => (await app!.handlers.getRecordingStatus({})).active[0]?.state, { timeout: 10_000 })
      .toBe('recording');
    // Give the journal follower its first poll, then plant the secrets in the decode unit's journal.
    await new Promise((r) => setTimeout(r, 2500));
    const sim = demoSimOf(app.core)!;
    sim.log('decode', `request failed: curl -H "Authorization: Bearer ${BEARER}" --api-key ${API_KEY}`);
    app.core.addEvent(s.deployment.id, {
      ts: app.core.now,
      kind: 'info',
      severity: 'info',
      title: `note OPENAI_API_KEY=${API_KEY}`,
    });
    await new Promise((r) => setTimeout(r, 5000));
    const id = (await app.handlers.getRecordingStatus({})).active[0].sessionId!;
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
    await expect
      .poll(async () => (await app!.handlers.listSessions({}))[0]?.state, { timeout: 10_000 })
      .toBe('complete');
    const rec = gunzipSync(readFileSync(join(dir, 'recordings', `${id}.pdrec.jsonl.gz`))).toString('utf8');
    expect(rec).toContain('request failed');
    const csv = await app.handlers.exportSession({ id, format: 'csv' });
    const bundle = await app.handlers.exportSession({ id, format: 'bundle' });
    const texts = [
      rec,
      readFileSync(csv.path, 'utf8'),
      gunzipSync(readFileSync(bundle.path)).toString('latin1'),
      logged.join('\n'),
    ];
    for (const t of texts) {
      expect(t).not.toContain(API_KEY);
      expect(t).not.toContain(BEARER);
    }
  }, 60_000);

  it('a passphrase answered through the API is not logged or stored anywhere in the data folder', async () => {
    const logged: string[] = [];
    for (const m of ['log', 'warn', 'error', 'info'] as const)
      vi.spyOn(console, m).mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' ')));
    const dir = mkdtempSync(join(tmpdir(), 'pdc-secrets-'));
    const home = join(dir, 'home');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'config'), '');
    app = createApp({ shell: 'browser', dataDir: join(dir, 'data'), homeDir: home, record: false });
    const PASS = 'correct-horse-planted-passphrase';
    mkdirSync(join(dir, 'data'), { recursive: true });
    let asked = 0;
    app.core.on('sshPrompt', (p) => {
      if (p.kind === 'passphrase') asked++;
      void app!.handlers.answerSshPrompt({ promptId: p.promptId, secret: PASS });
    });
    // An encrypted key the prompt is for; connecting to a dead port fails after the passphrase is asked.
    const { ed25519 } = await import('../../src/main/demo/keys');
    const pair = ed25519('', { passphrase: 'something-else', cipher: 'aes256-ctr', rounds: 16 });
    writeFileSync(join(home, '.ssh', 'id_enc'), pair.private, { mode: 0o600 });
    const err = await app.handlers
      .connectHost({
        host: {
          id: 'x',
          label: 'x',
          kind: 'ssh',
          hostname: '127.0.0.1',
          port: 1,
          user: 'u',
          identityFile: join(home, '.ssh', 'id_enc'),
        },
      })
      .then(
        () => null,
        (e: Error) => e,
      );
    // The wrong passphrase was asked for and refused before any connection attempt.
    expect(asked).toBeGreaterThan(0);
    expect(err?.message).toMatch(/passphrase/i);
    expect(err?.message ?? '').not.toContain(PASS);
    const files = readdirSync(join(dir, 'data'), { recursive: true }) as string[];
    for (const f of files) {
      try {
        expect(readFileSync(join(dir, 'data', f), 'latin1')).not.toContain(PASS);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
      }
    }
    expect(logged.join('\n')).not.toContain(PASS);
  }, 30_000);
});
