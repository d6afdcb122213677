// Charts ask once: opening the KV or the Metrics page fetches the history of all its charts in one request,
// and a zoom refines every chart with one more; a window reaching past the live store (the demo's is minutes
// old) asks for the older part in one more for all charts. Counted on the real WebSocket between the page and
// the backend. The per-chart path (`?batch=0`, the benchmark's switch) is counted the same way, so the counter is
// shown to see every request.
import { test, expect, type Browser, type Page, type WebSocket } from '@playwright/test';
import { shot } from './support/shots';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';
import { collectPerfScript, type ChartPerfRecord } from './support/chart-perf';
import { collectDrawsScript, type CanvasDraw } from './support/canvas-draws';
import { decodeServerFrame } from '../src/shared/wire-frame';

let app: WebApp;
let browser: Browser;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  app = await startWebApp(['--demo', '--no-open']);
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

interface HistoryRequest {
  method: 'getSeries' | 'getSeriesBatch' | 'getHistory' | 'getHistoryBatch';
  args: { fromMs?: number; toMs?: number; keys?: string[]; groups?: { keys: string[] }[] };
}

/** A page whose history requests (every frame it sends with getSeries or getSeriesBatch) are recorded. */
async function openCounted(
  query = '',
): Promise<{ page: Page; requests: HistoryRequest[]; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const requests: HistoryRequest[] = [];
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('websocket', (ws: WebSocket) =>
    ws.on('framesent', (f) => {
      const frame = JSON.parse(String(f.payload)) as { t?: string; method?: string; args?: unknown };
      if (
        frame.t === 'req' &&
        (frame.method === 'getSeries' ||
          frame.method === 'getSeriesBatch' ||
          frame.method === 'getHistory' ||
          frame.method === 'getHistoryBatch')
      )
        requests.push({ method: frame.method, args: frame.args as HistoryRequest['args'] });
    }),
  );
  await page.goto(`${app.url}${query}#/overview`);
  await expect(page.getByTestId('pipeline')).toBeVisible({ timeout: 30_000 });
  // The overview's own charts have asked; what follows is the next page's.
  await expect(page.getByTestId('chart-kv-pct-decode')).toHaveAttribute('data-state', 'ready', {
    timeout: 20_000,
  });
  return { page, requests, errors };
}

/** Every chart of the page has its history (or says why it has none). */
async function chartsSettled(page: Page): Promise<number> {
  const charts = page.locator('[data-testid^="chart-"][data-state]');
  await expect(charts.first()).toBeVisible();
  await expect(page.locator('[data-testid^="chart-"][data-state="loading"]')).toHaveCount(0, {
    timeout: 20_000,
  });
  // Give a straggler the time to ask: a second request would come right after the first answers.
  await page.waitForTimeout(1500);
  return charts.count();
}

/**
 * Makes the PD-queues row the first one below the fold, whatever the fonts and the sources' lengths make of
 * the page: the viewport ends just above that row's canvases, inside the charts' 100 px look-ahead.
 * Returns the viewport's height.
 */
async function foldAboveQueues(page: Page): Promise<number> {
  const top = await page.getByTestId('canvas-queues').evaluate((c) => c.getBoundingClientRect().top);
  const height = Math.floor(top) - 10;
  await page.setViewportSize({ width: 1440, height });
  return height;
}

const keysOf = (r: HistoryRequest): string[] => r.args.groups?.flatMap((g) => g.keys) ?? r.args.keys!;

const isOlder = (r: HistoryRequest): boolean => r.method === 'getHistory' || r.method === 'getHistoryBatch';
/** The requests to the live store, without the older history's. */
const liveAsks = (requests: HistoryRequest[]): HistoryRequest[] => requests.filter((r) => !isOlder(r));

/** The older history, if the window reaches past the live store, in at most one request for all the charts. */
function expectOlderAtMostOnce(requests: HistoryRequest[], charts: number): void {
  const older = requests.filter(isOlder);
  expect(older.map((r) => r.method)).toEqual(older.length ? ['getHistoryBatch'] : []);
  if (older.length) expect(older[0].args.groups!.length).toBeLessThanOrEqual(charts);
}

for (const [name, nav, sample] of [
  ['KV', 'nav-kv', 'decode.kv_capacity'],
  ['Metrics', 'nav-metrics', 'gpu.4.util@demo'],
] as const) {
  test(`the ${name} page asks for the history of all its charts in one request, and a zoom asks once more`, async () => {
    const { page, requests, errors } = await openCounted();
    requests.length = 0;
    await page.getByTestId(nav).click();
    const charts = await chartsSettled(page);
    expect(charts).toBeGreaterThanOrEqual(name === 'KV' ? 6 : 15);
    expect(liveAsks(requests).map((r) => r.method)).toEqual(['getSeriesBatch']);
    expect(requests[0].args.groups).toHaveLength(charts);
    expect(keysOf(requests[0])).toContain(sample);
    // The demo's live store is minutes old and the page shows a longer range: every chart asks for the older
    // part, all in one request.
    expect(requests.filter(isOlder).length).toBe(1);
    expectOlderAtMostOnce(requests, charts);
    await page.screenshot({ path: shot(`chart-requests-${name.toLowerCase()}.png`), fullPage: true });

    requests.length = 0;
    const box = (await page.locator('[data-testid^="canvas-"]').first().boundingBox())!;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * 0.5, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.9, y, { steps: 5 });
    await page.mouse.up();
    await expect(page.getByTestId('back-to-live')).toBeVisible();
    await chartsSettled(page);
    expect(liveAsks(requests).map((r) => r.method)).toEqual(['getSeriesBatch']);
    expect(requests[0].args.groups).toHaveLength(charts);
    expect(requests[0].args.toMs! - requests[0].args.fromMs!).toBeGreaterThan(0);
    expectOlderAtMostOnce(requests, charts);

    requests.length = 0;
    await page.getByTestId('back-to-live').click();
    await chartsSettled(page);
    expect(liveAsks(requests).map((r) => r.method)).toEqual(['getSeriesBatch']);
    expectOlderAtMostOnce(requests, charts);
    expect(errors).toEqual([]);
    await page.close();
  });
}

test('the per-chart path the benchmark compares with makes one request per chart', async () => {
  const { page, requests } = await openCounted('&batch=0');
  requests.length = 0;
  await page.getByTestId('nav-kv').click();
  const charts = await chartsSettled(page);
  expect(liveAsks(requests).map((r) => r.method)).toEqual(Array<string>(charts).fill('getSeries'));
  await page.close();
});

test('the charts below the fold are drawn with their history too, without scrolling', async () => {
  const { page, errors } = await openCounted();
  await page.getByTestId('nav-metrics').click();
  await chartsSettled(page);
  // The last GPU chart is far below a 900 px viewport; the page draws it once the charts on screen are drawn.
  const last = page.getByTestId('canvas-gpu-decode-power');
  const inked = (): Promise<number> =>
    last.evaluate((c) => {
      const el = c as HTMLCanvasElement;
      const px = el.getContext('2d')!.getImageData(0, 0, el.width, el.height).data;
      const colours = new Set<number>();
      for (let i = 0; i < px.length; i += 4 * 97) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
      return colours.size;
    });
  // Axes, grid, labels and lines: more than a blank or a background-only canvas.
  await expect.poll(inked).toBeGreaterThan(3);
  expect(await last.evaluate((c) => c.getBoundingClientRect().top)).toBeGreaterThan(900);
  expect(errors).toEqual([]);
  await page.close();
});

test('the charts on screen are shown before those just below it are built, which follow without a scroll', async () => {
  const { page, errors } = await openCounted();
  // A first visit to place the fold; the page is built anew on the next.
  await page.getByTestId('nav-metrics').click();
  await chartsSettled(page);
  const fold = await foldAboveQueues(page);
  await page.getByTestId('nav-overview').click();
  await expect(page.getByTestId('pipeline')).toBeVisible();
  // When each chart first drew, and when the first animation frame after that draw began: a chart drawn in
  // the same task as others is on screen only once they are all drawn.
  await page.evaluate(collectPerfScript);
  await page.getByTestId('nav-metrics').click();
  await chartsSettled(page);
  const drawn = await page.evaluate(() =>
    (window as unknown as { __chartPerf: ChartPerfRecord[] }).__chartPerf
      .filter((r) => r.kind === 'first-paint')
      .map((r) => ({
        id: r.chart,
        end: r.end,
        frame: r.frame,
        top: document.querySelector(`[data-testid="canvas-${r.chart}"]`)!.getBoundingClientRect().top,
      })),
  );
  // The third row's titles are on screen and its canvases start just below (inside the charts' 100 px
  // look-ahead); the GPU charts are far below. A chart paints first when it has data: "KV transfer failures"
  // has none until a transfer fails (SGLang's labelled counter appears at its first increment), so the row is
  // named by the two that always have.
  const onScreen = drawn.filter((d) => d.top < fold);
  const justBelow = drawn.filter((d) => d.top >= fold && d.top < fold + 100);
  const tops = JSON.stringify(drawn.map((d) => [d.id, Math.round(d.top)]));
  expect(
    onScreen.map((d) => d.id),
    tops,
  ).toEqual(expect.arrayContaining(['ttft', 'prompt-tps', 'cache-hit']));
  expect(
    justBelow.map((d) => d.id),
    tops,
  ).toEqual(expect.arrayContaining(['queues', 'kv-transfer']));
  // The frame that shows the last chart on screen began before any chart below it was built: building the
  // four below in the same task made the operator wait for charts they could not see.
  const shown = Math.max(...onScreen.map((d) => d.frame));
  expect(shown).toBeLessThan(Math.min(...justBelow.map((d) => d.end)));
  // …and they were built without a scroll.
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
  expect(errors).toEqual([]);
  await page.close();
});

test('after a zoom the charts on screen are shown refined before those just below it redraw, which follow without a scroll', async () => {
  const { page, errors } = await openCounted();
  await page.getByTestId('nav-metrics').click();
  await chartsSettled(page);
  const fold = await foldAboveQueues(page);
  // Every chart is built by now (those below the fold when the page was idle). From here on, each draw of a
  // chart's canvas is noted with the chart and the time.
  await page.evaluate(collectDrawsScript);
  await page.evaluate(collectPerfScript);
  const tops = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('[data-testid^="canvas-"]')].map((c) => [
        c.getAttribute('data-testid')!.slice('canvas-'.length),
        c.getBoundingClientRect().top,
      ]),
    ),
  );
  const ids = Object.keys(tops);
  const onScreen = ids.filter((id) => tops[id] < fold);
  const justBelow = ids.filter((id) => tops[id] >= fold && tops[id] < fold + 100);
  const farBelow = ids.filter((id) => tops[id] >= fold + 100);
  expect(justBelow).toEqual(expect.arrayContaining(['queues', 'kv-transfer', 'transfer-failures']));
  expect(farBelow).toEqual(expect.arrayContaining(['gpu-decode-power']));
  const box = (await page.getByTestId('canvas-ttft').boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.4, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.6, y, { steps: 4 });
  await page.evaluate(
    () => ((window as unknown as { __canvasDraws: CanvasDraw[] }).__canvasDraws.length = 0),
  );
  await page.mouse.up();
  const refined = (): Promise<ChartPerfRecord[]> =>
    page.evaluate(() =>
      (window as unknown as { __chartPerf: ChartPerfRecord[] }).__chartPerf.filter(
        (r) => r.kind === 'zoom-refined',
      ),
    );
  await expect.poll(async () => (await refined()).length).toBe(ids.length);
  await page.waitForTimeout(500);
  const draws = await page.evaluate(
    () => (window as unknown as { __canvasDraws: CanvasDraw[] }).__canvasDraws,
  );
  const byChart = (id: string): number[] => draws.filter((d) => d.id === `canvas-${id}`).map((d) => d.at);
  // The charts on screen were redrawn on the zoomed window, and the frame that shows the last of them began
  // before any chart just below the fold was redrawn: those four no longer hold up what the operator sees.
  for (const id of onScreen) expect(byChart(id).length, id).toBeGreaterThan(0);
  const shown = Math.max(...(await refined()).filter((r) => onScreen.includes(r.chart)).map((r) => r.frame));
  for (const id of justBelow) {
    expect(byChart(id).length, `${id} is redrawn without a scroll`).toBeGreaterThan(0);
    expect(Math.min(...byChart(id)), `${id} is redrawn after the frame`).toBeGreaterThan(shown);
  }
  // The charts far below take the zoomed data without drawing, and draw it when scrolled to.
  for (const id of farBelow) expect(byChart(id), id).toEqual([]);
  await page.getByTestId('canvas-gpu-decode-power').scrollIntoViewIfNeeded();
  await expect
    .poll(() =>
      page.evaluate(
        () =>
          (window as unknown as { __canvasDraws: CanvasDraw[] }).__canvasDraws.filter(
            (d) => d.id === 'canvas-gpu-decode-power',
          ).length,
      ),
    )
    .toBeGreaterThan(0);
  expect(errors).toEqual([]);
  await page.close();
});

test('after a zoom the charts that follow wait for the zoomed window’s data, and redraw without it when it is late', async () => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Every frame passes through; the answer to a zoom's request (a fixed window: fromMs and toMs) is held
  // until the test releases it, as a slow core would hold it.
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => (release = r));
  const held = new Set<number>();
  await page.routeWebSocket(/\/api\?token=/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((m) => {
      const f = JSON.parse(String(m)) as { id: number; method: string; args: { toMs?: number } };
      if (f.method === 'getSeriesBatch' && f.args.toMs !== undefined) held.add(f.id);
      server.send(m);
    });
    server.onMessage((m) => {
      const f = decodeServerFrame(m);
      if (f.t === 'res' && held.has(f.id)) void released.then(() => ws.send(m));
      else ws.send(m);
    });
  });
  await page.goto(`${app.url}#/kv`);
  await chartsSettled(page);
  const measures = (kind: string): Promise<string[]> =>
    page.evaluate(
      (k) =>
        performance
          .getEntriesByType('measure')
          .filter((e) => e.name.startsWith('pdc:') && e.name.endsWith(`:${k}`))
          .map((e) => e.name.split(':')[1]),
      kind,
    );
  await page.evaluate(() => performance.clearMeasures());
  const canvases = page.locator('[data-testid^="canvas-"]');
  const ids = await canvases.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')!.slice(7)));
  const box = (await canvases.first().boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.5, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.9, y, { steps: 5 });
  await page.mouse.up();
  // The answer is late: every chart on screen still follows the zoom with the points it holds…
  await expect.poll(async () => (await measures('zoom')).sort()).toEqual([...ids].sort());
  expect(await measures('zoom-refined')).toEqual([]);
  // …and is refined once the answer comes.
  release();
  await expect.poll(async () => (await measures('zoom-refined')).sort()).toEqual([...ids].sort());
  expect(errors).toEqual([]);
  await page.close();
});
