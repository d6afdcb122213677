// Small things on the demo's screens at 1280×720, in Chromium on browser mode (the demo 20× real time): a page
// opens at its top (not where the last page was scrolled to), the KV forecast speaks in minutes ("full", "full in
// ~3 min", "not filling" — never "full in ~138 ms") and says "full" once the pool is, and the deployment's title
// carries its whole name for the hover.
import { test, expect } from '@playwright/test';
import { shot } from './support/shots';
import { pageSession } from './support/page-session';
import { apiCall } from './support/api';

const session = pageSession(['--demo', '--no-open', '--demo-speed', '20']);

test('each page opens at its top, whatever the last one was scrolled to', async () => {
  const { app, page, errors } = session;
  await page.goto(app.url);
  await expect(page.getByTestId('service-card-decode')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('chart-kv-pct-decode')).toHaveAttribute('data-state', 'ready', {
    timeout: 30_000,
  });
  const scrollY = (): Promise<number> => page.evaluate(() => window.scrollY);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await expect.poll(scrollY).toBeGreaterThan(200);
  // The top bar stays on screen (sticky): its tabs are what an operator clicks from the bottom of a page.
  await page.getByTestId('nav-metrics').click();
  await expect(page.getByTestId('chart-ttft')).toBeVisible();
  await expect.poll(scrollY).toBe(0);
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await expect.poll(scrollY).toBeGreaterThan(200);
  await page.getByTestId('nav-kv').click();
  await expect(page.getByTestId('kv-usage-decode')).toBeVisible();
  await expect.poll(scrollY).toBe(0);
  expect(errors).toEqual([]);
});

test('the KV forecast is in minutes, "full" or "not filling", and the title has its full text on hover', async () => {
  const { page, errors } = session;
  for (const role of ['prefill', 'decode'])
    await expect(page.getByTestId(`kv-usage-${role}`).getByTestId('kv-ttf')).toHaveText(
      /^(not filling|full|full in < 1 min|full in ~\d+ min|full in ~\d+ h( \d+ min)?)$/,
    );
  const title = page.getByTestId('deployment-title');
  await expect(title).toHaveAttribute('title', (await title.textContent())!);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: shot(`kv-forecast-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  expect(errors).toEqual([]);
});

test('decode KV full (the demo\'s kv-full): at 99 % and above the forecast says "full", not "full in ~138 ms"', async () => {
  const { app, page, errors } = session;
  test.setTimeout(180_000);
  const [d] = await apiCall<Array<{ deployment: { id: string } }>>(app.url, 'listDeployments', {});
  await apiCall(app.url, 'demoControl', { deploymentId: d.deployment.id, fault: 'kv-full', on: true });
  try {
    const kv = page.getByTestId('kv-usage-decode');
    await expect(kv.getByTestId('kv-percent')).toHaveText(/^(99\.\d|100\.0) %$/, { timeout: 120_000 });
    await expect(kv.getByTestId('kv-ttf')).toHaveText('full');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: shot(`kv-forecast-full-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'light' });
  } finally {
    await apiCall(app.url, 'demoControl', { deploymentId: d.deployment.id, fault: 'kv-full', on: false });
  }
  expect(errors).toEqual([]);
});
