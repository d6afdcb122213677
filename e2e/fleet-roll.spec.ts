// A rolling restart of the demo fleet from the screens: browser mode, the real core, three simulated hosts on
// 127.0.0.2–.4 over real SSH, real Chromium. The decode group's "Restart one at a time…" opens the core's plan
// (order, exact commands per host, the router's view, checks — among them each worker's GPUs holding only its
// own processes, read on the running workers); starting it shows each worker in its turn and ends with every
// decode worker restarted and healthy again, on the timeline. With another process on the decode workers' GPUs
// the plan refuses and nothing can be started; with nvidia-smi missing the plan says the check cannot be read
// and starts only once the operator ticks "Roll without the GPU check". The demo runs 100× real time.
import { test, expect } from '@playwright/test';
import { shot } from './support/shots';
import { pageSession } from './support/page-session';
import { apiCall } from './support/api';
import type { RollOperation } from '../src/shared/contract';

const session = pageSession(['--no-open', '--demo-speed', '100'], { width: 1280, height: 800 });

/** Where the plan screenshots an operator (and a reviewer) looks at go, besides the run's own folder. */
const NOTES = process.env.PD_ROLL_SHOTS_DIR;

async function fleetId(): Promise<string> {
  const list = await apiCall<Array<{ deployment: { id: string } }>>(session.app.url, 'listDeployments', {});
  expect(list).toHaveLength(1);
  return list[0].deployment.id;
}

async function fault(name: string, on: boolean): Promise<void> {
  await apiCall(session.app.url, 'demoControl', {
    deploymentId: await fleetId(),
    fault: name,
    on,
    role: 'decode',
  });
}

/** The open dialog at 1280×720, saved as `name` in the run's screenshots (and PD_ROLL_SHOTS_DIR). */
async function planShot(name: string): Promise<void> {
  const { page } = session;
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.screenshot({ path: shot(name) });
  if (NOTES) await page.screenshot({ path: `${NOTES}/${name}` });
  await page.setViewportSize({ width: 1280, height: 800 });
}

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
  // What its restart cuts off, from the monitor's scrapes, as the in-place restart's plan says it.
  await expect(dialog.getByTestId('roll-impact-decode-2')).toContainText(
    /\d+ running request\(s\) on the worker will be cut off/,
  );
  await expect(dialog.getByTestId('roll-checks').locator('li.bad')).toHaveCount(0);
  // Each decode worker's GPUs were read on the running worker: only its own scheduler processes.
  for (const w of ['decode-0', 'decode-1', 'decode-2'])
    await expect(
      dialog
        .getByTestId('roll-checks')
        .locator('li.ok', { hasText: `the GPUs of ${w} run only its own processes` }),
    ).toContainText(/run only processes of sglang-decode-\d\.service \(MainPID \d+ and its \d descendants\)/);
  await expect(dialog.getByTestId('roll-without-gpu-check')).toHaveCount(0);
  await page.screenshot({ path: shot('fleet-roll-plan.png') });

  const eventsBefore = (await apiCall<unknown[]>(app.url, 'listEvents', { deploymentId: await fleetId() }))
    .length;
  await dialog.getByTestId('roll-start').click();
  const progress = page.getByTestId('roll-progress');
  await expect(progress).toBeVisible({ timeout: 15_000 });
  await expect(progress).toHaveAttribute('data-state', /running|succeeded/);
  await expect(progress.locator('[data-testid^="roll-worker-"]')).toHaveCount(3);
  await page.screenshot({ path: shot('fleet-roll-running.png') });
  // The roll speaks through the decode group's button only; the prefill group's waits for it to end (it read
  // "Restarting decode-1…" too).
  await expect(group.getByTestId('role-restart-decode-running')).toHaveText(/^Restarting decode-\d…$/);
  const prefillButton = page.getByTestId('role-group-prefill').getByTestId('role-restart-prefill');
  await expect(prefillButton).toBeDisabled();
  await expect(prefillButton).toHaveText('Restart one at a time…');
  await expect(prefillButton).toHaveAttribute('title', /One roll at a time: the roll of every decode worker/);
  await expect(page.getByTestId('role-restart-prefill-running')).toHaveCount(0);
  await expect(progress).toHaveAttribute('data-state', 'succeeded', { timeout: 180_000 });
  for (const w of ['decode-0', 'decode-1', 'decode-2'])
    await expect(progress.getByTestId(`roll-worker-${w}`)).toHaveAttribute('data-state', 'succeeded');
  await page.screenshot({ path: shot('fleet-roll-done.png') });
  await progress.getByTestId('roll-close').click();
  await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy', { timeout: 30_000 });
  // Nothing anyone was told about came from the workers the roll restarted: their stops, stale metrics and failed
  // health checks were expected, each in its worker's turn.
  const during = (
    await apiCall<
      Array<{ kind: string; title: string; alert?: { key: string; change: string; notify: boolean } }>
    >(app.url, 'listEvents', { deploymentId: await fleetId() })
  ).slice(eventsBefore);
  const own = ['service-inactive', 'health-failing', 'metrics-stale', 'restart-loop'].map(
    (r) => `${r}|decode`,
  );
  expect(
    during
      .filter((e) => e.alert?.change === 'fired' && e.alert.notify && own.includes(e.alert.key))
      .map((e) => e.title),
  ).toEqual([]);
  expect(errors).toEqual([]);
});

test("another process on the decode workers' GPUs: the plan refuses before anything stops", async () => {
  const { page, errors } = session;
  test.setTimeout(120_000);
  const group = page.getByTestId('role-group-decode');
  await fault('foreign-gpu-process', true);
  try {
    await group.getByTestId('role-restart-decode').click();
    const dialog = page.getByTestId('roll-dialog');
    await expect(dialog.getByTestId('roll-plan')).toBeVisible({ timeout: 30_000 });
    await expect(dialog.getByTestId('roll-refused')).toContainText(
      /Refused: decode-0: GPUs 0,1,2,3 of gpu-b run pid 41900\d\d \(python3, \d+ MiB\), not a process of sglang-decode-0\.service .*: stopping decode-0 would free nothing, so it is not stopped — End pid 41900\d\d on gpu-b/,
    );
    await expect(dialog.getByTestId('roll-checks').locator('li.bad')).toHaveCount(3);
    await expect(dialog.getByTestId('roll-start')).toBeDisabled();
    await planShot('roll-refused-foreign-process.png');
    await dialog.getByTestId('roll-dismiss').click();
    await expect(dialog).toBeHidden();
    // Nothing was stopped: every decode worker still healthy.
    await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy');
  } finally {
    await fault('foreign-gpu-process', false);
  }
  expect(errors).toEqual([]);
});

test('nvidia-smi missing: the plan says the check cannot be read; the roll starts only with the box ticked', async () => {
  const { page, errors } = session;
  test.setTimeout(180_000);
  const group = page.getByTestId('role-group-decode');
  await fault('nvidia-smi-missing', true);
  try {
    await group.getByTestId('role-restart-decode').click();
    const dialog = page.getByTestId('roll-dialog');
    await expect(dialog.getByTestId('roll-plan')).toBeVisible({ timeout: 30_000 });
    await expect(dialog.getByTestId('roll-refused')).toHaveCount(0);
    const unknown = dialog.getByTestId('roll-checks').locator('li.unknown');
    await expect(unknown).toHaveCount(3);
    await expect(unknown.first()).toContainText(
      "the GPUs of decode-0 run only its own processes — cannot be read: nvidia-smi is not installed on gpu-b or not on the SSH user's PATH (exit 127: bash: nvidia-smi: command not found)",
    );
    const start = dialog.getByTestId('roll-start');
    await expect(start).toBeDisabled();
    await expect(start).toHaveAttribute('title', /tick the box to roll without it/);
    await planShot('roll-gpu-check-unreadable.png');
    await dialog.getByTestId('roll-without-gpu-check').check();
    await expect(start).toBeEnabled();
    await planShot('roll-gpu-check-unreadable-chosen.png');
    await start.click();
    // The roll goes (cancelled: it ends after the first worker), and says which checks it did not make.
    const progress = page.getByTestId('roll-progress');
    await expect(progress).toBeVisible({ timeout: 15_000 });
    await progress.getByTestId('roll-cancel').click();
    await expect(progress).toHaveAttribute('data-state', 'cancelled', { timeout: 120_000 });
    await expect(progress.getByTestId('roll-worker-decode-0')).toHaveAttribute('data-state', 'succeeded');
    const [op] = await apiCall<RollOperation[]>(session.app.url, 'listRolls', {
      deploymentId: await fleetId(),
    });
    expect(
      op.workers[0].steps.filter((st) => st.kind.startsWith('gpu')).map((st) => `${st.kind} ${st.state}`),
    ).toEqual(['gpu-owners skipped', 'gpus-free skipped']);
    expect(op.workers[0].steps[0].detail).toBe(
      "not checked, as chosen (roll without the GPU check): nvidia-smi is not installed on gpu-b or not on the SSH user's PATH (exit 127: bash: nvidia-smi: command not found)",
    );
    await progress.getByTestId('roll-close').click();
    await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy', { timeout: 30_000 });
  } finally {
    await fault('nvidia-smi-missing', false);
  }
  expect(errors).toEqual([]);
});

test('the router never re-adds a restarted worker: the cards say so as the verdict does, not "3/3 healthy"', async () => {
  const { page, errors } = session;
  test.setTimeout(180_000);
  const group = page.getByTestId('role-group-decode');
  await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy', { timeout: 30_000 });
  await fault('router-never-readds', true);
  try {
    // decode-0 alone: it restarts and answers its /health again, but the router keeps it unhealthy.
    await page.getByTestId('worker-row-decode-0').click();
    await page.getByTestId('worker-restart').click();
    const dialog = page.getByTestId('roll-dialog');
    await expect(dialog.getByTestId('roll-plan')).toBeVisible({ timeout: 30_000 });
    await dialog.getByTestId('roll-start').click();
    const progress = page.getByTestId('roll-progress');
    await expect(progress).toHaveAttribute('data-state', 'failed', { timeout: 120_000 });
    await progress.getByTestId('roll-close').click();
    await page.getByTestId('nav-overview').click();
    await page.setViewportSize({ width: 1280, height: 720 });
    // Its own health says healthy; the router's gauges say otherwise, and the cards say both.
    await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy · 2/3 healthy at the router', {
      timeout: 30_000,
    });
    const row = page.getByTestId('worker-row-decode-0');
    await expect(row.getByTestId('worker-at-router')).toHaveText('not routed');
    await expect(row.getByTestId('worker-at-router')).toHaveAttribute(
      'title',
      'decode-0 answers its own health check, but the router reports it unhealthy (circuit breaker open): it takes no traffic',
    );
    // Nothing of the decode group is pushed past the screen's edge by it.
    const card = await group.boundingBox();
    expect(card!.x + card!.width).toBeLessThanOrEqual(1280);
    await expect(row).toHaveAttribute('data-tone', 'warn');
    await expect(page.getByTestId('service-card-router').getByTestId('stage-workers')).toHaveText(
      '4 of 5 healthy',
    );
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: shot(`fleet-router-disagrees-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  } finally {
    await fault('router-never-readds', false);
  }
  // Off again, the router takes decode-0 back: nothing left to say at the router.
  await expect(group.getByTestId('role-healthy-at-router')).toHaveCount(0, { timeout: 60_000 });
  await expect(group.getByTestId('role-healthy')).toHaveText('3/3 healthy');
  expect(errors).toEqual([]);
});
