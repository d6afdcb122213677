// Settings that persist, end to end: browser mode with the demo on a fixed data folder. An alert rule edited on
// the Alerts page and the theme picked in the UI are still there after the app process is stopped and started
// again over the same folder; two windows stay in sync; import previews its changes and keeps the old file, and
// refuses a file over 1 MiB by its size before reading it; a broken settings file is shown with
// path:line:column, the app runs on defaults, and the file is left as it was.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect, type Browser, type Page } from '@playwright/test';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';

let browser: Browser;
let app: WebApp | undefined;
const errors: string[] = [];

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
});

test.afterEach(async () => {
  await app?.stop();
  app = undefined;
  expect(errors.splice(0)).toEqual([]);
});

async function open(dataDir: string): Promise<Page> {
  app = await startWebApp(['--demo', '--no-open'], { PD_CONSOLE_DATA_DIR: dataDir });
  return openPage(app);
}

async function openPage(a: WebApp): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(a.url);
  await expect(page.getByTestId('nav-alerts')).toBeVisible({ timeout: 30_000 });
  await page.getByTestId('nav-alerts').click();
  await expect(page.getByTestId('rule-decode-kv-high')).toBeVisible();
  return page;
}

interface SavedFile {
  alerts: { rules: Array<{ id: string; threshold?: number }> };
  ui: { theme: string };
}

/** The settings file as it is on disk now; null until the first save writes it. */
const saved = (dataDir: string): SavedFile | null => {
  const file = join(dataDir, 'settings.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SavedFile) : null;
};

test('an edited alert rule and the theme survive a restart of the app', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-settings-'));
  let page = await open(dataDir);
  const threshold = page.getByTestId('rule-threshold-decode-kv-high');
  // The KV threshold is a percentage on screen, a ratio in the settings file.
  await expect(threshold).toHaveValue('90');
  await threshold.fill('42');
  await threshold.blur();
  await page.getByTestId('settings-theme').selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.getByTestId('settings-chart-range').selectOption('6h');
  // The range on screen follows the new default while the operator has not picked another one.
  await expect(page.getByTestId('range-6h')).toHaveAttribute('aria-pressed', 'true');
  await expect
    .poll(() => saved(dataDir)?.alerts.rules.find((r) => r.id === 'decode-kv-high')?.threshold)
    .toBe(0.42);
  await expect.poll(() => saved(dataDir)?.ui.theme).toBe('dark');
  await page.close();

  await app!.stop();
  page = await open(dataDir);
  await expect(page.getByTestId('rule-threshold-decode-kv-high')).toHaveValue('42');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByTestId('settings-theme')).toHaveValue('dark');
  await expect(page.getByTestId('theme-toggle')).toHaveText('Theme: dark');
  await expect(page.getByTestId('range-6h')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('settings-chart-range')).toHaveValue('6h');
  await expect(page.getByTestId('settings-path')).toContainText(join(dataDir, 'settings.json'));
  await page.close();
});

test('two windows stay in sync, and import shows what it changes and keeps settings.json.bak', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-settings-'));
  const a = await open(dataDir);
  const b = await openPage(app!);
  await a.getByTestId('settings-theme').selectOption('light');
  await expect(b.locator('html')).toHaveAttribute('data-theme', 'light');
  const t = a.getByTestId('rule-threshold-decode-kv-high');
  await t.fill('77');
  await t.blur();
  await expect(b.getByTestId('rule-threshold-decode-kv-high')).toHaveValue('77');
  const before = readFileSync(join(dataDir, 'settings.json'), 'utf8');

  const shared = JSON.stringify({
    version: 1,
    alerts: {
      rules: [
        {
          id: 'decode-kv-high',
          kind: 'kv-high',
          enabled: true,
          roles: ['decode'],
          severity: 'error',
          threshold: 0.6,
          forS: 10,
        },
      ],
    },
  });
  await b.getByTestId('settings-import-file').setInputFiles({
    name: 'team-alerts.json',
    mimeType: 'application/json',
    buffer: Buffer.from(shared),
  });
  const preview = b.getByTestId('settings-import-preview');
  await expect(preview).toContainText('Importing team-alerts.json changes');
  await expect(preview).toContainText('alerts.rules[decode-kv-high].threshold: 0.77 → 0.6');
  await expect(preview).toContainText('alerts.rules[decode-kv-high].severity: "warning" → "error"');
  await expect(preview).toContainText('alerts.rules[restart-loop].kind: "restart-loop" → (none)');
  expect(readFileSync(join(dataDir, 'settings.json'), 'utf8')).toBe(before);
  await b.getByTestId('settings-import-apply').click();
  await expect(b.getByTestId('settings-import-done')).toContainText(
    `kept as ${join(dataDir, 'settings.json.bak')}`,
  );
  expect(readFileSync(join(dataDir, 'settings.json.bak'), 'utf8')).toBe(before);
  await expect(a.getByTestId('rule-threshold-decode-kv-high')).toHaveValue('60');
  await expect(a.getByTestId('rule-restart-loop')).toHaveCount(0);
  // The theme was not in the imported file: it stays.
  await expect(a.locator('html')).toHaveAttribute('data-theme', 'light');

  // A file over 1 MiB is refused by its size before the page reads it (nothing is sent to the core).
  const after = readFileSync(join(dataDir, 'settings.json'), 'utf8');
  await b.getByTestId('settings-import-file').setInputFiles({
    name: 'huge.json',
    mimeType: 'application/json',
    buffer: Buffer.alloc(2 * 1024 * 1024, 0x20),
  });
  await expect(b.getByTestId('settings-error')).toHaveText(
    'huge.json is 2097152 bytes; a settings file is at most 1048576 bytes (1 MiB), so it was not read — ' +
      'Choose a file written by “Export settings…” (here or in another PD Console).',
  );
  await expect(b.getByTestId('settings-import-preview')).toHaveCount(0);
  expect(readFileSync(join(dataDir, 'settings.json'), 'utf8')).toBe(after);
  await a.close();
  await b.close();
});

test('a broken settings file: shown with path:line:column, the app runs on defaults, the file is left alone', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-settings-'));
  const file = join(dataDir, 'settings.json');
  const text = '{\n  "version": 1,\n  "ui": { "theme": "dark" "chartRange": "1h" }\n}\n';
  writeFileSync(file, text);
  const page = await open(dataDir);
  const banner = page.getByTestId('settings-banner');
  await expect(banner).toContainText(`${file}:3:27: not valid JSON (expected "," or "}", found """)`);
  await expect(banner).toContainText(
    'PD Console runs on default settings and will not save over this file until you fix it or move it away',
  );
  await expect(page.getByTestId('rule-threshold-decode-kv-high')).toHaveValue('90');
  await expect(page.locator('html')).not.toHaveAttribute('data-theme', 'dark');
  // A change applies to this run, and the file stays exactly as the operator left it.
  await page.getByTestId('settings-theme').selectOption('light');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  expect(readFileSync(file, 'utf8')).toBe(text);
  expect(existsSync(`${file}.bak`)).toBe(false);

  writeFileSync(file, text.replace('"dark" "chartRange"', '"dark", "chartRange"'));
  await page.getByTestId('settings-reload').click();
  await expect(banner).toBeHidden();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.close();
});
