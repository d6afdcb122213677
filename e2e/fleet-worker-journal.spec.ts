// A fleet worker's page shows its journal: decode-2 runs on gpu-b (node rank 0) and gpu-c (node rank 1), and
// the page follows both units, each line labelled with the host it came from and its node rank. Browser mode,
// the real core, the demo fleet over real SSH, real Chromium.
import { test, expect } from '@playwright/test';
import { launchChromium } from './support/browser';
import { startWebApp } from './support/web-app';

test('the worker page of a multi-node worker shows the journal of both its units, labelled by host', async () => {
  test.setTimeout(180_000);
  const app = await startWebApp(['--no-open']);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(app.url);
    await page.getByTestId('open-demo-fleet').click();
    await expect(page.getByTestId('page-overview')).toHaveAttribute('data-fleet', 'true', {
      timeout: 90_000,
    });
    await page.goto(`${app.url}#/worker/decode-2`);
    await expect(page.getByTestId('worker-page')).toHaveAttribute('data-worker', 'decode-2');
    const hosts = page.getByTestId('journal').getByTestId('journal-host');
    await expect(hosts.filter({ hasText: 'gpu-b r0' }).first()).toBeVisible({ timeout: 60_000 });
    await expect(hosts.filter({ hasText: 'gpu-c r1' }).first()).toBeVisible({ timeout: 60_000 });
    expect(errors).toEqual([]);
  } finally {
    await browser.close();
    await app.stop();
  }
});
