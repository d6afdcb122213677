// A rolling restart of the demo fleet from the screens: browser mode, the real core, three simulated hosts on
// 127.0.0.2–.4 over real SSH, real Chromium. The decode group's "Restart one at a time…" opens the core's plan
// (order, exact commands per host, the router's view, checks); starting it shows each worker in its turn and
// ends with every decode worker restarted and healthy again, on the timeline. The demo runs 100× real time.
import { test, expect } from '@playwright/test';
import { shot } from './support/shots';
import { pageSession } from './support/page-session';

const session = pageSession(['--no-open', '--demo-speed', '100'], { width: 1280, height: 800 });

test('the decode group rolls every decode worker, one at a time, and says so at the end', async () => {
  const { app, page, errors } = session;
  test.setTimeout(240_000);
  await page.goto(app.url);
  await page.getByTestId('open-demo-fleet').click();
  const group = page.getByTestId('role-group-decode');
  await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy', { timeout: 60_000 });

  await group.getByTestId('role-restart-decode').click();
  const dialog = page.getByTestId('roll-dialog');
  await expect(dialog.getByTestId('roll-plan')).toBeVisible({ timeout: 30_000 });
  await expect(dialog.getByTestId('roll-order')).toContainText('one at a time');
  for (const w of ['decode-0', 'decode-1', 'decode-2'])
    await expect(dialog.getByTestId(`roll-plan-${w}`)).toBeVisible();
  // decode-2 spans two hosts: its plan stops node rank 1 on gpu-c before rank 0 on gpu-b.
  await dialog.getByTestId('roll-plan-decode-2').locator('summary').click();
  await expect(dialog.getByTestId('roll-plan-decode-2')).toContainText('gpu-c');
  await expect(dialog.getByTestId('roll-checks').locator('li.bad')).toHaveCount(0);
  await page.screenshot({ path: shot('fleet-roll-plan.png') });

  await dialog.getByTestId('roll-start').click();
  const progress = page.getByTestId('roll-progress');
  await expect(progress).toBeVisible({ timeout: 15_000 });
  await expect(progress).toHaveAttribute('data-state', /running|succeeded/);
  await expect(progress.locator('[data-testid^="roll-worker-"]')).toHaveCount(3);
  await page.screenshot({ path: shot('fleet-roll-running.png') });
  await expect(progress).toHaveAttribute('data-state', 'succeeded', { timeout: 180_000 });
  for (const w of ['decode-0', 'decode-1', 'decode-2'])
    await expect(progress.getByTestId(`roll-worker-${w}`)).toHaveAttribute('data-state', 'succeeded');
  await page.screenshot({ path: shot('fleet-roll-done.png') });
  await progress.getByTestId('roll-close').click();
  await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy', { timeout: 30_000 });
  expect(errors).toEqual([]);
});
