// Issue 13 item 6 in real Chromium (browser mode): a host whose decode server and router serve families no
// supported era lists. The Metrics page keeps charting what it recognises and shows, per service, a quiet
// "N families not understood by this PD Console version" that opens to the names. The host is a real OpenSSH
// sshd (test/support/future-host.ts, in its own process) added on the start page as an operator would; its
// /metrics are a real era's fixture plus hypothetical future families — the demo host never invents a family.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test, expect, type Browser } from '@playwright/test';
import { launchChromium } from './support/browser';
import { shot } from './support/shots';
import { startWebApp, type WebApp } from './support/web-app';

// The same names as test/signals/future-fixture.ts (importing it would load the parser into the runner).
const FUTURE_SERVER_UNKNOWN = ['sglang:kv_offload_bytes_total', 'sglang:spec_decode_accept_length'];
const FUTURE_ROUTER_UNKNOWN = ['smg_worker_kv_pressure'];

const root = join(__dirname, '..');
const skip = ['/usr/sbin/sshd', '/usr/bin/ssh-keygen'].find((b) => !existsSync(b));
let hostProc: ChildProcess | undefined;
let fh: { port: number; user: string; keyFile: string; home: string };
let app: WebApp;
let browser: Browser;

test.beforeAll(async () => {
  if (skip) return;
  hostProc = spawn(
    process.execPath,
    [
      join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      '--tsconfig',
      'tsconfig.node.json',
      'test/support/future-host-main.ts',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  fh = await new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`the fixture host did not start: ${out}`)), 30_000);
    hostProc!.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(t);
        resolve(JSON.parse(line));
      }
    });
  });
  app = await startWebApp(['--no-open'], { PD_CONSOLE_SSH_HOME: fh.home });
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
  if (hostProc && hostProc.exitCode === null) {
    const exited = new Promise((r) => hostProc!.once('exit', r));
    hostProc.kill('SIGTERM');
    await exited;
  }
});

test('the Metrics page notes the families it does not understand and still charts the rest', async () => {
  test.skip(skip !== undefined, `needs OpenSSH (apt-get install openssh-server): ${skip} is missing`);
  test.setTimeout(120_000);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.url);
  await page.getByTestId('add-host').click();
  await page.getByTestId('host-field-hostname').fill('127.0.0.1');
  await page.getByTestId('host-field-port').fill(String(fh.port));
  await page.getByTestId('host-field-user').fill(fh.user);
  await page.getByTestId('host-field-identityFile').fill(fh.keyFile);
  await page.getByTestId('host-field-label').fill('gpu-next');
  await page.getByTestId('save-host').click();
  await page
    .getByTestId('hosts-panel')
    .locator('li', { hasText: 'gpu-next' })
    .getByRole('button', { name: 'Connect' })
    .click();
  await expect(page.getByTestId('service-card-decode')).toContainText('sglang-decode.service', {
    timeout: 30_000,
  });
  await page.getByTestId('nav-metrics').click();

  const note = page.getByTestId('unknown-families');
  await expect(note.getByTestId('unknown-families-decode')).toContainText(
    'decode: 2 families not understood by this PD Console version',
    { timeout: 30_000 },
  );
  await expect(note.getByTestId('unknown-families-router')).toContainText(
    'router: 1 family not understood by this PD Console version',
  );
  // prefill is the simulation's own server: no note for it.
  await expect(note.getByTestId('unknown-families-prefill')).toHaveCount(0);
  // Quiet: closed until asked; opened, it names exactly the unknown families.
  const names = note.getByTestId('unknown-families-decode-names');
  await expect(names).toBeHidden();
  await page.screenshot({
    path: shot('unknown-families-closed.png'),
    clip: { x: 0, y: 0, width: 1280, height: 360 },
  });
  await note.getByTestId('unknown-families-decode').locator('summary').click();
  await expect(names).toBeVisible();
  await expect(names.locator('li')).toHaveText(FUTURE_SERVER_UNKNOWN);
  await note.getByTestId('unknown-families-router').locator('summary').click();
  await expect(note.getByTestId('unknown-families-router-names').locator('li')).toHaveText(
    FUTURE_ROUTER_UNKNOWN,
  );
  // Everything recognised still shows: the charts are there and the generation rate has a value.
  await expect(page.getByTestId('page-metrics')).toContainText('Generation tokens/s (decode)');
  await page.screenshot({ path: shot('unknown-families.png') });
  expect(errors).toEqual([]);
});
