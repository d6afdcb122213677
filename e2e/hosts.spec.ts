// Reaching a host the way an operator does: save it, connect, confirm the unknown host key shown exactly
// as ssh-keygen -lf prints it, and land on the deployment discovered there. The "GPU host" is a demo host
// running in its own process, reached through the app's real SSH client.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect, type Browser } from '@playwright/test';
import { launchChromium } from './support/browser';
import { shot } from './support/shots';
import { startWebApp, type WebApp } from './support/web-app';

const root = join(__dirname, '..');
let demo: ChildProcess;
let target: { host: string; port: number; user: string; keyFile: string; hostKeyLine: string };
let app: WebApp;
let browser: Browser;

test.beforeAll(async () => {
  demo = spawn(
    process.execPath,
    [
      join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      '--tsconfig',
      'tsconfig.node.json',
      'scripts/demo-host.ts',
    ],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  target = await new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`demo host did not start: ${out}`)), 30_000);
    demo.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(t);
        resolve(JSON.parse(line));
      }
    });
  });
  // A home of its own: the accepted key lands in this known_hosts, not the developer's. Its first line is
  // damaged, as a hand edit leaves it: the operator must be told, not just have it skipped.
  const home = mkdtempSync(join(tmpdir(), 'pdc-e2e-home-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(join(home, '.ssh', 'known_hosts'), 'gpu-old.example.com ssh-ed25519\n', { mode: 0o600 });
  app = await startWebApp(['--no-open'], { PD_CONSOLE_SSH_HOME: home });
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
  demo?.kill('SIGTERM');
});

test('add a host, confirm its key fingerprint, and see the discovered deployment', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(app.url);
  await page.getByTestId('add-host').click();
  await page.getByTestId('host-field-hostname').fill(target.host);
  await page.getByTestId('host-field-port').fill(String(target.port));
  await page.getByTestId('host-field-user').fill(target.user);
  await page.getByTestId('host-field-identityFile').fill(target.keyFile);
  await page.getByTestId('host-field-label').fill('gpu-e2e');
  await page.getByTestId('save-host').click();
  const row = page.getByTestId('hosts-panel').locator('li', { hasText: 'gpu-e2e' });
  await expect(row).toBeVisible();
  await row.getByRole('button', { name: 'Connect' }).click();

  const dialog = page.getByTestId('ssh-prompt-hostKey');
  await expect(dialog).toBeVisible();
  const blob = Buffer.from(target.hostKeyLine.split(' ')[1], 'base64');
  const expected = 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
  await expect(dialog.getByTestId('host-key-fingerprint')).toHaveText(expected);
  await page.screenshot({ path: shot('host-key-prompt.png') });
  await dialog.getByTestId('host-key-accept').click();

  for (const role of ['prefill', 'decode', 'router'])
    await expect(page.getByTestId(`service-card-${role}`)).toContainText(`sglang-${role}.service`, {
      timeout: 30_000,
    });
  await expect(page.getByTestId('connection-state')).toHaveAttribute('data-state', 'connected');
  // The damaged known_hosts line was reported where the operator sees it, with file and line.
  await expect(page.getByTestId('notice').filter({ hasText: 'SSH configuration' })).toContainText(
    /known_hosts:1: .*line ignored/,
  );
  await page.screenshot({ path: shot('ssh-warning-notice.png') });
});

test('a host that refuses the connection gets a clear message on the start page', async () => {
  const page = await browser.newPage();
  await page.goto(app.url);
  // The deployment from the first test is still open in this backend: close it to get the start page.
  await page.getByTestId('close-deployment').click();
  await page.getByTestId('add-host').click();
  await page.getByTestId('host-field-hostname').fill('127.0.0.1');
  await page.getByTestId('host-field-port').fill('1');
  await page.getByTestId('host-field-label').fill('dead-host');
  await page.getByTestId('save-host').click();
  await page
    .getByTestId('hosts-panel')
    .locator('li', { hasText: 'dead-host' })
    .getByRole('button', { name: 'Connect' })
    .click();
  await expect(page.getByTestId('hosts-error')).toContainText(/refused|cannot connect/);

  // Its display name can be changed in place; the new name is what hosts.json holds from now on.
  const row = page.getByTestId('hosts-panel').locator('li', { hasText: 'dead-host' });
  await row.getByRole('button', { name: 'Rename dead-host' }).click();
  await page.getByRole('textbox', { name: 'New name for dead-host' }).fill('lab box (powered off)');
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.reload();
  await expect(page.getByTestId('hosts-panel')).toContainText('lab box (powered off)');
  await expect(page.getByTestId('hosts-panel')).not.toContainText('dead-host');
});

test('a name with a line break or a terminal escape is refused in the form, with why', async () => {
  const page = await browser.newPage();
  await page.goto(app.url);
  await page.getByTestId('add-host').click();
  await page.getByTestId('host-field-hostname').fill('127.0.0.1');
  // As pasted from a terminal: an input keeps the escape sequence (it drops only line breaks).
  await page.getByTestId('host-field-label').fill('gpu\x1b]0;pwned\x07\x1b[2J');
  await page.getByTestId('save-host').click();
  await expect(page.getByTestId('hosts-error')).toContainText(
    'The name shown in the app must be one line of plain text: no line breaks, tabs, escape sequences',
  );
  await expect(page.getByTestId('hosts-panel').locator('li', { hasText: 'pwned' })).toHaveCount(0);
  // Renamed the same way, a saved host is refused too and keeps its name.
  await page.getByTestId('host-field-label').fill('gpu-spare');
  await page.getByTestId('save-host').click();
  const row = page.getByTestId('hosts-panel').locator('li', { hasText: 'gpu-spare' });
  await expect(row).toBeVisible();
  await row.getByRole('button', { name: 'Rename gpu-spare' }).click();
  await page.getByRole('textbox', { name: 'New name for gpu-spare' }).fill('gpu\u202espare');
  await page.getByRole('button', { name: 'Save name' }).click();
  await expect(page.getByTestId('hosts-error')).toContainText('must be one line of plain text');
  await page.reload();
  await expect(page.getByTestId('hosts-panel')).toContainText('gpu-spare');
});
