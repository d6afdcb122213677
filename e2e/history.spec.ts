// Charts beyond what the app saw, in Chromium on browser mode: "7 d" draws the decode KV chart from a real
// Prometheus holding a day backfilled through the app's own export (the product's composition with history
// pointed at it: bench/support/prom-history-web.ts), with a quiet note naming each part's source; and
// without any Prometheus, the same click says so on the chart in words while the live data is still drawn.
import { test, expect, type Browser } from '@playwright/test';
import { join } from 'node:path';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';
import { backfill, type Backfill } from '../test/support/prometheus-backfill';
import {
  prometheusUnavailableReason,
  startPrometheus,
  type PrometheusServer,
} from '../test/support/prometheus-server';

const unavailable = prometheusUnavailableReason();
const root = join(__dirname, '..');

test.describe.configure({ mode: 'serial' });

let browser: Browser;
test.beforeAll(async () => {
  browser = await launchChromium();
});
test.afterAll(async () => {
  await browser?.close();
});

test.describe('with the deployment’s Prometheus', () => {
  test.skip(unavailable !== null, unavailable ?? '');
  let data: Backfill;
  let prom: PrometheusServer;
  let app: WebApp;

  test.beforeAll(async () => {
    test.setTimeout(240_000);
    const end = Math.floor(Date.now() / 15_000) * 15_000 - 60_000;
    data = await backfill(end - 86_400_000, end);
    prom = await startPrometheus({
      configYaml: 'global:\n  scrape_interval: 15s\nscrape_configs: []\n',
      blocksDir: data.blocksDir,
    });
    app = await startWebApp(
      [],
      { TSX_TSCONFIG_PATH: join(root, 'tsconfig.node.json'), BENCH_PROM_URL: prom.url },
      ['--import', 'tsx', join(root, 'bench', 'support', 'prom-history-web.ts')],
    );
  });
  test.afterAll(async () => {
    await app?.stop();
    await prom?.stop();
    await data?.cleanup();
  });

  test('7 d draws from Prometheus and live, each part named under the chart', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${app.url}#/kv`);
    const chart = page.getByTestId('chart-kv-pct-decode');
    await expect(chart).toHaveAttribute('data-state', 'ready', { timeout: 60_000 });
    await page.getByTestId('range-7d').click();
    await expect(page.getByTestId('back-to-live')).toBeVisible();
    const sources = page.getByTestId('history-sources-kv-pct-decode');
    await expect(sources).toContainText('prometheus (benchmark, 7 d at 15 s) until ');
    await expect(sources).toContainText('this app (live)');
    await expect(chart).toHaveAttribute('data-state', 'ready');
    await chart.screenshot({ path: 'test-results/history-7d-kv-decode.png' });
    // prefill is not in this Prometheus: its chart says so in words, decode's is unaffected.
    await expect(page.getByTestId('history-problem-kv-pct-prefill').first()).toContainText(
      'has no data for prefill.kv_ratio',
    );
    await page.close();
  });
});

test('without a Prometheus, 7 d says so on the chart and live data stays', async () => {
  const app = await startWebApp(['--demo', '--no-open']);
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    // The 7 d window ends at the click: the Metrics page checked after it draws what was scraped before it, so
    // TTFT (a quantile of two scrapes' histogram delta) must have a point by then.
    await page.goto(`${app.url}#/metrics`);
    await expect(page.getByTestId('chart-ttft')).toHaveAttribute('data-state', 'ready', { timeout: 60_000 });
    await page.getByTestId('nav-kv').click();
    const chart = page.getByTestId('chart-kv-pct-decode');
    await expect(chart).toHaveAttribute('data-state', 'ready', { timeout: 60_000 });
    // Just opened, a 5 min chart has minutes the app did not see: not worth a word.
    await expect(page.getByTestId('history-note-kv-pct-decode')).toHaveCount(0);
    await page.getByTestId('range-7d').click();
    // Said once for the page, not under each of its charts (it was repeated under every one).
    const notice = page.getByTestId('history-page-notice');
    await expect(notice).toContainText("no Prometheus was found on this deployment's hosts");
    await expect(notice.getByTestId('history-page-problem')).toHaveCount(1);
    await expect(page.getByTestId('chart-kv-pct-prefill')).toHaveAttribute('data-state', 'ready');
    await expect(page.locator('[data-testid^=history-problem-]')).toHaveCount(0);
    await expect(chart).toHaveAttribute('data-state', 'ready');
    // A week names both ends' dates, not "Nov 29, 05:52:02 – 05:52:02".
    await expect(page.getByTestId('back-to-live')).toHaveText(
      /^[A-Z][a-z]{2} \d{1,2}, [\d:]+( [AP]M)? – [A-Z][a-z]{2} \d{1,2}, [\d:]+( [AP]M)? · back to live$/,
    );
    await page.screenshot({ path: 'test-results/history-7d-no-prometheus.png' });
    // Another page's charts: the notice is that page's, once again.
    await page.getByTestId('nav-metrics').click();
    await expect(page.getByTestId('chart-ttft')).toHaveAttribute('data-state', 'ready', { timeout: 30_000 });
    await expect(page.getByTestId('history-page-notice').getByTestId('history-page-problem')).toHaveCount(1);
    await expect(page.locator('[data-testid^=history-problem-]')).toHaveCount(0);
    await page.close();
  } finally {
    await app.stop();
  }
});
