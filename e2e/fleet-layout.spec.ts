// The fleet overview's layout at the size the issue names: 1 router + 8 prefill + 8 decode on 1280×720, every
// worker row on screen, problems first, one host unreachable, an unplaced worker with its fix. No demo topology
// has 16 workers, so the core's answers here are fixture frames (test/fleet-screens/fixture.ts) sent over the
// page's real WebSocket route; the real renderer bundle lays them out in real Chromium. The same screens
// against the real core and the demo fleet are e2e/fleet-overview.spec.ts.
import { test, expect, type Browser, type Page } from '@playwright/test';
import type { ClientFrame, ServerFrame } from '../src/shared/contract';
import { shot } from './support/shots';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';
import { fleetFixture, type WorkerSpec } from '../test/fleet-screens/fixture';

let app: WebApp;
let browser: Browser;

test.beforeAll(async () => {
  app = await startWebApp(['--no-open']);
  browser = await launchChromium();
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

function eightByEight() {
  const ws: WorkerSpec[] = [];
  for (let i = 0; i < 8; i++)
    ws.push({
      id: `prefill-${i}`,
      role: 'prefill',
      host: `gpu-${String.fromCharCode(97 + (i >> 1))}`,
      port: 30100 + i,
      kv: [((i * 29) % 70) * 10_000, 1_000_000],
      running: 2 + (i % 3),
      queued: i % 2,
    });
  for (let i = 0; i < 8; i++)
    ws.push({
      id: `decode-${i}`,
      role: 'decode',
      host: `gpu-${String.fromCharCode(101 + (i >> 1))}`,
      port: 30200 + i,
      kv: [i === 5 ? 1_050_000 : ((i * 37) % 60) * 20_000, i === 5 ? 1_083_600 : 2_000_000],
      running: 10 + i,
      queued: i === 5 ? 9 : 0,
      health: i !== 2,
    });
  const f = fleetFixture(ws, {
    hosts: ['gpu-a', 'gpu-b', 'gpu-c', 'gpu-d', 'gpu-e', 'gpu-f', 'gpu-g', 'gpu-h'],
    links: { 'gpu-h': { state: 'failed', reason: 'connect ECONNREFUSED 10.1.0.18:22', at: 1 } },
    fleet: {
      unplaced: [
        {
          url: 'http://10.1.0.19:30000',
          role: 'decode',
          listedBy: ['gpu-a/sglang-router.service'],
          code: 'no-alias',
          reason:
            'decode worker http://10.1.0.19:30000 (listed by the router): no ssh alias resolves to 10.1.0.19',
          fix: 'add `Host gpu-i` / `HostName 10.1.0.19` to ~/.ssh/config',
        },
      ],
      unrouted: [],
    },
  });
  f.dashboard.verdict = {
    kind: 'decode-bound',
    headline:
      'Decode-bound: requests are piling up at decode — decode-5 on gpu-g at 97 % KV, others below 60 %.',
    evidence: ['decode-5 on gpu-g at 97 % KV, others below 60 %'],
    nextStep:
      'decode has no KV room: lower the load (the router’s max concurrency) or add decode capacity; the KV page shows which pool is full',
  };
  return f;
}

async function openWithFixture(page: Page, f: ReturnType<typeof fleetFixture>): Promise<void> {
  const answers: Record<string, unknown> = {
    getAppInfo: { version: 'fixture', shell: 'browser', platform: 'linux', autoOpenDemo: false },
    listDeployments: [f.summary],
    listEvents: [],
    getSignalCatalog: [],
    getDashboard: f.dashboard,
    getSeriesBatch: { results: [] },
  };
  await page.routeWebSocket(/\/api\?token=/, (ws) => {
    ws.onMessage((data) => {
      const req = JSON.parse(String(data)) as ClientFrame;
      const frame: ServerFrame = {
        t: 'res',
        id: req.id,
        envelope:
          req.method in answers
            ? { ok: true, result: answers[req.method] }
            : { ok: false, error: { code: 'unknown-method', message: `not in this fixture: ${req.method}` } },
      };
      ws.send(JSON.stringify(frame));
      // The page listens for pushes once it has the deployment: the latest poll then arrives as it would live.
      if (req.method === 'getDashboard')
        ws.send(JSON.stringify({ t: 'evt', event: 'observation', payload: f.latest } satisfies ServerFrame));
    });
  });
  await page.goto(app.url);
}

test('8 prefill + 8 decode on 1280×720: two groups of compact rows, all on screen, problems first', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const f = eightByEight();
  await openWithFixture(page, f);
  const decode = page.getByTestId('role-group-decode');
  await expect(decode).toBeVisible();
  await expect(page.getByTestId('worker-rows-decode').locator('tbody tr')).toHaveCount(8);
  await expect(page.getByTestId('worker-rows-prefill').locator('tbody tr')).toHaveCount(8);
  // Problems first (gpu-h unreachable: decode-6, decode-7; decode-2 unhealthy), then the fullest.
  const ids = await page
    .getByTestId('worker-rows-decode')
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((t) => t.getAttribute('data-testid')));
  expect(ids.slice(0, 4)).toEqual([
    'worker-row-decode-6',
    'worker-row-decode-7',
    'worker-row-decode-2',
    'worker-row-decode-5',
  ]);
  await expect(page.getByTestId('worker-row-decode-6').getByTestId('worker-unreachable')).toHaveText(
    'unreachable: connect ECONNREFUSED 10.1.0.18:22',
  );
  await expect(page.getByTestId('role-group-decode').getByTestId('role-fullest')).toHaveText(
    'fullest decode-5 on gpu-g at 96.9 %',
  );
  await expect(page.getByTestId('host-link-gpu-h')).toHaveAttribute('data-state', 'failed');
  await expect(page.getByTestId('unplaced-fix')).toHaveText(
    'add `Host gpu-i` / `HostName 10.1.0.19` to ~/.ssh/config',
  );
  // Every worker row lies inside the 1280×720 viewport, and the two groups sit side by side.
  for (const role of ['prefill', 'decode'])
    for (const row of await page.getByTestId(`worker-rows-${role}`).locator('tbody tr').all()) {
      const b = (await row.boundingBox())!;
      expect(b.y + b.height).toBeLessThanOrEqual(720);
      expect(b.x + b.width).toBeLessThanOrEqual(1280);
    }
  const p = (await page.getByTestId('role-group-prefill').boundingBox())!;
  const d = (await decode.boundingBox())!;
  expect(d.x).toBeGreaterThan(p.x + p.width - 1);
  await page.screenshot({ path: shot('fleet-8p8d-1280x720.png') });
  await page.close();
});
