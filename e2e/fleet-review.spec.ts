// A recording of the demo fleet, reviewed in Chromium: browser mode records the fleet (three simulated hosts over
// real SSH) for some seconds, the deployment closes, and the session opens from the sessions list into the same
// fleet screens the live view used — the overview fanning out into the router and five workers on their hosts,
// each with its recorded state and KV, the hosts' links — read from the file, with the review bar above.
import { test, expect } from '@playwright/test';
import { shot } from './support/shots';
import { DEMO_FLEET_WORKERS, pageSession } from './support/page-session';
import { apiCall } from './support/api';

const session = pageSession(['--no-open']);

const WORKERS = DEMO_FLEET_WORKERS;

test('a recorded fleet opens in review as the fleet overview: router, 5 workers on 3 hosts, KV per worker', async () => {
  const { app, page, errors } = session;
  test.setTimeout(180_000);
  await page.goto(app.url);
  await page.getByTestId('open-demo-fleet').click();
  await expect(page.getByTestId('page-overview')).toHaveAttribute('data-fleet', 'true', { timeout: 60_000 });
  for (const id of Object.keys(WORKERS))
    await expect(page.getByTestId(`worker-row-${id}`).getByTestId('worker-kv')).toHaveText(/^\d{1,3} %$/, {
      timeout: 30_000,
    });
  // Some seconds of the fleet on record, then the deployment closes (the recording ends with it).
  await page.waitForTimeout(6000);
  const status = await apiCall<{ active: { deploymentId: string; sessionId: string | null }[] }>(
    app.url,
    'getRecordingStatus',
    {},
  );
  const active = status.active.find((a) => a.sessionId);
  expect(active, 'the fleet is being recorded').toBeDefined();
  await apiCall(app.url, 'closeDeployment', { deploymentId: active!.deploymentId });

  await page.goto(app.url);
  await page.getByTestId('open-sessions').click();
  const row = page.locator(`[data-testid=session-row][data-id="${active!.sessionId}"]`);
  await expect
    .poll(
      async () => {
        await page.getByTestId('sessions-refresh').click();
        return row.getAttribute('data-state');
      },
      { timeout: 30_000, intervals: [1000] },
    )
    .toBe('complete');
  await page.getByTestId(`session-open-${active!.sessionId}`).click();
  await expect(page.getByTestId('review-bar')).toBeVisible({ timeout: 60_000 });

  const overview = page.getByTestId('page-overview');
  await expect(overview).toHaveAttribute('data-fleet', 'true', { timeout: 30_000 });
  for (const h of ['gpu-a', 'gpu-b', 'gpu-c']) await expect(page.getByTestId(`host-link-${h}`)).toBeVisible();
  await expect(page.getByTestId('service-card-router')).toHaveAttribute('data-host', 'gpu-a');
  for (const [id, host] of Object.entries(WORKERS)) {
    const w = page.getByTestId(`worker-row-${id}`);
    await expect(w).toHaveAttribute('data-host', host);
    await expect(w.getByTestId('worker-state')).toContainText('active');
    await expect(w.getByTestId('worker-kv')).toHaveText(/^\d{1,3} %$/);
  }
  await expect(page.getByTestId('worker-rows-decode').locator('tbody tr')).toHaveCount(3);
  await expect(page.getByTestId('worker-rows-prefill').locator('tbody tr')).toHaveCount(2);
  // Read-only: no restart control in review — nor a role's roll (the live fleet opened before loaded the restart
  // settings, and the groups offered "Restart one at a time…" on the recording), nor the demo's faults.
  await expect(page.locator('[data-testid^=restart-button-]')).toHaveCount(0);
  await expect(page.locator('[data-testid^=role-restart-]')).toHaveCount(0);
  await page.getByTestId('open-palette').click();
  await page.getByTestId('palette-input').fill('Demo:');
  await expect(page.getByTestId('command-palette')).toBeVisible();
  await expect(page.getByTestId('palette-item')).toHaveCount(0);
  await page.getByTestId('palette-input').fill('Back to live');
  await expect(page.getByTestId('palette-item')).toHaveCount(0);
  await page.keyboard.press('Escape');
  await page.screenshot({ path: shot('fleet-review-overview.png') });
  // The router's page lists the workers the router itself reported then, each healthy, as its live page did.
  await page.getByTestId('open-service-router').click();
  await expect(page.getByTestId('worker-page')).toBeVisible();
  await expect(page.getByTestId('worker-restart')).toHaveCount(0);
  const listed = page.getByTestId('router-workers').getByTestId('router-worker');
  await expect(listed).toHaveCount(5, { timeout: 30_000 });
  for (const h of await listed.getByTestId('router-worker-health').allTextContents())
    expect(h).toBe('healthy');
  expect(errors).toEqual([]);
});
