// The Prometheus panel in real Chromium (browser mode, the demo host, which runs no Prometheus by default):
// it says none was found and shows the prometheus.yml to run; both exports download as files a user can use;
// a URL of the operator's own that nothing answers is said in words, one carrying a user and password is used
// as basic auth without showing the password, and the rest of the page keeps working.
import { readFileSync } from 'node:fs';
import { test, expect, type Browser } from '@playwright/test';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';

let browser: Browser;
let app: WebApp;
const errors: string[] = [];

test.beforeAll(async () => {
  browser = await launchChromium();
  app = await startWebApp(['--demo', '--no-open']);
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

test('no Prometheus found: the config to run, the exports, and an unreachable URL in words', async () => {
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 }, acceptDownloads: true });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.url);
  await expect(page.getByTestId('nav-metrics')).toBeVisible({ timeout: 30_000 });
  await page.getByTestId('nav-metrics').click();
  const panel = page.getByTestId('prometheus-panel');
  await expect(panel.getByTestId('prometheus-none')).toBeVisible({ timeout: 30_000 });
  await expect(panel.getByTestId('prometheus-suggested')).toContainText('job_name: sglang-decode');
  await expect(panel.getByTestId('prometheus-suggested')).toContainText('127.0.0.1:30200');

  const [cfg] = await Promise.all([
    page.waitForEvent('download'),
    panel.getByTestId('prometheus-export-config').click(),
  ]);
  expect(cfg.suggestedFilename()).toBe('prometheus-demo.yml');
  const saved = readFileSync((await cfg.path())!, 'utf8');
  expect(saved).toContain('scrape_configs:');
  // Where to run it and how to install it: in the file, and said beside the buttons.
  expect(saved).toContain('# Where to run it: on demo, where every target is');
  expect(saved).toContain('#   promtool check config prometheus-demo.yml');
  await expect(panel.getByTestId('prometheus-config-howto')).toContainText(
    'sudo install -m 0644 prometheus-demo.yml /etc/prometheus/prometheus.yml',
  );

  const [dash] = await Promise.all([
    page.waitForEvent('download'),
    panel.getByTestId('prometheus-export-dashboard').click(),
  ]);
  expect(dash.suggestedFilename()).toBe('grafana-demo.json');
  const json = JSON.parse(readFileSync((await dash.path())!, 'utf8')) as { panels: unknown[] };
  expect(json.panels.length).toBeGreaterThan(10);

  await panel.getByText('Use another Prometheus (URL)').click();
  await panel.getByPlaceholder('http://127.0.0.1:9090').fill('http://127.0.0.1:1');
  await panel.getByRole('button', { name: 'Use it' }).click();
  await expect(panel.getByTestId('prometheus-problem')).toContainText('cannot be reached', {
    timeout: 30_000,
  });
  await expect(panel.getByTestId('prometheus-source')).toContainText('http://127.0.0.1:1');

  // A user and password typed into the URL: used as basic auth, said, and gone from the screen.
  const url = panel.getByPlaceholder('http://127.0.0.1:9090');
  await url.fill('https://ops:Sekrit-e2e@127.0.0.1:1/');
  await expect(panel.getByTestId('prometheus-ca-file')).toBeVisible();
  await panel.getByRole('button', { name: 'Use it' }).click();
  await expect(panel.getByTestId('prometheus-warning')).toContainText(
    'moved to the secret store as basic auth for https://127.0.0.1:1 only',
    { timeout: 30_000 },
  );
  await expect(panel.getByTestId('prometheus-source')).toContainText(
    'https://127.0.0.1:1, dialled from this computer, basic auth',
  );
  await expect(url).toHaveValue('https://127.0.0.1:1');
  expect(await page.content()).not.toContain('Sekrit-e2e');
  // The page's charts are unaffected.
  await expect(page.getByTestId('page-metrics')).toBeVisible();
  expect(errors).toEqual([]);
});
