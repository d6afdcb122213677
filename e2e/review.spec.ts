// Offline review end to end (browser mode, real Chromium): a demo session is recorded with an alert and a
// restart, the app is killed with SIGKILL, a new app on the same data folder opens the session from the
// sessions list — the alert and the restart are markers on the timeline, the data reaches to within 5 s of
// the kill, and its OpenMetrics export loads into promtool. Then: a recording dropped on the window, a file that
// is not one, and screenshots of the sessions page and review mode in light and dark.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect, type Browser, type Page } from '@playwright/test';
import { shot } from './support/shots';
import { launchChromium } from './support/browser';
import { apiCall } from './support/api';
import { collectDrawsScript, type CanvasDraw } from './support/canvas-draws';
import { startWebApp, type WebApp } from './support/web-app';
import { writeSession, type WrittenSession } from '../test/review/helpers';

const PROMTOOL = '/usr/bin/promtool';
const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-review-'));

type Running = WebApp;

/** Browser mode on this spec's data folder, so a second app finds what the first recorded. */
const startApp = (args: string[]): Promise<Running> =>
  startWebApp(['--no-open', ...args], { PD_CONSOLE_DATA_DIR: dataDir });

const call = <T>(app: Running, method: string, args: unknown): Promise<T> =>
  apiCall<T>(app.url, method, args);

async function stop(app: Running | undefined): Promise<void> {
  if (!app || app.proc.exitCode !== null || app.proc.signalCode !== null) return;
  const exited = new Promise((r) => app.proc.once('exit', r));
  app.proc.kill('SIGTERM');
  await exited;
}

let recorder: Running | undefined;
let reviewer: Running | undefined;
let browser: Browser;
let page: Page;
const errors: string[] = [];
let sessionId = '';
let killedAt = 0;
let synthetic: WrittenSession;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
  await stop(recorder);
  await stop(reviewer);
});

test('a demo session with an alert and a restart is recorded until the app is killed (SIGKILL)', async () => {
  test.setTimeout(240_000);
  // The demo host at 40× real time: a decode restart (model loading) takes seconds.
  recorder = await startApp(['--demo', '--demo-speed', '40']);
  const app = recorder;
  await expect
    .poll(
      async () => {
        const s = await call<{ active: { state: string; sessionId: string | null; samples: number }[] }>(
          app,
          'getRecordingStatus',
          {},
        );
        return s.active[0]?.state === 'recording' && s.active[0].samples > 1000
          ? s.active[0].sessionId
          : null;
      },
      { timeout: 60_000 },
    )
    .not.toBeNull();
  const status = await call<{ active: { sessionId: string }[] }>(app, 'getRecordingStatus', {});
  sessionId = status.active[0].sessionId;

  // An alert: the decode KV rule with a short hold, and the demo's KV cache filled.
  const rules = await call<{ id: string; forS?: number }[]>(app, 'getAlertRules', {});
  await call(app, 'setAlertRules', {
    rules: rules.map((r) => (r.id === 'decode-kv-high' ? { ...r, forS: 2 } : r)),
  });
  await call(app, 'demoControl', { deploymentId: 'demo', fault: 'kv-full', on: true });
  await expect
    .poll(
      async () =>
        (await call<{ kind: string; title: string }[]>(app, 'listEvents', { deploymentId: 'demo' })).some(
          (e) => e.kind === 'alert' && /KV/.test(e.title),
        ),
      { timeout: 120_000 },
    )
    .toBe(true);
  await call(app, 'demoControl', { deploymentId: 'demo', fault: 'kv-full', on: false });

  // A restart of decode through the restart API, to its end.
  const started = await call<{ operation: { id: string } }>(app, 'startRestart', {
    deploymentId: 'demo',
    target: 'decode',
  });
  await expect
    .poll(
      async () =>
        (await call<{ state: string }>(app, 'getRestart', { operationId: started.operation.id })).state,
      { timeout: 120_000 },
    )
    .not.toBe('running');
  // Some more recording after the restart, then the process dies without closing anything.
  await new Promise((r) => setTimeout(r, 4000));
  const exited = new Promise((r) => app.proc.once('exit', r));
  killedAt = Date.now();
  app.proc.kill('SIGKILL');
  await exited;
  expect(app.proc.signalCode).toBe('SIGKILL');
});

test('the killed session reopens offline: markers for the alert and the restart, data to within 5 s of the kill', async () => {
  test.setTimeout(180_000);
  expect(sessionId).not.toBe('');
  // A second, clean session for the screenshots and the drop test.
  synthetic = await writeSession(join(dataDir, 'recordings'), 20);
  reviewer = await startApp([]);
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(reviewer.url);

  await page.getByTestId('open-sessions').click();
  const row = page.locator(`[data-testid=session-row][data-id="${sessionId}"]`);
  await expect(row).toBeVisible();
  // Not closed: the app was killed. A file written in the last 30 s may belong to another running app, so it
  // reads "recording" until then; after that it is listed as interrupted, with why.
  await expect
    .poll(
      async () => {
        await page.getByTestId('sessions-refresh').click();
        return row.getAttribute('data-state');
      },
      { timeout: 60_000, intervals: [2000] },
    )
    .toBe('interrupted');
  await expect(row.getByTestId('session-warnings')).toContainText('not closed');

  await page.getByTestId(`session-open-${sessionId}`).click();
  const bar = page.getByTestId('review-bar');
  await expect(bar).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('review-integrity')).toHaveText('not closed properly');
  await expect(page.getByTestId('review-warnings')).toContainText('was not closed');
  await expect(page.getByTestId('review-indicator')).toBeVisible();

  const markers = page.getByTestId('review-marker');
  await expect(markers.and(page.locator('[data-kinds~="alert"]')).first()).toBeVisible();
  await expect(
    markers.and(page.locator('[data-kinds~="action"], [data-kinds~="restart-step"]')).first(),
  ).toBeVisible();

  // Everything up to 5 s before the kill was on disk (the writer flushes every 2 s).
  const series = await call<{ lastMs: number | null; series: { t: number[] }[] }>(reviewer, 'getSeries', {
    deploymentId: `rec:${sessionId}`,
    keys: ['decode.kv_ratio', 'router.metrics_ok'],
    maxPoints: 500,
  });
  expect(series.lastMs).not.toBeNull();
  expect(killedAt - series.lastMs!).toBeLessThanOrEqual(5000);
  expect(series.series[0].t.length).toBeGreaterThan(10);

  // Jumping to the alert: the cursor goes there and the page shows that moment (the alert firing).
  const alert = markers.and(page.locator('[data-kinds~="alert"]')).first();
  const alertTs = Number(await alert.getAttribute('data-ts'));
  await alert.click();
  await expect(page.getByTestId('review-cursor-time')).toHaveAttribute('data-ts', String(alertTs));
  await expect(page.getByTestId('alert-badge')).toHaveText(/[1-9]/);
  await expect(page.getByTestId('review-journal').getByTestId('journal-line').first()).toBeVisible();
  // Restart actions are not offered on a recording.
  await expect(page.locator('[data-testid^=restart-button-]')).toHaveCount(0);

  // The monitor's GPU readings were recorded: the GPU page draws them from the file, and its table shows the
  // reading at the cursor (put at the last scrape, after several nvidia-smi readings).
  await page.getByTestId('nav-metrics').click();
  await expect(page.getByTestId('chart-gpu-decode-util')).toHaveAttribute('data-state', 'ready', {
    timeout: 20_000,
  });
  await expect(page.getByTestId('chart-gpu-prefill-temp')).toHaveAttribute('data-state', 'ready');
  await call(reviewer, 'setReviewCursor', { deploymentId: `rec:${sessionId}`, ts: series.lastMs });
  await expect(page.getByTestId('gpu-table').locator('tbody tr')).toHaveCount(8);
  await expect(page.getByTestId('gpu-row-6')).toContainText('decode');
  await expect(page.getByTestId('gpu-row-6')).toContainText(/\d+ °C/);

  // The charted signals as CSV, downloaded by the browser (browser mode: the backend's disk may be another
  // machine's): a column per signal key, a row per scrape — not every raw series.
  await page.getByTestId('review-export').click();
  const [csv] = await Promise.all([
    page.waitForEvent('download', { timeout: 60_000 }),
    page.getByTestId('review-export-csv').click(),
  ]);
  expect(csv.suggestedFilename()).toMatch(/\.signals\.csv$/);
  const csvText = readFileSync((await csv.path())!, 'utf8');
  const [head, ...rows] = csvText.trimEnd().split('\n');
  expect(head.split(',').slice(0, 2)).toEqual(['time_utc', 'timestamp_ms']);
  expect(head.split(',')).toEqual(expect.arrayContaining(['decode.kv_ratio', 'prefill.kv_ratio']));
  expect(rows.length).toBeGreaterThan(10);
  expect(head).not.toContain('sglang:');
  await expect(page.getByTestId('review-export-result')).toContainText(
    `Downloaded ${csv.suggestedFilename()}`,
  );

  // OpenMetrics export of the session (downloaded too), loaded into promtool from the backend's copy.
  await page.getByTestId('review-export-openmetrics').click();
  const result = page.getByTestId('review-export-result');
  await expect(result).toHaveAttribute('data-path', /\.om\.txt$/, { timeout: 60_000 });
  const path = (await result.getAttribute('data-path'))!;
  expect(path).toMatch(/\.om\.txt$/);
  if (!existsSync(PROMTOOL)) {
    test
      .info()
      .annotations.push({ type: 'skip', description: `${PROMTOOL} is absent: promtool check skipped` });
    console.warn(`SKIPPED: ${PROMTOOL} not installed, the OpenMetrics export was not loaded into promtool`);
  } else {
    const blocks = mkdtempSync(join(tmpdir(), 'pdc-e2e-tsdb-'));
    const r = spawnSync(PROMTOOL, ['tsdb', 'create-blocks-from', 'openmetrics', path, blocks], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, `promtool said:\n${r.stdout}\n${r.stderr}`).toBe(0);
    expect(readFileSync(path, 'utf8')).toContain('# EOF');
  }
  expect(errors).toEqual([]);
});

// Counts each canvas's draws (Chart.js clears the canvas once per draw) and, when its chart turns ready, how
// many draws that took.
/** Each chart's draws (e2e/support/canvas-draws.ts) at the moment it turned ready, in window.__drawsAtReady. */
const DRAWS_AT_READY = `
  window.__drawsAtReady = {};
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.target.getAttribute('data-state') !== 'ready') continue;
      const id = r.target.getAttribute('data-testid').replace(/^chart-/, 'canvas-');
      if (!(id in window.__drawsAtReady))
        window.__drawsAtReady[id] = window.__canvasDraws.filter((d) => d.id === id).length;
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
`;

/** Draws per canvas test id ('' for the canvases without one: the chart code's warm-up off screen). */
const drawsPerCanvas = (p: Page): Promise<Record<string, number>> =>
  p.evaluate(() => {
    const n: Record<string, number> = {};
    for (const d of (window as unknown as { __canvasDraws: CanvasDraw[] }).__canvasDraws)
      n[d.id ?? ''] = (n[d.id ?? ''] ?? 0) + 1;
    return n;
  });

test('opening a session asks for its first screen once and draws each chart once', async () => {
  test.setTimeout(60_000);
  const p = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  p.on('pageerror', (e) => errors.push(e.message));
  const warnings: string[] = [];
  p.on('console', (m) => void (m.type() === 'warning' && warnings.push(m.text())));
  await p.addInitScript(collectDrawsScript);
  await p.addInitScript(DRAWS_AT_READY);
  type Sent = { method: string; args: { deploymentId?: string; fromMs?: number; toMs?: number } };
  const sent: Sent[] = [];
  p.on('websocket', (ws) =>
    ws.on('framesent', (f) => {
      const frame = JSON.parse(String(f.payload)) as Sent;
      sent.push({ method: frame.method, args: frame.args });
    }),
  );
  // Straight to the sessions page (the review of the killed session may be open and on screen).
  await p.goto(`${reviewer!.url}#/sessions`);
  const open = p.getByTestId(`session-open-${synthetic.id}`);
  await expect(open).toBeVisible();
  // While the list waits for a click, the chart code has been run once off screen (charts/warm-up.ts), so the
  // first chart of the review does not pay for compiling it.
  await expect.poll(async () => (await drawsPerCanvas(p))[''] ?? 0).toBeGreaterThan(0);
  sent.length = 0;
  await open.click();
  const charts = p.locator('[data-testid^="chart-kv-pct-"]');
  await expect(charts).toHaveCount(2);
  for (const c of await charts.all()) await expect(c).toHaveAttribute('data-state', 'ready');
  // The catalogue and the state at the cursor come with the open; the charts' one request asks for the
  // whole session (the first render used to ask for the live range first, then render again and ask again).
  const id = `rec:${synthetic.id}`;
  const first = sent
    .filter(
      (s) => s.method === 'openSessionReview' || (s.args.deploymentId === id && s.method !== 'journalAround'),
    )
    .map((s) => s.method);
  expect(first).toEqual(['openSessionReview', 'getSeriesBatch']);
  const span = await call<{ firstMs: number | null; lastMs: number | null }>(reviewer!, 'getSeries', {
    deploymentId: id,
    keys: ['decode.kv_ratio'],
    maxPoints: 10,
  });
  const batch = sent.find((s) => s.method === 'getSeriesBatch' && s.args.deploymentId === id)!;
  expect(batch.args.fromMs).toBeLessThanOrEqual(span.firstMs!);
  expect(batch.args.toMs).toBeGreaterThan(span.lastMs!);
  // Built with its history: one draw, not an empty chart drawn and then drawn again with the data. A chart
  // turns ready with its data; it is drawn then if its canvas is on screen, else when it gets there (here the
  // overview's cards above it are still settling when the answer comes), so the draws are counted once it is.
  const drawn = async (): Promise<{ atReady: Record<string, number>; all: Record<string, number> }> => {
    const { ['']: _warmUp, ...all } = await drawsPerCanvas(p);
    const atReady = await p.evaluate(
      () => (window as unknown as { __drawsAtReady: Record<string, number> }).__drawsAtReady,
    );
    return { atReady, all };
  };
  await expect
    .poll(async () => (await drawn()).all)
    .toEqual({ 'canvas-kv-pct-prefill': 1, 'canvas-kv-pct-decode': 1 });
  await p.waitForTimeout(500);
  const { atReady, all } = await drawn();
  expect(all).toEqual({ 'canvas-kv-pct-prefill': 1, 'canvas-kv-pct-decode': 1 });
  for (const n of Object.values(atReady)) expect(n).toBeLessThanOrEqual(1);
  await p.getByTestId('close-deployment').click();
  await p.close();
  expect(errors).toEqual([]);
  expect(warnings.filter((w) => w.includes('PD Console'))).toEqual([]);
});

test('a recording dropped on the window opens for review; a file that is not one says why', async () => {
  test.setTimeout(120_000);
  await page.getByTestId('close-deployment').click();
  const other = mkdtempSync(join(tmpdir(), 'pdc-e2e-drop-'));
  const dropped = await writeSession(other, 3, { seed: 21 });
  const drop = async (name: string, base64: string): Promise<void> => {
    await page.evaluate(
      ({ name, base64 }) => {
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], name));
        for (const type of ['dragenter', 'dragover', 'drop'])
          window.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
      },
      { name, base64 },
    );
  };
  await drop('notes.txt', Buffer.from('just some notes').toString('base64'));
  await expect(page.getByTestId('drop-error')).toContainText('notes.txt is not a PD Console recording');
  await page.getByTestId('drop-error-close').click();

  await drop('from-a-colleague.pdrec.jsonl.gz', readFileSync(dropped.path).toString('base64'));
  await expect(page.getByTestId('review-bar')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('review-name')).toHaveText('Demo PD on gpu-host-01');
  await expect(page.getByTestId('review-marker').and(page.locator('[data-kinds~="alert"]'))).toHaveCount(1);
  await page.getByTestId('close-deployment').click();
  expect(errors).toEqual([]);
});

test('a session of an older format is re-saved from the sessions list and then opens from its overview', async () => {
  test.setTimeout(180_000);
  const old = await writeSession(join(dataDir, 'recordings'), 3, { seed: 33, format: '1.1' });
  await page.getByTestId('open-sessions').click();
  const row = page.locator(`[data-testid=session-row][data-id="${old.id}"]`);
  await expect(row.getByTestId('session-warnings')).toContainText(
    'recorded in an older format: opens the slow way',
    {
      timeout: 30_000,
    },
  );
  await page.getByTestId(`session-resave-${old.id}`).click();
  await expect(row.getByTestId('session-warnings')).toHaveCount(0, { timeout: 120_000 });
  await expect(page.getByTestId(`session-resave-${old.id}`)).toHaveCount(0);
  await page.getByTestId(`session-open-${old.id}`).click();
  await expect(page.getByTestId('review-bar')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('review-bar')).not.toContainText('older format');
  await page.getByTestId('close-deployment').click();
  expect(errors).toEqual([]);
});

test('screenshots: sessions page and review mode, light and dark', async () => {
  test.setTimeout(120_000);
  await page.getByTestId('open-sessions').click();
  await expect(page.getByTestId('sessions-table')).toBeVisible();
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.waitForTimeout(300);
    await page.screenshot({ path: shot(`review-sessions-${scheme}.png`), fullPage: true });
  }
  await page.getByTestId(`session-open-${synthetic.id}`).click();
  await expect(page.getByTestId('review-bar')).toBeVisible({ timeout: 60_000 });
  await page.locator('[data-testid=review-marker][data-kinds~="alert"]').first().click();
  // Just after the crash: decode is restarting, the alert is firing, the journal has the error.
  await page.getByTestId('review-track').focus();
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('review-journal')).toContainText('CUDA error');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    // Charts take their colours when they mount: show the page again in this scheme.
    await page.getByTestId('nav-kv').click();
    await page.getByTestId('nav-overview').click();
    await page.waitForTimeout(1500);
    await page.screenshot({ path: shot(`review-overview-${scheme}.png`), fullPage: true });
  }
  await page.getByTestId('nav-metrics').click();
  await page.emulateMedia({ colorScheme: 'light' });
  await page.waitForTimeout(2500);
  await page.screenshot({ path: shot('review-metrics-light.png') });
  // Playback moves the cursor.
  const before = Number(await page.getByTestId('review-cursor-time').getAttribute('data-ts'));
  await page.getByTestId('review-speed-60').click();
  await page.getByTestId('review-play').click();
  await expect
    .poll(async () => Number(await page.getByTestId('review-cursor-time').getAttribute('data-ts')))
    .toBeGreaterThan(before + 30_000);
  await page.getByTestId('review-play').click();
  // A note pinned at the cursor becomes a marker at once.
  await page.getByTestId('review-note').click();
  await page.getByTestId('review-note-text').fill('traffic came back here');
  await page.getByTestId('review-note-save').click();
  await expect(page.locator('[data-testid=review-marker][data-kinds~="annotation"]')).toHaveCount(1);
  expect(errors).toEqual([]);
});
