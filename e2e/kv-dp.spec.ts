// The KV headline with DP attention, in real Chromium (browser mode): a recorded session of a demo decode
// server with 2 dp ranks opens for review, and the KV page reads the summed pool's % beside its token counts
// with the fullest dp rank named next to it (issue 13.4: a fullest-rank % beside summed tokens read as a bug).
// Browser mode has no option to start a demo with dp ranks, so the session is written with the demo's own
// simulation and metrics renderer and opened from the sessions list, as an operator would.
import { mkdtempSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect, type Browser } from '@playwright/test';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';
import { DemoSimulation } from '../src/main/demo';
import { renderServerMetrics } from '../src/main/demo/sglang-metrics';
import { parseExposition } from '../src/main/core/probes/exposition/parser';
import { SessionStore } from '../src/main/core/recording';
import { DEPLOYMENT, START } from '../test/review/helpers';
import { manualClock } from '../test/recording/helpers';

const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-kv-dp-'));
let app: WebApp | undefined;
let browser: Browser;

test.beforeAll(async () => {
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
  if (app && app.proc.exitCode === null) {
    const exited = new Promise((r) => app!.proc.once('exit', r));
    app.proc.kill('SIGTERM');
    await exited;
  }
});

async function writeDpSession(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const clock = manualClock(START);
  const sim = new DemoSimulation({ clock, era: 'E4', dpRanks: 2, historyMs: 10 * 60_000 });
  const { id, writer } = await new SessionStore(dir).start(
    {
      startedAt: START,
      host: { id: 'demo', label: 'gpu-host-01', kind: 'demo' },
      deployment: DEPLOYMENT,
      appVersion: '0.1.0-test',
    },
    { clock },
  );
  for (let i = 0; i < 120; i++) {
    clock.set(START + i * 5000);
    for (const role of ['prefill', 'decode'] as const) {
      const p = sim.units[role].server;
      if (!p || p.stage !== 'ready') continue;
      const dp = role === 'decode' ? 2 : 1;
      writer.appendScrape(clock.now(), role, parseExposition(renderServerMetrics(p, 'E4', dp), 'prometheus'));
    }
  }
  await writer.close();
  return id;
}

test('a 2-rank decode reads “N % · fullest dp rank R at M %” with N the summed pool', async () => {
  test.setTimeout(120_000);
  const id = await writeDpSession(join(dataDir, 'recordings'));
  app = await startWebApp(['--no-open'], { PD_CONSOLE_DATA_DIR: dataDir });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.url);
  await page.getByTestId('open-sessions').click();
  await page.getByTestId(`session-open-${id}`).click();
  await expect(page.getByTestId('review-bar')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('nav-kv').click();

  const kv = page.getByTestId('kv-usage-decode');
  await expect(kv.getByTestId('kv-percent')).toHaveText(/^\d{1,3}\.\d %$/);
  await expect(kv.getByTestId('kv-fullest-rank')).toHaveText(/^· fullest dp rank [01] at \d{1,3}\.\d %$/);
  await expect(kv.getByTestId('kv-tokens')).toContainText('/ 2.58M tokens');
  const pct = (s: string | null): number => Number(/([\d.]+) %/.exec(s ?? '')?.[1]);
  const headline = pct(await kv.getByTestId('kv-percent').textContent());
  const fullest = pct(await kv.getByTestId('kv-fullest-rank').textContent());
  // The summed pool can never be fuller than its fullest rank.
  expect(headline).toBeLessThanOrEqual(fullest);
  // The single-rank prefill has no rank text.
  await expect(page.getByTestId('kv-usage-prefill').getByTestId('kv-fullest-rank')).toHaveCount(0);
  expect(errors).toEqual([]);
});
