// The demo fleet end to end: browser mode, the real core, three simulated hosts on 127.0.0.2–.4 reached over
// real SSH, real Chromium. The first-run screen offers the fleet; its overview fans out into the router, two
// prefill and three decode workers on their hosts, each with its own state and KV; a worker page by service id.
import { test, expect } from '@playwright/test';
import { shot } from './support/shots';
import { DEMO_FLEET_WORKERS, pageSession } from './support/page-session';

// One fleet opened once; the tests read it in order.
const session = pageSession(['--no-open']);

const WORKERS = DEMO_FLEET_WORKERS;

test('the first-run screen opens the demo fleet: 5 workers on 3 hosts, each live with its host and KV', async () => {
  const { app, page, errors } = session;
  test.setTimeout(120_000);
  await page.goto(app.url);
  await expect(page.getByTestId('demo-fleet-line')).toContainText('three hosts');
  await page.getByTestId('open-demo-fleet').click();

  await expect(page.getByTestId('page-overview')).toHaveAttribute('data-fleet', 'true', { timeout: 60_000 });
  // The fleet's long name is cut to fit the bar at 1280 px, beside the connection, and whole on hover.
  const title = page.getByTestId('deployment-title');
  const name = (await title.textContent())!;
  expect(name).toMatch(/^Demo fleet: 2 prefill \+ 3 decode on 3 hosts/);
  await expect(title).toHaveAttribute('title', name);
  expect(await title.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  const [t, c] = [await title.boundingBox(), await page.getByTestId('connection-state').boundingBox()];
  expect(t!.x + t!.width).toBeLessThanOrEqual(c!.x);
  for (const h of ['gpu-a', 'gpu-b', 'gpu-c'])
    await expect(page.getByTestId(`host-link-${h}`)).toHaveAttribute('data-state', 'connected', {
      timeout: 30_000,
    });
  await expect(page.getByTestId('service-card-router')).toHaveAttribute('data-host', 'gpu-a');
  await expect(page.getByTestId('service-card-router').getByTestId('router-lists')).toHaveText(
    '2 prefill · 3 decode',
  );
  for (const [id, host] of Object.entries(WORKERS)) {
    const row = page.getByTestId(`worker-row-${id}`);
    await expect(row).toHaveAttribute('data-host', host);
    await expect(row.getByTestId('worker-state')).toContainText('active', { timeout: 30_000 });
    await expect(row.getByTestId('worker-kv')).toHaveText(/^\d{1,3} %$/, { timeout: 30_000 });
    // Its own scrape's figures, not "—": running · queued requests as numbers, then "+n" while requests wait
    // in its PD stage queues.
    await expect(row.getByTestId('worker-requests')).toHaveText(/^\d+ · \d+( \+\d+)?$/, { timeout: 30_000 });
  }
  // Each role's PD stage queues beside its scheduler queue, read from the workers' own gauges.
  await expect(page.getByTestId('role-group-prefill').getByTestId('role-requests')).toHaveText(
    /^\d+ running · \d+ queued · \d+ bootstrap · \d+ inflight$/,
  );
  await expect(page.getByTestId('role-group-decode').getByTestId('role-requests')).toHaveText(
    /^\d+ running · \d+ queued · \d+ prealloc · \d+ transfer$/,
  );
  await expect(page.getByTestId('worker-rows-decode').locator('tbody tr')).toHaveCount(3);
  await expect(page.getByTestId('worker-rows-prefill').locator('tbody tr')).toHaveCount(2);
  await expect(page.getByTestId('role-group-decode').getByTestId('role-healthy')).toHaveText('3/3 healthy', {
    timeout: 30_000,
  });
  // The role's total in tokens (its sum over the workers is test/fleet-screens/fleet-model.test.ts's).
  await expect(page.getByTestId('role-group-decode').getByTestId('role-kv')).toHaveText(
    /^KV \d{1,3}\.\d % · [\d.]+[kM]? \/ [\d.]+M$/,
  );
  await expect(page.getByTestId('role-group-decode').getByTestId('role-fullest')).toHaveText(
    /^fullest decode-\d on gpu-b at \d{1,3}\.\d %$/,
  );

  // Sorted fullest first (no worker has a problem now).
  const ratios = await page
    .getByTestId('worker-rows-decode')
    .locator('tbody tr [data-testid="worker-kv"]')
    .evaluateAll((tds) => tds.map((t) => Number(t.getAttribute('data-ratio'))));
  expect([...ratios].sort((a, b) => b - a)).toEqual(ratios);

  await page.waitForTimeout(1500);
  await page.screenshot({ path: shot('fleet-overview-1280x720.png') });
  expect(errors).toEqual([]);
});

test('a worker page by service id: decode-2 spans gpu-b (node rank 0) and gpu-c (node rank 1)', async () => {
  const { page, errors } = session;
  await page.getByTestId('worker-row-decode-2').click();
  await expect(page).toHaveURL(/#\/worker\/decode-2$/);
  const p = page.getByTestId('worker-page');
  await expect(p).toHaveAttribute('data-worker', 'decode-2');
  await expect(p.getByTestId('worker-unit-gpu-b')).toContainText('sglang-decode-2.service');
  await expect(p.getByTestId('worker-unit-gpu-c')).toContainText('sglang-decode-2.service');
  await expect(p.getByTestId('worker-unit-gpu-c').locator('td').nth(2)).toHaveText('1');
  await expect(p.getByTestId('worker-unit-gpu-c').locator('td').nth(3)).toHaveText('active', {
    timeout: 30_000,
  });
  await expect(p.getByTestId('prop-URL')).toContainText('http://127.0.0.3:30202');
  // The router's own view of this worker, read from its metrics by the worker's URL.
  await expect(p.getByTestId('prop-Router').locator('dd')).toHaveText(/^healthy/, { timeout: 30_000 });
  // The role tab lists the role's workers instead of one service.
  await page.getByTestId('nav-service-decode').click();
  await expect(
    page.getByTestId('role-page').getByTestId('worker-rows-decode').locator('tbody tr'),
  ).toHaveCount(3);
  await expect(
    page.getByTestId('role-page').getByTestId('fleet-kv-table-decode').locator('tbody tr'),
  ).toHaveCount(3);
  await page.screenshot({ path: shot('fleet-role-decode.png') });
  // One router: the Router tab is its own page — the workers it lists, its requests — not a card to click.
  await page.getByTestId('nav-service-router').click();
  await expect(page.getByTestId('worker-page')).toHaveAttribute('data-worker', 'router');
  await expect(page.getByTestId('router-workers').getByTestId('router-worker')).toHaveCount(5, {
    timeout: 30_000,
  });
  // Its heading names it once, each worker it lists has the role of the service at that URL, and the props
  // that describe a worker (the router's view of it, its KV) are not shown for the router itself.
  await expect(page.getByTestId('worker-props').locator('h2')).toHaveText(/^router · gpu-a\b/);
  for (const cell of await page.getByTestId('router-worker').locator('td:nth-child(2)').all())
    await expect(cell).toHaveText(/^(prefill|decode)$/);
  await expect(page.getByTestId('worker-props').getByTestId('prop-Router')).toHaveCount(0);
  await expect(page.getByTestId('worker-props').getByTestId('prop-KV')).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('the KV page lists each worker beside its role total; GPUs are grouped by host and worker', async () => {
  const { app, page, errors } = session;
  await page.getByTestId('nav-kv').click();
  const decode = page.getByTestId('fleet-kv-decode');
  await expect(decode.locator('tbody tr')).toHaveCount(3);
  await expect(decode.getByTestId('fleet-kv-total')).toHaveText(/^all 3 workers: \d{1,3}\.\d % · /);
  await expect(page.getByTestId('fleet-kv-prefill').locator('tbody tr')).toHaveCount(2);
  // The worker spanning two hosts names both, as on the overview.
  await expect(page.getByTestId('fleet-kv-row-decode-2')).toContainText('gpu-b +gpu-c');
  // One line per worker and the role's total: the history of scoped and unscoped keys together.
  await expect(page.getByTestId('chart-fleet-kv-decode')).toHaveAttribute('data-state', 'ready', {
    timeout: 30_000,
  });
  await page.waitForTimeout(2500);
  await page.screenshot({ path: shot('fleet-kv.png') });

  await page.getByTestId('nav-metrics').click();
  await expect(page.getByTestId('gpu-host-gpu-a')).toContainText('prefill-0');
  await expect(page.getByTestId('gpu-host-gpu-b')).toContainText('decode-2');
  // decode-2's second node: its own host, node rank 1.
  await expect(page.getByTestId('gpu-host-gpu-c')).toContainText('node rank 1');
  await page.getByTestId('gpu-host-gpu-c').scrollIntoViewIfNeeded();
  await page.screenshot({ path: shot('fleet-gpus.png') });

  await page.goto(`${app.url}#/worker/decode-1`);
  await expect(page.getByTestId('worker-page')).toHaveAttribute('data-worker', 'decode-1');
  await page.waitForTimeout(2500);
  await page.screenshot({ path: shot('fleet-worker-decode-1.png') });
  expect(errors).toEqual([]);
});
