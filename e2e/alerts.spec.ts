// Alerts an operator can trust, end to end: browser mode with the demo host on a fast clock, the real core and
// renderer, real Chromium at 1280×720. A decode KV alert keeps firing while decode's /metrics answers 500 (marked
// "no data for …", never "resolved"); a restart of decode from its card makes decode's alerts "expected —
// restart in progress" with no toast and no desktop notification; the KV chart draws the alert as one band.
// Screenshots of the Alerts page and the chart in light and dark go to test-results/screenshots (or docs/ with
// PD_DOCS_SCREENSHOTS=1).
import { test, expect, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { shot } from './support/shots';
import { launchChromium } from './support/browser';
import { apiCall } from './support/api';
import { quickRules } from './support/quick-rules';
import { startWebApp, type WebApp } from './support/web-app';

const SPEED = 40;

let app: WebApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];

/** Light or dark through the app's own toggle: charts are rebuilt in the theme's colours. */
async function theme(to: 'light' | 'dark'): Promise<void> {
  if ((await page.locator('html').getAttribute('data-theme')) !== to)
    await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', to);
}

const call = (method: string, args: unknown): Promise<unknown> => apiCall(app.url, method, args);

/** Two animation frames: the chart has drawn what it was given (a theme change rebuilds it). */
const drawn = (): Promise<void> =>
  page.evaluate(
    () => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))),
  );
const fault = (name: string, on: boolean, role?: string): Promise<unknown> =>
  call('demoControl', { deploymentId: 'demo', fault: name, on, ...(role ? { role } : {}) });

/** Every toast shown so far, as its text (toasts leave after 8 s: they are recorded as they come). */
const toasts = (): Promise<string[]> =>
  page.evaluate(() => (window as unknown as { __toasts: string[] }).__toasts);
const notifications = (): Promise<string[]> =>
  page.evaluate(() =>
    (window as unknown as { __notifications: Array<{ title: string }> }).__notifications.map((n) => n.title),
  );

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  app = await startWebApp(['--demo', '--no-open', '--demo-speed', String(SPEED)]);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 720 }, colorScheme: 'light' });
  await context.grantPermissions(['notifications'], { origin: app.origin });
  await context.addInitScript(() => {
    const shown: Array<{ title: string }> = [];
    const w = window as unknown as {
      __notifications: typeof shown;
      __toasts: string[];
      Notification: unknown;
    };
    w.__notifications = shown;
    w.__toasts = [];
    class FakeNotification {
      static permission = 'granted';
      static requestPermission = async () => 'granted';
      constructor(title: string) {
        shown.push({ title });
      }
    }
    w.Notification = FakeNotification;
    new MutationObserver((records) => {
      for (const r of records)
        for (const n of r.addedNodes)
          if (n instanceof HTMLElement && n.dataset.testid === 'alert-toast') w.__toasts.push(n.innerText);
    }).observe(document, { childList: true, subtree: true });
  });
  page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.url);
  await expect(page.getByTestId('service-card-decode').getByTestId('active-state')).toContainText('active', {
    timeout: 30_000,
  });
  await quickRules(app.url);
});

test.afterAll(async () => {
  await context?.close();
  await browser?.close();
  await app?.stop();
});

const item = (key: string) => page.locator(`[data-testid=alert-item][data-key="${key}"]`);

test('decode /metrics answering 500 leaves the KV alert firing, marked "no data", never "resolved"', async () => {
  test.setTimeout(120_000);
  await page.getByTestId('nav-alerts').click();
  await fault('kv-full', true);
  const kv = item('decode-kv-high|decode');
  await expect(kv).toHaveAttribute('data-state', 'firing', { timeout: 60_000 });
  await expect.poll(toasts).toContainEqual(expect.stringContaining('decode KV cache above 90 %'));
  await fault('metrics-500', true, 'decode');
  await expect(kv).toHaveAttribute('data-state', 'no-data', { timeout: 20_000 });
  await expect(kv.getByTestId('alert-no-data')).toContainText(
    /no data for \d+s — no successful \/metrics scrape of decode/,
  );
  await expect(item('metrics-stale|decode')).toBeVisible({ timeout: 20_000 });
  // Still there, counting up, after several more polls.
  await expect(kv.getByTestId('alert-no-data')).toContainText(/no data for ([5-9]|\d\d)s/, {
    timeout: 20_000,
  });
  const history = page.getByTestId('alert-history');
  await expect(history).not.toContainText('resolved: decode KV');
  expect(await toasts()).not.toContainEqual(expect.stringContaining('resolved: decode KV'));
  await page.screenshot({ path: shot('alerts-no-data-light.png') });
  await theme('dark');
  await page.screenshot({ path: shot('alerts-no-data-dark.png') });
  await theme('light');
  await fault('metrics-500', false, 'decode');
  await expect(kv).toHaveAttribute('data-state', 'firing', { timeout: 20_000 });
  await expect(item('metrics-stale|decode')).toHaveCount(0, { timeout: 20_000 });
});

test('a restart of decode from its card: its alerts are expected — no toast, no notification', async () => {
  test.setTimeout(180_000);
  await fault('kv-full', false);
  const toastsBefore = (await toasts()).length;
  const notesBefore = (await notifications()).length;
  await page.getByTestId('nav-overview').click();
  await page.getByTestId('service-card-decode').getByTestId('restart-button-decode').click();
  await expect(page.getByTestId('restart-confirm')).toBeEnabled();
  await page.getByTestId('restart-confirm').click();
  // The progress stays on screen until hidden; the restart goes on.
  await page.getByTestId('restart-close').click();
  await page.getByTestId('nav-alerts').click();
  const expected = page.locator('[data-testid=alert-item][data-state=expected]');
  await expect(expected.first()).toBeVisible({ timeout: 60_000 });
  await expect(expected.first().getByTestId('alert-expected')).toHaveText('expected — restart in progress');
  await expect(expected.first()).toContainText(/restart of decode by .* \(operation r-/);
  // The header counts only what needs someone.
  const badge = page.getByTestId('alert-badge');
  const firing = await page.locator('[data-testid=alert-item]:not([data-state=expected])').count();
  if (firing === 0) await expect(badge).toHaveCount(0);
  else await expect(badge).toHaveText(String(firing));
  await page.screenshot({ path: shot('alerts-expected-light.png') });
  await theme('dark');
  await page.screenshot({ path: shot('alerts-expected-dark.png') });
  await theme('light');
  // The restart ends; what it caused goes without a word.
  await expect(expected).toHaveCount(0, { timeout: 90_000 });
  const during = (await toasts()).slice(toastsBefore);
  const notes = (await notifications()).slice(notesBefore);
  // Neither decode's own alerts nor the router's, which has no other decode server to be ready with.
  for (const text of [...during, ...notes])
    expect(text).not.toMatch(/(decode|router) (service is not active|metrics stale|health check failing)/);
});

test('the KV chart draws each alert once, as a band from its start to its end', async () => {
  await page.getByTestId('nav-kv').click();
  const chart = page.getByTestId('chart-kv-pct-decode');
  await expect(chart).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
  const bands = Number(await chart.getAttribute('data-alert-bands'));
  const events = (await call('listEvents', { deploymentId: 'demo' })) as Array<{
    kind: string;
    role?: string;
  }>;
  const alertEvents = events.filter(
    (e) => e.kind === 'alert' && (e.role === undefined || e.role === 'decode'),
  );
  // The KV alert, the stale metrics, the restart's expected alerts, each fired, changed and ended: one band each
  // at most, overlapping ones one band.
  expect(bands).toBeGreaterThan(0);
  expect(bands).toBeLessThan(alertEvents.length);
  await chart.scrollIntoViewIfNeeded();
  // Zoomed by a drag across the last minute or so, where the test's alerts are.
  const box = (await page.getByTestId('canvas-kv-pct-decode').boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width - 130, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width - 60, y, { steps: 4 });
  await page.mouse.move(box.x + box.width - 2, y, { steps: 4 });
  await page.mouse.up();
  await expect(page.getByTestId('back-to-live')).toBeVisible();
  // Away from the chart: no crosshair in the picture.
  await page.mouse.move(box.x + box.width / 2, box.y - 60);
  await expect(chart).toHaveAttribute('data-state', 'ready');
  await drawn();
  await chart.screenshot({ path: shot('alerts-chart-bands-light.png') });
  await theme('dark');
  await expect(chart).toHaveAttribute('data-state', 'ready');
  await drawn();
  await chart.screenshot({ path: shot('alerts-chart-bands-dark.png') });
  await theme('light');
  expect(errors).toEqual([]);
});
