// A unit's condition on its card, as systemd means it, with the evidence: a crash-looping decode says
// "crash-looping" with its restart count, exit status and the error its journal ends with, and what to do next; a
// decode restarted while its model loads says "model loading" with the time so far. Browser mode, the demo host
// on a fast clock — its systemd and journal times run ahead of the console's, as a host's clock may, so a loop
// must be seen to end by the answering process, not by comparing clocks — real Chromium. Screenshots at
// 1280×720 in light and dark.
import { test, expect, type Browser, type Page } from '@playwright/test';
import { launchChromium } from './support/browser';
import { apiCall } from './support/api';
import { shot } from './support/shots';
import { startWebApp, type WebApp } from './support/web-app';

const SPEED = 10;

let app: WebApp;
let browser: Browser;
let page: Page;

const fault = (name: string, on: boolean, role?: string): Promise<unknown> =>
  apiCall(app.url, 'demoControl', { deploymentId: 'demo', fault: name, on, ...(role ? { role } : {}) });

async function screenshots(name: string): Promise<void> {
  for (const theme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await page.screenshot({ path: shot(`${name}-${theme}.png`) });
  }
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  app = await startWebApp(['--demo', '--no-open', '--demo-speed', String(SPEED)]);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(app.url);
  await expect(page.getByTestId('service-card-decode').getByTestId('condition')).toHaveText(
    /^running, healthy/,
    { timeout: 60_000 },
  );
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

test('a crash-looping decode says so, with its restarts, exit status, the error and the next step', async () => {
  test.setTimeout(180_000);
  await fault('crash-loop', true, 'decode');
  const condition = page.getByTestId('service-card-decode').getByTestId('condition');
  await expect(condition).toHaveAttribute('data-kind', 'crash-looping', { timeout: 120_000 });
  await expect(condition).toContainText(/crash-looping: restart \d+/);
  await expect(condition).toContainText('CUDA error: an illegal memory access was encountered');
  await expect(page.getByTestId('service-card-decode').getByTestId('condition-next')).toContainText(
    'systemctl stop sglang-decode.service` ends the loop',
  );
  await screenshots('condition-crash-loop');
  await fault('crash-loop', false, 'decode');
});

test('a decode restarted while its model loads says "model loading", not unhealthy', async () => {
  test.setTimeout(240_000);
  const condition = page.getByTestId('service-card-decode').getByTestId('condition');
  await expect(condition).toHaveAttribute('data-kind', 'serving', { timeout: 180_000 });
  await apiCall(app.url, 'startRestart', { deploymentId: 'demo', target: 'decode' });
  await expect(condition).toHaveAttribute('data-kind', 'loading', { timeout: 60_000 });
  await expect(condition).toContainText(/^running, model loading \(\d+ (s|min)/);
  await screenshots('condition-loading');
  await expect(condition).toHaveAttribute('data-kind', 'serving', { timeout: 180_000 });
});
