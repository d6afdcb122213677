// Text a host, a server or a file hands the CLI reaches the terminal with its control characters shown, not acting:
// an escape sequence in a Prometheus error body, a /metrics error page, a journal line or a recording's host label
// set the window title and cleared the screen (ESC ] 0 ; … BEL, ESC [ 2 J, the C1 CSI), a carriage return or a
// newline forged a line of output, a bidi override reversed what follows. Each command gets such a string from
// where it really comes from; stdout and stderr must carry none of those characters raw, every line the CLI prints
// keeps its shape, and --json still parses to the very string that was sent. URLs are printed without userinfo.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { SessionStore } from '../../src/main/core/recording';
import { restartCommand } from '../../src/main/cli/restart-command';
import { ALIAS, startFutureHost, sshdUnavailableReason, type FutureHost } from '../support/future-host';
import { captureRestartIo } from '../support/restart-io';
import { openFixture, type Fixture } from '../actions/demo-fixture';
import { cliCaptured } from './run-on-app';

/** Sets the window title, clears the screen (ESC and C1 CSI), returns to column 0, reverses, forges a line. */
const HOSTILE = 'evil\u202e\x1b]0;pwned\x07\x1b[2J\u009b31m\rforged\nstatus: all healthy';
/** What acts on a terminal instead of showing: C0 but tab and newline, DEL, C1, bidi controls, line separators. */
const ACTS =
  // eslint-disable-next-line no-control-regex -- the characters this test looks for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

function shownOnly(text: string): void {
  const hit = ACTS.exec(text);
  expect(hit, hit ? `U+${hit[0].charCodeAt(0).toString(16)} raw in:\n${text}` : '').toBeNull();
  // No line of output is the forged one.
  expect(text).not.toMatch(/^status: all healthy/m);
}

const sshdSkip = sshdUnavailableReason();
if (sshdSkip) console.warn(`[skipped] hostile /metrics error page from a real sshd host: ${sshdSkip}`);

describe.skipIf(sshdSkip !== null)('a host whose decode /metrics answers an error page with escapes', () => {
  let fh: FutureHost;
  let app: App;
  let dir: string;
  beforeAll(async () => {
    fh = await startFutureHost({ decodeMetrics: { status: 500, body: HOSTILE } });
    dir = mkdtempSync(join(tmpdir(), 'pd-cli-hostile-'));
    app = createApp({ shell: 'cli', intervalMs: 500, dataDir: dir, record: false, homeDir: fh.home });
    await app.handlers.connectHost({ host: fh.host });
  }, 60_000);
  afterAll(async () => {
    await app?.shutdown();
    await fh?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const cli = (argv: string[]) => cliCaptured(argv, { app, sshHome: fh.home });

  it('status, kv and metrics show it escaped, on the line it belongs to', async () => {
    const status = await cli(['status', '--host', ALIAS, '--wait', '0']);
    shownOnly(status.out + status.err);
    expect(status.out).toMatch(/^ +metrics: .*HTTP 500.*evil\\u202e.*\\u009b31m/m);
    const kv = await cli(['kv', '--host', ALIAS]);
    shownOnly(kv.out + kv.err);
    expect(kv.out).toMatch(/decode: n\/a \(.*evil\\u202e/);
    const metrics = await cli(['metrics', '--service', 'decode', '--host', ALIAS]);
    shownOnly(metrics.out + metrics.err);
    expect(metrics.out + metrics.err).toContain('\\u009b31m');
  }, 60_000);

  it('status --json is valid JSON that reads back the very characters the host sent', async () => {
    const r = await cli(['status', '--host', ALIAS, '--json', '--wait', '0']);
    shownOnly(r.out);
    const decode = (JSON.parse(r.out) as { services: { role: string; error: string }[] }).services.find(
      (s) => s.role === 'decode',
    )!;
    expect(decode.error).toContain('evil\u202e');
    expect(decode.error).toContain('\u009b31m');
  }, 60_000);
});

describe('a Prometheus that answers HTTP 500 with escapes, given with a password in its URL', () => {
  let prom: http.Server;
  let url = '';
  beforeAll(async () => {
    prom = http.createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(HOSTILE);
    });
    await new Promise<void>((resolve) => prom.listen(0, '127.0.0.1', resolve));
    url = `http://admin:S3CRET@127.0.0.1:${(prom.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => prom.close(() => resolve())));

  it('history shows the body escaped and the URL without its password, in text and --json', async () => {
    const argv = ['history', 'decode.kv_ratio', '--since', '1h', '--prometheus', url, '--direct'];
    const text = await cliCaptured(argv);
    shownOnly(text.out + text.err);
    expect(text.out + text.err).toContain('evil\\u202e\\u001b]0;pwned\\u0007');
    expect(text.out + text.err).not.toContain('S3CRET');
    // The password moved to the secret store: the URL is shown without any user-info.
    expect(text.out + text.err).toMatch(/http:\/\/127\.0\.0\.1:\d+/);
    expect(text.out + text.err).not.toContain('ops@');
    const json = await cliCaptured([...argv, '--json']);
    shownOnly(json.out);
    expect(json.out).not.toContain('S3CRET');
    const problems = (JSON.parse(json.out) as { problems: { message: string }[] }).problems;
    expect(problems.map((p) => p.message).join('\n')).toContain('evil\u202e\x1b]0;pwned\x07');
  }, 60_000);
});

describe('a recording whose host label, names and notes carry escapes and newlines', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pd-cli-hostile-rec-'));
    const store = new SessionStore(dir);
    const at = Date.UTC(2026, 0, 5, 8);
    const { path, writer } = await store.start({
      startedAt: at,
      host: { id: 'gpu1', label: HOSTILE, kind: 'ssh', hostname: 'gpu1' },
      deployment: {
        id: 'gpu1',
        name: HOSTILE,
        services: [
          { role: 'decode', hostId: 'gpu1', unit: 'sglang-decode.service', apiUrl: 'http://10.0.0.2:30000' },
        ],
      },
      appVersion: '0.1.0-test',
    });
    writer.appendEvent({ id: 'e1', ts: at + 1000, kind: 'annotation', severity: 'info', title: HOSTILE });
    await writer.close();
    file = path;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('open prints each on its one line, escaped; --json reads back the original', async () => {
    const text = await cliCaptured(['open', file]);
    expect(text.code, text.err).toBe(0);
    shownOnly(text.out + text.err);
    const shown = 'evil\\u202e\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\rforged\\nstatus: all healthy';
    // The session's name: the deployment's on the host's.
    expect(text.out.split('\n')[0]).toBe(`${shown} on ${shown}`);
    expect(text.out).toMatch(/^host {8}evil\\u202e.*\\nstatus: all healthy \(gpu1\) \[ssh\]$/m);
    const json = await cliCaptured(['open', file, '--json']);
    shownOnly(json.out);
    const j = JSON.parse(json.out) as { host: { label: string }; events: { title: string }[] };
    expect(j.host.label).toBe(HOSTILE);
    expect(j.events[0].title).toBe(HOSTILE);
  });
});

describe('a journal line with escapes while a restart is followed', () => {
  let f: Fixture | undefined;
  afterAll(() => f?.stop());

  it('restart prints it escaped, on its own line', async () => {
    f = await openFixture();
    const fx = f;
    const app = {
      core: fx.core,
      handlers: { ...fx.core.handlers(), ...fx.restart.handlers(), ...fx.roll.handlers() },
      shutdown: async () => undefined,
    };
    let logged = false;
    const io = captureRestartIo();
    const stdout = io.stdout;
    io.stdout = (s) => {
      stdout(s);
      // Written by the server once the restart is under way: the follow shows it with the unit's journal.
      if (!logged && /loading weights/.test(s)) {
        logged = true;
        fx.demo.sim.log('decode', HOSTILE);
      }
    };
    expect(await restartCommand(['decode', '--yes'], io, { app })).toBe(0);
    shownOnly(io.out() + io.err());
    // A line redrawn with carriage returns shows its last redraw, as journald's reader does for progress bars;
    // a message of several lines shows each as a journal line (a traceback), marked as the journal's.
    expect(io.out()).toContain('    decode  │ forged\n    decode  │ status: all healthy\n');
  }, 60_000);
});

describe('an exposition on stdin with escapes', () => {
  it('parse reports where it fails without passing them on', async () => {
    let out = '';
    let err = '';
    const { runCli } = await import('../../src/main/cli/main');
    const code = await runCli(['parse', '--format', 'prometheus'], {
      stdout: (s) => (out += s),
      stderr: (s) => (err += s),
      readStdin: async () => `m{a="1"} 1\n${HOSTILE}\n`,
    });
    expect(code).toBe(1);
    shownOnly(out + err);
  });
});
