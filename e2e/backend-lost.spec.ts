// The backend's life seen from the page and from the terminal (browser mode, real Chromium, the demo):
// killed under an open page (SIGKILL), the page keeps its last data under a "backend lost — reconnecting"
// notice and recovers by itself when the backend is started again on the same port and token; and a
// SIGTERM ends the process promptly with its recording closed even while a client holds a refused upgrade.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect, type Browser } from '@playwright/test';
import { launchChromium } from './support/browser';
import { shot } from './support/shots';
import { apiCall } from './support/api';
import { startWebApp, type WebApp } from './support/web-app';
import { readRecording } from '../src/main/core/recording';

let browser: Browser;
const running: WebApp[] = [];

test.beforeAll(async () => {
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
  for (const app of running) await app.stop();
});

/** Browser mode with the demo on a data folder, port and token the test chooses (token via the env). */
async function start(dataDir: string, token: string, port = 0): Promise<WebApp> {
  const app = await startWebApp(['--demo', '--no-open', '--port', String(port)], {
    PD_CONSOLE_DATA_DIR: dataDir,
    PD_CONSOLE_WEB_TOKEN: token,
  });
  running.push(app);
  return app;
}

const exited = (app: WebApp): Promise<{ code: number | null; signal: string | null }> =>
  new Promise((resolve) => {
    if (app.proc.exitCode !== null || app.proc.signalCode !== null)
      return resolve({ code: app.proc.exitCode, signal: app.proc.signalCode });
    // 'close', not 'exit': by then its last output lines have been read too.
    app.proc.once('close', (code, signal) => resolve({ code, signal }));
  });

test('a killed backend leaves the last data on screen with a reconnecting notice, and the page recovers', async () => {
  test.setTimeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-lost-'));
  const token = randomBytes(18).toString('base64url');
  const first = await start(dataDir, token);
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(first.url);
  const decode = page.getByTestId('service-card-decode');
  await expect(decode.getByTestId('active-state')).toContainText('active', { timeout: 30_000 });
  const kv = page.getByTestId('kv-usage-decode').getByTestId('kv-percent');
  await expect(kv).toHaveText(/^\d{1,3}\.\d %$/);
  await expect(page.getByTestId('backend-lost')).toHaveCount(0);

  first.proc.kill('SIGKILL');
  await exited(first);
  // Within 5 s, and over the last data: the pipeline and the cards are still there.
  const lost = page.getByTestId('backend-lost');
  await expect(lost).toBeVisible({ timeout: 5000 });
  await expect(lost).toContainText('Backend lost — reconnecting');
  await expect(lost).toContainText('npm run web');
  await expect(page.getByTestId('pipeline')).toBeVisible();
  await expect(decode).toBeVisible();
  await expect(kv).toHaveText(/^\d{1,3}\.\d %$/);
  // It keeps trying: the attempt count goes up while the backend is away.
  await expect(page.getByTestId('backend-lost-attempt')).toContainText(/Attempt [2-9]/, { timeout: 15_000 });
  // Under the notice, the last data is not presented as current: the cards turn unknown since the last reading
  // and the header stops claiming updates.
  await expect(decode.getByTestId('condition')).toHaveText(/^unknown — last seen healthy at /, {
    timeout: 15_000,
  });
  await expect(page.getByTestId('updated')).toHaveAttribute('data-quiet', 'true');
  await page.screenshot({ path: shot('backend-lost.png') });

  // The same backend again: same port, same token, same data folder.
  await start(dataDir, token, Number(new URL(first.url).port));
  await expect(lost).toHaveCount(0, { timeout: 30_000 });
  await expect(decode.getByTestId('active-state')).toContainText('active');
  await expect(decode).toHaveAttribute('data-stale', 'false', { timeout: 15_000 });
  await expect(page.getByTestId('connection-state')).toHaveAttribute('data-state', 'connected', {
    timeout: 30_000,
  });
  const after = await kv.textContent();
  await expect.poll(() => kv.textContent(), { timeout: 20_000 }).not.toBe(after);
  expect(errors).toEqual([]);
  await page.close();
});

test('SIGTERM ends the backend promptly with its recording closed, even while a refused upgrade is held', async () => {
  test.setTimeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-stop-'));
  const app = await start(dataDir, randomBytes(18).toString('base64url'));
  let path: string | null = null;
  await expect
    .poll(
      async () => {
        const s = await apiCall<{ active: { state: string; path: string | null; samples: number }[] }>(
          app.url,
          'getRecordingStatus',
          {},
        );
        const a = s.active[0];
        path = a?.state === 'recording' && a.samples > 0 ? a.path : null;
        return path;
      },
      { timeout: 60_000 },
    )
    .not.toBeNull();

  // A local process asks for the WebSocket from a foreign origin, is refused, and then never reads or closes.
  const port = Number(new URL(app.url).port);
  const held = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => held.once('connect', resolve));
  held.pause();
  held.on('error', () => undefined);
  held.write(
    `GET /api?token=${app.token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://evil.example\r\n` +
      'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
      'Sec-WebSocket-Version: 13\r\n\r\n',
  );
  await new Promise((r) => setTimeout(r, 300));

  const sent = Date.now();
  app.proc.kill('SIGTERM');
  // Generous bound: before the fix this never ended; the hard deadline in main is 5 s (exit code 1).
  const result = await Promise.race([
    exited(app),
    new Promise<'still running'>((r) => setTimeout(() => r('still running'), 15_000)),
  ]);
  const ms = Date.now() - sent;
  held.destroy();
  console.log(`[backend-lost.spec] SIGTERM → exit with a held refused upgrade: ${ms} ms`);
  expect(result, app.output()).toEqual({ code: 0, signal: null });
  expect(app.output()).toMatch(/pd-console web: stopped in \d+ ms/);
  const rec = await readRecording(path!);
  expect(rec.closedCleanly).toBe(true);
});
