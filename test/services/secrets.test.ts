// Secrets planted where a real host would leak them — a journal line with an API key and a bearer token,
// a passphrase typed into an SSH prompt — never reach the recording, its exports, or the process output.
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { demoSimOf } from '../../src/main/compose';
import { extract } from 'tar';
import type { DeploymentConfig } from '@shared/domain';
import { runCli } from '../../src/main/cli/main';
import {
  SERVER_ARGS_HARMLESS,
  SERVER_ARGS_SECRETS,
  serverArgsLineWithSecrets,
} from '../recording/server-args-line';
import { watchJournal } from '../support/journal-lines';

const API_KEY = 'sk-planted0123456789abcdefSECRET';
const BEARER = 'eyJplantedBearerToken0123456789';
const NOTE_LIVE = 'PLANTEDnoteWhileRecording77';
const NOTE_LATER = 'PLANTEDnoteAfterwards88';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown();
  app = undefined;
  vi.restoreAllMocks();
});

function unitOf(d: DeploymentConfig, role: string): string {
  const unit = d.services.find((x) => x.role === role)?.unit;
  if (!unit) throw new Error(`deployment ${d.id} has no ${role} service`);
  return unit;
}

/** Every file under `root`, recursively, as text: gzip files decompressed (also when cut at a flush point). */
function filesUnder(root: string): string[] {
  return (readdirSync(root, { recursive: true }) as string[])
    .map((f) => join(root, f))
    .filter((p) => statSync(p).isFile());
}

function textOf(path: string): string {
  const b = readFileSync(path);
  return (b[0] === 0x1f && b[1] === 0x8b ? gunzipSync(b, { finishFlush: 2 }) : b).toString('latin1');
}

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
    // Once the decode unit's journal is followed live, plant the secrets in it.
    const journal = watchJournal(app.core, s.deployment.id, unitOf(s.deployment, 'decode'));
    await journal.live;
    const sim = demoSimOf(app.core)!;
    sim.log('decode', `request failed: curl -H "Authorization: Bearer ${BEARER}" --api-key ${API_KEY}`);
    app.core.addEvent(s.deployment.id, {
      ts: app.core.now,
      kind: 'info',
      severity: 'info',
      title: `note OPENAI_API_KEY=${API_KEY}`,
    });
    await journal.lines('the planted line', (l) => l.message.includes('request failed'), 1, 20_000);
    journal.dispose();
    const id = (await app.handlers.getRecordingStatus({})).active[0].sessionId!;
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
    await expect
      .poll(async () => (await app!.handlers.listSessions({}))[0]?.state, { timeout: 10_000 })
      .toBe('complete');
    const rec = gunzipSync(readFileSync(join(dir, 'recordings', `${id}.pdrec.jsonl.gz`))).toString('utf8');
    expect(rec).toContain('request failed');
    const csv = await app.handlers.exportSession({ id, format: 'csv' });
    const raw = await app.handlers.exportSession({ id, format: 'csv-raw' });
    const bundle = await app.handlers.exportSession({ id, format: 'bundle' });
    const texts = [
      rec,
      readFileSync(csv.path, 'utf8'),
      readFileSync(raw.path, 'utf8'),
      gunzipSync(readFileSync(bundle.path)).toString('latin1'),
      logged.join('\n'),
    ];
    for (const t of texts) {
      expect(t).not.toContain(API_KEY);
      expect(t).not.toContain(BEARER);
    }
  }, 60_000);

  it("SGLang's ServerArgs start-up line, notes and events: no planted secret in any file the app writes or any output; every file private", async () => {
    const logged: string[] = [];
    for (const m of ['log', 'warn', 'error', 'info', 'debug'] as const)
      vi.spyOn(console, m).mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' ')));
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
      vi.spyOn(stream, 'write').mockImplementation((chunk: unknown, ...rest: unknown[]) => {
        logged.push(String(chunk));
        return write(chunk, ...rest);
      });
    }
    const dir = mkdtempSync(join(tmpdir(), 'pdc-secrets-all-'));
    app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir });
    const s = await app.core.openDemo({});
    await expect
      .poll(async () => (await app!.handlers.getRecordingStatus({})).active[0]?.state, { timeout: 10_000 })
      .toBe('recording');
    const journal = watchJournal(app.core, s.deployment.id, unitOf(s.deployment, 'decode'));
    await journal.live;
    const id = (await app.handlers.getRecordingStatus({})).active[0].sessionId!;
    const planted: Record<string, string> = {
      ...SERVER_ARGS_SECRETS,
      API_KEY,
      BEARER,
      NOTE_LIVE,
      NOTE_LATER,
    };
    // What a decode server prints when it starts, with every secret-bearing field of its configuration set (short
    // enough for journalctl -o json to show it), and the full line quoted in an event's detail.
    demoSimOf(app.core)!.log('decode', serverArgsLineWithSecrets({ full: false }));
    app.core.addEvent(s.deployment.id, {
      ts: app.core.now,
      kind: 'info',
      severity: 'warning',
      title: 'decode restarted by systemd',
      detail: serverArgsLineWithSecrets(),
    });
    demoSimOf(app.core)!.log('decode', `retrying with Authorization: Bearer ${BEARER}`);
    // An operator pastes a command line into a note while recording…
    await app.handlers.annotateSession({
      id,
      ts: app.core.now,
      text: `restarted by hand: python -m sglang.launch_server --api-key ${NOTE_LIVE} --port 30200`,
    });
    app.core.addEvent(s.deployment.id, {
      ts: app.core.now,
      kind: 'action',
      severity: 'info',
      title: 'restart decode',
      detail: `ExecStart=… api_key='${API_KEY}'`,
    });
    await journal.lines(
      'the bearer line',
      (l) => l.message.includes('retrying with Authorization'),
      1,
      20_000,
    );
    journal.dispose();
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
    await expect
      .poll(async () => (await app!.handlers.listSessions({}))[0]?.state, { timeout: 10_000 })
      .toBe('complete');
    // …and another one afterwards, into the session's sidecar.
    await app.handlers.annotateSession({
      id,
      ts: app.core.now,
      text: `password='${NOTE_LATER}' was the old one`,
    });

    const recording = join(dir, 'recordings', `${id}.pdrec.jsonl.gz`);
    const recText = textOf(recording);
    expect(recText).toContain('server_args=ServerArgs(');
    expect(recText).toContain('restarted by hand');
    // The note was recorded once, not twice (the overview's copy of the timeline, kinds "o.…", aside).
    const dataLines = recText.split('\n').filter((l) => !l.startsWith('{"k":"o.'));
    expect(dataLines.filter((l) => l.includes('restarted by hand'))).toHaveLength(1);
    for (const h of SERVER_ARGS_HARMLESS) expect(recText, h).toContain(h);

    const csv = await app.handlers.exportSession({ id, format: 'csv' });
    await app.handlers.exportSession({ id, format: 'csv-raw' });
    const om = await app.handlers.exportSession({ id, format: 'openmetrics' });
    const bundle = await app.handlers.exportSession({ id, format: 'bundle' });
    // Opening it in review writes the review cache (and the recent list).
    await app.handlers.openSessionReview({ id });
    const cacheDir = join(dir, 'cache', 'review');
    await expect
      .poll(() => filesUnder(cacheDir).some((f) => f.endsWith('.rvc')), { timeout: 20_000 })
      .toBe(true);
    await expect
      .poll(() => filesUnder(cacheDir).some((f) => f.endsWith('.journal.json.gz')), { timeout: 20_000 })
      .toBe(true);

    const bundleDir = join(mkdtempSync(join(tmpdir(), 'pdc-secrets-bundle-')), 'x');
    mkdirSync(bundleDir);
    await extract({ file: bundle.path, cwd: bundleDir });
    // The terminal's view of the session (`pd-console open`, text and --json, with the notes from the sidecar).
    let cliOut = '';
    for (const args of [
      ['open', recording],
      ['open', recording, '--json'],
    ])
      await runCli(args, {
        stdout: (t) => (cliOut += t),
        stderr: (t) => (cliOut += t),
        readStdin: async () => '',
      });
    expect(cliOut).toContain('restarted by hand');
    const outputs: [string, string][] = [
      ['pd-console open (text and --json)', cliOut],
      ...filesUnder(dir).map((f): [string, string] => [f.slice(dir.length + 1), textOf(f)]),
      ...filesUnder(bundleDir).map((f): [string, string] => [
        `bundle:${f.slice(bundleDir.length + 1)}`,
        textOf(f),
      ]),
      ['console, stdout and stderr', logged.join('\n')],
    ];
    const names = outputs.map(([n]) => n);
    for (const want of [
      /^recordings\/.*\.pdrec\.jsonl\.gz$/,
      /^recordings\/.*\.meta\.json$/,
      /\.signals\.csv$/,
      /\.raw\.csv$/,
      /\.om\.txt$/,
      /\.incident\.tar\.gz$/,
      /\.rvc$/,
      /journal\.json\.gz$/,
      /review-recent\.json$/,
      /^bundle:.*recording\.pdrec\.jsonl\.gz$/,
      /^bundle:.*journal\.log$/,
    ])
      expect(
        names.some((n) => want.test(n)),
        String(want),
      ).toBe(true);
    const leaks: string[] = [];
    for (const [name, text] of outputs)
      for (const [what, secret] of Object.entries(planted))
        if (text.includes(secret)) leaks.push(`${what} in ${name}`);
    process.stdout.write(
      `[secrets] ${Object.keys(planted).length} planted secrets, ${outputs.length} outputs checked (${names.join(', ')}): ${leaks.length} found\n`,
    );
    expect(leaks).toEqual([]);
    expect(om.bytes).toBeGreaterThan(0);
    expect(csv.bytes).toBeGreaterThan(0);

    // Private to the user: every file 0600, every folder 0700 (the data folder included).
    const modes = [dir, ...(readdirSync(dir, { recursive: true }) as string[]).map((f) => join(dir, f))].map(
      (p) => {
        const st = statSync(p);
        return `${p.slice(dir.length) || '/'} ${(st.mode & 0o777).toString(8)}`;
      },
    );
    const wrong = modes.filter(
      (m) =>
        !/ (600|700)$/.test(m) || (m.endsWith('700') && !statSync(join(dir, m.split(' ')[0])).isDirectory()),
    );
    expect(wrong, modes.join('\n')).toEqual([]);
  }, 90_000);

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
