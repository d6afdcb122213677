// The operator's dashboard end to end: browser mode, the real core and renderer, the demo host over SSH.
// One app and one demo deployment serve the whole file (the machine has 2 cores); tests run in order and
// the fault test comes last because it changes the demo's state.
import { readFileSync } from 'node:fs';
import { test, expect, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { shot } from './support/shots';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';

let app: WebApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const errors: string[] = [];

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  app = await startWebApp(['--demo', '--no-open']);
  browser = await launchChromium();
  context = await browser.newContext({
    viewport: { width: 1440, height: 900 },
    colorScheme: 'light',
    acceptDownloads: true,
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write', 'notifications'], {
    origin: app.origin,
  });
  // Record desktop notifications instead of showing them (headless Chromium has no notification centre).
  await context.addInitScript(() => {
    const shown: Array<{ title: string; body?: string }> = [];
    (window as unknown as { __notifications: typeof shown }).__notifications = shown;
    class FakeNotification {
      static permission = 'granted';
      static requestPermission = async () => 'granted';
      constructor(title: string, opts?: { body?: string }) {
        shown.push({ title, body: opts?.body });
      }
    }
    (window as unknown as { Notification: unknown }).Notification = FakeNotification;
  });
  page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.url);
  await expect(page.getByTestId('pipeline')).toBeVisible({ timeout: 30_000 });
});

test.afterAll(async () => {
  await context?.close();
  await browser?.close();
  await app?.stop();
});

test('the overview shows the PD pipeline with per-stage state, queues, KV and a verdict with evidence', async () => {
  for (const role of ['router', 'prefill', 'decode']) {
    const card = page.getByTestId(`service-card-${role}`);
    await expect(card.getByTestId('active-state')).toContainText('active');
    await expect(card.getByTestId('health')).toContainText('healthy');
  }
  const prefill = page.getByTestId('service-card-prefill');
  await expect(prefill.getByTestId('stage-running')).toHaveText(/^\d+$/);
  await expect(prefill.getByTestId('queue-prefill_bootstrap_queue')).toContainText(/bootstrap \d+/);
  await expect(prefill.getByTestId('queue-prefill_inflight_queue')).toContainText(/inflight \d+/);
  const decode = page.getByTestId('service-card-decode');
  await expect(decode.getByTestId('queue-decode_prealloc_queue')).toContainText(/prealloc \d+/);
  await expect(decode.getByTestId('stage-kv')).toContainText(/\d+\.\d % · .* \/ 2\.58M/);
  await expect(page.getByTestId('service-card-router').getByTestId('stage-workers')).toContainText(
    '2 of 2 healthy',
  );
  // Between the stages: router traffic, then the KV transfer (rate needs two scrapes of the histogram).
  await expect(page.getByTestId('pd-link-router')).toContainText(/req\/s/);
  await expect(page.getByTestId('transfer-rate')).toHaveText(/\d+(\.\d+)? GB\/s/, { timeout: 20_000 });
  await expect(page.getByTestId('transfer-failures')).toContainText('failures');
  const verdict = page.getByTestId('verdict');
  await expect(verdict).toHaveAttribute(
    'data-kind',
    /^(healthy|idle|prefill-bound|decode-bound|transfer-bound|router-bound)$/,
  );
  await expect(page.getByTestId('verdict-evidence').locator('li').first()).toContainText(/\d/);
  // The KV panels keep their figures and now say where the figure comes from and when it fills.
  const kv = page.getByTestId('kv-usage-decode');
  await expect(kv.getByTestId('kv-percent')).toHaveText(/^\d{1,3}\.\d %$/);
  await expect(kv.getByTestId('kv-source')).toContainText('sglang:kv_used_tokens');
  await expect(kv.getByTestId('kv-evictable')).toHaveText(/\d/);
  await expect(kv.getByTestId('kv-ttf')).toHaveText(
    /^(not filling|full|full in < 1 min|full in ~\d+ (min|h( \d+ min)?))$/,
  );
  await expect(page.getByTestId('chart-kv-pct-decode')).toHaveAttribute('data-state', 'ready');
});

test('metrics panels chart latency, throughput, router, cache and GPUs grouped by role', async () => {
  await page.getByTestId('nav-metrics').click();
  await expect(page.getByTestId('page-metrics')).toBeVisible();
  for (const id of ['ttft', 'itl', 'e2e', 'prompt-tps', 'gen-tps', 'router-rps', 'cache-hit', 'queues']) {
    await expect(page.getByTestId(`chart-${id}`)).toHaveAttribute('data-state', 'ready', { timeout: 20_000 });
  }
  // nvidia-smi is polled over SSH every 5 s: eight GPUs, prefill on 0–3 and decode on 4–7.
  await expect(page.getByTestId('gpu-table').locator('tbody tr')).toHaveCount(8, { timeout: 15_000 });
  await expect(page.getByTestId('gpu-row-2')).toContainText('prefill');
  await expect(page.getByTestId('gpu-row-6')).toContainText('decode');
  await expect(page.getByTestId('gpu-row-6')).toContainText(/\d+ °C/);
  await expect(page.getByTestId('gpu-group-decode')).toContainText('decode GPUs 4, 5, 6, 7');
  await expect(page.getByTestId('chart-gpu-decode-util')).toHaveAttribute('data-state', 'ready', {
    timeout: 15_000,
  });
});

test('ranges, drag-zoom, Ctrl+wheel and back to live act on every chart', async () => {
  await page.getByTestId('nav-kv').click();
  const chart = page.getByTestId('chart-kv-pct-decode');
  await expect(chart).toHaveAttribute('data-state', 'ready');
  await page.getByTestId('range-1h').click();
  await expect(page.getByTestId('range-1h')).toHaveAttribute('aria-pressed', 'true');
  await page.keyboard.press('1');
  await expect(page.getByTestId('range-5m')).toHaveAttribute('aria-pressed', 'true');

  const canvas = page.getByTestId('canvas-kv-pct-decode');
  const box = (await canvas.boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.55, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.75, y, { steps: 5 });
  await page.mouse.move(box.x + box.width * 0.9, y, { steps: 5 });
  await page.mouse.up();
  const live = page.getByTestId('back-to-live');
  await expect(live).toBeVisible();
  await expect(page.getByTestId('range-5m')).toHaveAttribute('aria-pressed', 'false');
  // The other KV chart follows the same window (fetched again for it).
  await expect(page.getByTestId('chart-kv-tokens-decode')).toHaveAttribute('data-state', /ready|empty/);
  const zoomed = await live.textContent();

  await page.keyboard.press('l');
  await expect(page.getByTestId('live-indicator')).toBeVisible();
  await page.mouse.move(box.x + box.width * 0.8, y);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -400);
  await page.keyboard.up('Control');
  await expect(live).toBeVisible();
  expect(await live.textContent()).not.toBe(zoomed);
  await live.click();
  await expect(page.getByTestId('live-indicator')).toBeVisible();
});

test('a chart follows its box when the window is resized and resized back', async () => {
  // The charts are built at their box's size and follow it themselves (not Chart.js's responsive mode): a
  // canvas left at its first size would overflow a narrower window or stay small in a wider one.
  await page.getByTestId('nav-kv').click();
  await expect(page.getByTestId('chart-kv-pct-decode')).toHaveAttribute('data-state', 'ready');
  const canvas = page.getByTestId('canvas-kv-pct-decode');
  const fit = () =>
    canvas.evaluate((c: HTMLCanvasElement) => ({
      shown: c.getBoundingClientRect().width,
      box: c.parentElement!.clientWidth,
      pixels: c.width,
      ratio: window.devicePixelRatio,
    }));
  const fits = async (ok: (box: number) => boolean): Promise<boolean> => {
    const f = await fit();
    return ok(f.box) && Math.abs(f.shown - f.box) <= 1 && Math.abs(f.pixels - f.box * f.ratio) <= 1;
  };
  const wide = (await fit()).box;
  expect(await fits(() => true)).toBe(true);
  await page.setViewportSize({ width: 1000, height: 900 });
  // Narrower, the page's grids fold to one column: the box changes width (wider here) and the chart with it.
  await expect.poll(() => fits((box) => Math.abs(box - wide) > 100)).toBe(true);
  await page.setViewportSize({ width: 1440, height: 900 });
  await expect.poll(() => fits((box) => Math.abs(box - wide) <= 1)).toBe(true);
});

test('every chart is drawn at its box size, also one built after the window changed size', async () => {
  // Charts are built at the size their box had when the page mounted (charts/sized-platform.ts), without
  // reading styles then: a chart whose window changed size in between (here the Metrics page's charts out of
  // sight, built when the page is idle) must still end up at its box's size, not the one measured at mount.
  await page.getByTestId('nav-overview').click();
  await page.getByTestId('nav-metrics').click();
  await page.setViewportSize({ width: 1000, height: 900 });
  const canvases = page.locator('[data-testid="page-metrics"] canvas[data-testid^="canvas-"]');
  const misfits = () =>
    canvases.evaluateAll((cs) =>
      (cs as HTMLCanvasElement[])
        .filter((c) => {
          const box = c.parentElement!.clientWidth;
          const height = c.parentElement!.clientHeight;
          const shown = c.getBoundingClientRect();
          // A canvas Chart.js has sized carries its style size; an unbuilt one does not fit yet either.
          return (
            !c.style.width ||
            Math.abs(shown.width - box) > 1 ||
            Math.abs(shown.height - height) > 1 ||
            Math.abs(c.width - box * window.devicePixelRatio) > 1
          );
        })
        .map((c) => c.dataset.testid),
    );
  expect(await canvases.count()).toBeGreaterThan(10);
  await expect.poll(misfits, { timeout: 15_000 }).toEqual([]);
  await page.setViewportSize({ width: 1440, height: 900 });
  await expect.poll(misfits, { timeout: 15_000 }).toEqual([]);
});

test('a chart exports its picture as PNG and its data as CSV', async () => {
  await page.getByTestId('nav-kv').click();
  // Exported once it is drawn (a button clicked before that has no picture to give).
  await expect(page.getByTestId('chart-kv-pct-decode')).toHaveAttribute('data-state', 'ready', {
    timeout: 30_000,
  });
  const [png] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('export-png-kv-pct-decode').click(),
  ]);
  expect(png.suggestedFilename()).toMatch(/^kv-pct-decode-.*\.png$/);
  const pngBytes = readFileSync((await png.path())!);
  expect(pngBytes.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(pngBytes.length).toBeGreaterThan(2000);

  // The CSV is the tokens chart's own data: exported once that chart's history is in (a freshly opened page
  // answers its charts' requests in turn, and the tokens chart read "Loading history…" a moment longer).
  await expect(page.getByTestId('chart-kv-tokens-decode')).toHaveAttribute('data-state', 'ready', {
    timeout: 30_000,
  });
  const [csv] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('export-csv-kv-tokens-decode').click(),
  ]);
  const text = readFileSync((await csv.path())!, 'utf8');
  const lines = text.trim().split('\n');
  expect(lines[0]).toBe(
    'time,epoch_ms,used [decode.kv_used],evictable [decode.kv_evictable],capacity [decode.kv_capacity]',
  );
  expect(lines.length).toBeGreaterThan(3);
  const row = lines[lines.length - 1].split(',');
  expect(new Date(row[0]).getTime()).toBe(Number(row[1]));
  expect(Number(row[4])).toBe(2_580_000);
});

test('a chart of several series has a legend under it that hides and shows each line', async () => {
  await page.getByTestId('nav-kv').click();
  const legend = page.getByTestId('legend-kv-tokens-decode');
  await expect(legend.getByRole('button')).toHaveText(['used', 'evictable', 'capacity']);
  const capacity = legend.getByRole('button', { name: 'capacity' });
  await expect(capacity).toHaveAttribute('aria-pressed', 'true');
  await capacity.click();
  await expect(capacity).toHaveAttribute('aria-pressed', 'false');
  await capacity.click();
  await expect(capacity).toHaveAttribute('aria-pressed', 'true');
  // A chart of one series needs none.
  await expect(page.getByTestId('legend-retractions-decode')).toHaveCount(0);
});

test('the service page shows systemd properties and a live journal with search, filter, pause and copy', async () => {
  await page.getByTestId('nav-service-decode').click();
  const props = page.getByTestId('worker-props');
  await expect(props.getByTestId('prop-ActiveState')).toContainText('active');
  await expect(props.getByTestId('prop-MainPID')).toContainText(/\d+/);
  await expect(props.getByTestId('prop-NRestarts')).toContainText(/\d+/);
  await expect(props.getByTestId('prop-ExecStart')).toContainText('--disaggregation-mode decode');
  await expect(props.getByTestId('prop-Memory')).toContainText(/GiB|MiB/);

  const journal = page.getByTestId('journal');
  const lines = journal.getByTestId('journal-line');
  await expect(lines.first()).toBeVisible({ timeout: 15_000 });
  const before = await lines.count();
  await expect.poll(() => lines.count(), { timeout: 15_000 }).toBeGreaterThan(before);
  // One host: no host column, and each line's message on its time's row, in the width left of it.
  await expect(journal.getByTestId('journal-host')).toHaveCount(0);
  const [time, msg] = await Promise.all(
    ['time', '.msg'].map((sel) => lines.first().locator(sel).boundingBox()),
  );
  expect(msg!.y).toBe(time!.y);
  expect(msg!.width).toBeGreaterThan(600);

  await journal.getByTestId('journal-search').fill('Decode batch');
  await expect(lines.first()).toContainText('Decode batch');
  const matching = await lines.allTextContents();
  expect(matching.every((l) => l.includes('Decode batch'))).toBe(true);
  await journal.getByTestId('journal-search').fill('');

  await journal.getByTestId('journal-priority').selectOption('3');
  await expect
    .poll(async () =>
      (await lines.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-priority'))))).every(
        (p) => p <= 3,
      ),
    )
    .toBe(true);
  await journal.getByTestId('journal-priority').selectOption('7');

  await journal.getByTestId('journal-follow').click();
  await expect(journal.getByTestId('journal-follow')).toHaveText(/Follow \(\d+ new\)/);
  await expect(journal.getByTestId('journal-follow')).toHaveText(/Follow \([1-9]\d* new\)/, {
    timeout: 15_000,
  });
  await journal.getByTestId('journal-follow').click();
  await expect(journal.getByTestId('journal-follow')).toHaveText('Pause');

  await journal.getByTestId('journal-copy').click();
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  expect(clip.split('\n').length).toBeGreaterThan(5);
  expect(clip).toMatch(/^\d{4}-\d{2}-\d{2}T/);
});

test('clicking a chart opens the journal ±20 s around that moment', async () => {
  await page.getByTestId('nav-service-decode').click();
  const canvas = page.getByTestId('canvas-worker-decode-0-kv');
  await expect(page.getByTestId('chart-worker-decode-0-kv')).toHaveAttribute('data-state', 'ready');
  const box = (await canvas.boundingBox())!;
  await canvas.click({ position: { x: box.width - 30, y: box.height / 2 } });
  const drawer = page.getByTestId('journal-around');
  await expect(drawer).toBeVisible();
  await expect(drawer).toContainText('±20 s (decode)');
  await expect(drawer.getByTestId('journal-line').first()).toBeVisible({ timeout: 15_000 });
  await expect(drawer).toContainText('--since @');
  await page.keyboard.press('Escape');
  await expect(drawer).toBeHidden();
});

test('the command palette and keyboard shortcuts reach every page', async () => {
  await page.getByTestId('nav-overview').click();
  await page.keyboard.press('Control+k');
  const palette = page.getByTestId('command-palette');
  await expect(palette).toBeVisible();
  await page.getByTestId('palette-input').fill('router service');
  await expect(palette.getByTestId('palette-item').first()).toHaveAttribute(
    'data-command',
    'go-service-router',
  );
  await page.keyboard.press('Enter');
  await expect(palette).toBeHidden();
  await expect(page.getByTestId('worker-page')).toHaveAttribute('data-role', 'router');
  await page.keyboard.press('Control+k');
  await page.getByTestId('palette-input').fill('24');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('range-24h')).toHaveAttribute('aria-pressed', 'true');
  await page.keyboard.press('m');
  await expect(page.getByTestId('page-metrics')).toBeVisible();
  await page.keyboard.press('?');
  await expect(page.getByTestId('shortcut-help')).toContainText('command palette');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('shortcut-help')).toBeHidden();
  await page.keyboard.press('1');
  await page.keyboard.press('o');
  await expect(page.getByTestId('page-overview')).toBeVisible();
});

test('pages are in the address and history: back and forward return to them, a reload keeps one', async () => {
  await page.getByTestId('nav-overview').click();
  await page.getByTestId('nav-kv').click();
  await page.getByTestId('nav-metrics').click();
  await expect(page.getByTestId('page-metrics')).toBeVisible();
  expect(new URL(page.url()).hash).toBe('#/metrics');
  await page.goBack();
  await expect(page.getByTestId('page-kv')).toBeVisible();
  expect(new URL(page.url()).hash).toBe('#/kv');
  await page.goBack();
  await expect(page.getByTestId('page-overview')).toBeVisible();
  await page.goForward();
  await expect(page.getByTestId('page-kv')).toBeVisible();
  // The sessions page has its own address too; its back button and the browser's both leave it.
  await page.getByTestId('open-sessions-topbar').click();
  await expect(page.getByTestId('sessions-page')).toBeVisible();
  expect(new URL(page.url()).hash).toBe('#/sessions');
  await page.goBack();
  await expect(page.getByTestId('sessions-page')).toBeHidden();
  await expect(page.getByTestId('page-kv')).toBeVisible();
  await page.getByTestId('open-sessions-topbar').click();
  await page.getByTestId('sessions-back').click();
  await expect(page.getByTestId('page-kv')).toBeVisible();
  expect(new URL(page.url()).hash).toBe('#/kv');
  await page.reload();
  await expect(page.getByTestId('page-kv')).toBeVisible({ timeout: 30_000 });
  await page.getByTestId('nav-overview').click();
  await expect(page.getByTestId('pipeline')).toBeVisible();
});

test('the router page lists the workers the router reports, with health and circuit breaker', async () => {
  await page.keyboard.press('Control+k');
  await page.getByTestId('palette-input').fill('router service');
  await page.keyboard.press('Enter');
  const table = page.getByTestId('router-workers');
  await expect(table).toBeVisible();
  const rows = table.getByTestId('router-worker');
  // The demo's router routes to one prefill and one decode worker; both are up.
  await expect(rows).toHaveCount(2);
  await expect(rows.getByTestId('router-worker-health')).toHaveText(['healthy', 'healthy']);
  await expect(rows.first()).toContainText('closed');
  await expect(rows.first()).toContainText('http://127.0.0.1:');
  // smg names no role in its metrics without --engine-metrics: the deployment's service at the URL does.
  await expect(rows.nth(0)).toContainText('prefill');
  await expect(rows.nth(1)).toContainText('decode');
  await page.screenshot({ path: shot('router-workers.png') });
  await page.keyboard.press('o');
  await expect(page.getByTestId('page-overview')).toBeVisible();
});

test('the theme follows the system and can be switched by hand', async () => {
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(await bg()).toBe('rgb(245, 246, 248)');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect.poll(bg).toBe('rgb(15, 18, 23)');
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await expect.poll(bg).toBe('rgb(245, 246, 248)');
  await page.keyboard.press('Control+k');
  await page.getByTestId('palette-input').fill('follow the system');
  await page.keyboard.press('Enter');
  await expect(page.locator('html')).not.toHaveAttribute('data-theme', /.+/);
  await expect.poll(bg).toBe('rgb(15, 18, 23)');
  await page.emulateMedia({ colorScheme: 'light' });
});

test('screenshots of every page, light and dark, and at 1280×720 and 4K', async () => {
  test.setTimeout(180_000);
  const pages: Array<[string, string]> = [
    ['overview', '#/overview'],
    ['kv', '#/kv'],
    ['metrics', '#/metrics'],
    ['alerts', '#/alerts'],
    ['service-decode', '#/service/decode'],
    ['service-router', '#/service/router'],
  ];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [name, hash] of pages) {
      await page.evaluate((h) => (window.location.hash = h), hash);
      await page.waitForTimeout(name === 'metrics' ? 2500 : 1500);
      await page.screenshot({ path: shot(`dashboard-${name}-${scheme}.png`), fullPage: true });
    }
    await page.evaluate(() => (window.location.hash = '#/overview'));
    await page.keyboard.press('Control+k');
    await page.getByTestId('palette-input').fill('dec');
    await page.screenshot({ path: shot(`dashboard-palette-${scheme}.png`) });
    await page.keyboard.press('Escape');
    await page.evaluate(() => (window.location.hash = '#/kv'));
    const canvas = page.getByTestId('canvas-kv-pct-decode');
    await expect(page.getByTestId('chart-kv-pct-decode')).toHaveAttribute('data-state', 'ready');
    const box = (await canvas.boundingBox())!;
    await canvas.click({ position: { x: box.width - 40, y: box.height / 2 } });
    await expect(page.getByTestId('journal-around').getByTestId('journal-line').first()).toBeVisible({
      timeout: 15_000,
    });
    await page.screenshot({ path: shot(`dashboard-journal-around-${scheme}.png`) });
    await page.keyboard.press('Escape');
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.evaluate(() => (window.location.hash = '#/overview'));
  for (const [w, h, name] of [
    [1280, 720, '1280x720'],
    [3840, 2160, '4k'],
  ] as const) {
    await page.setViewportSize({ width: w, height: h });
    // Open the page at that size, as a window of that size would (chart type follows the page's type size).
    await page.reload();
    await expect(page.getByTestId('chart-kv-pct-decode')).toHaveAttribute('data-state', 'ready');
    await page.waitForTimeout(1500);
    await page.screenshot({ path: shot(`dashboard-overview-${name}.png`) });
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.reload();
  await expect(page.getByTestId('pipeline')).toBeVisible();
});

test('an alert fires on the demo kv-full fault: in the UI, as a desktop notification and on the charts', async () => {
  test.setTimeout(240_000);
  // Shorten the hold time of the decode KV rule through the rules table, so the test needs seconds, not minutes.
  await page.getByTestId('nav-alerts').click();
  await expect(page.getByTestId('alerts-none')).toBeVisible();
  const hold = page.getByTestId('rule-decode-kv-high').getByLabel('decode-kv-high duration');
  await hold.fill('3');
  await hold.blur();
  await expect(hold).toHaveValue('3');

  await page.keyboard.press('Control+k');
  await page.getByTestId('palette-input').fill('fill the decode KV');
  await page.keyboard.press('Enter');

  const item = page.getByTestId('alerts-active').getByTestId('alert-item');
  await expect(item.first()).toBeVisible({ timeout: 180_000 });
  await expect(item.first()).toHaveAttribute('data-rule', 'decode-kv-high');
  await expect(item.first()).toContainText('decode KV cache above 90 %');
  await expect(page.getByTestId('alert-badge')).toHaveText(/[1-9]/);
  await expect(page.getByTestId('alert-toast').first()).toContainText('decode KV cache above 90 %');
  await expect(page.getByTestId('alert-history').getByTestId('event-item').first()).toHaveAttribute(
    'data-kind',
    'alert',
  );
  const notes = await page.evaluate(
    () => (window as unknown as { __notifications: Array<{ title: string }> }).__notifications,
  );
  expect(notes.map((n) => n.title)).toContain('PD Console: decode KV cache above 90 %');
  await page.screenshot({ path: shot('dashboard-alert-firing-light.png'), fullPage: true });

  // The alert is decode's: marked on decode's KV chart, not on prefill's (which marks only its own events and
  // the deployment's: the connection).
  await page.getByTestId('nav-kv').click();
  const markers = async (id: string): Promise<number> =>
    Number(await page.getByTestId(`chart-${id}`).getAttribute('data-markers'));
  await expect.poll(() => markers('kv-pct-decode')).toBeGreaterThan(0);
  // Polled as one figure each: an event that arrives between two reads (a state change, the connection) marks
  // both prefill charts, but not between the two reads of one comparison.
  await expect
    .poll(async () => (await markers('kv-pct-decode')) - (await markers('kv-pct-prefill')))
    .toBeGreaterThan(0);
  await expect
    .poll(async () => (await markers('kv-tokens-prefill')) - (await markers('kv-pct-prefill')))
    .toBe(0);

  // The verdict now blames decode.
  await page.getByTestId('nav-overview').click();
  await expect(page.getByTestId('verdict')).toHaveAttribute('data-kind', 'decode-bound', { timeout: 60_000 });
  // The headline quotes its leading line; the list under it does not say it again.
  const headline = await page.getByTestId('verdict-headline').innerText();
  for (const line of await page.getByTestId('verdict-evidence').locator('li').allInnerTexts())
    expect(headline).not.toContain(line);
  for (const id of ['kv-pct-prefill', 'kv-pct-decode'])
    await expect(page.getByTestId(`chart-${id}`)).toHaveAttribute('data-state', 'ready');
  await page.screenshot({ path: shot('dashboard-overview-kv-full-light.png'), fullPage: true });

  await page.keyboard.press('Control+k');
  await page.getByTestId('palette-input').fill('stop filling');
  await page.keyboard.press('Enter');
  expect(errors).toEqual([]);
});
