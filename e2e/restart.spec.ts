// Restarts end to end: browser mode with the demo host on a fast clock (--demo-speed), the real core and
// renderer, real Chromium. The happy path walks every step on screen; failure modes are switched on in the
// demo host through the app's own demoControl request and must end in the message an operator needs.
// One app serves the file (2 cores); tests run in order, faults are switched off after each.
import { test, expect, type Browser, type Page } from '@playwright/test';
import { shot } from './support/shots';
import { launchChromium } from './support/browser';
import { apiCall } from './support/api';
import { startWebApp, type WebApp } from './support/web-app';

/** The demo runs this many times faster than real time: a ~2 min decode restart takes a few seconds. */
const SPEED = 40;

let app: WebApp;
let url: string;
let browser: Browser;
let page: Page;
const errors: string[] = [];

const call = (method: string, args: unknown): Promise<unknown> => apiCall(url, method, args);

const fault = (name: string, on: boolean, role?: string): Promise<unknown> =>
  call('demoControl', { deploymentId: 'demo', fault: name, on, ...(role ? { role } : {}) });

async function openPlan(role: 'prefill' | 'decode' | 'router'): Promise<void> {
  await page.getByTestId(`service-card-${role}`).getByTestId(`restart-button-${role}`).click();
  await expect(page.getByTestId('restart-dialog')).toBeVisible();
  await expect(page.getByTestId('restart-confirm')).toBeEnabled();
}

async function confirmAndWaitEnd(): Promise<void> {
  await page.getByTestId('restart-confirm').click();
  const panel = page.getByTestId('restart-progress');
  await expect(panel).toBeVisible();
  await expect(panel).not.toHaveAttribute('data-state', 'running', { timeout: 45_000 });
}

async function closePanel(): Promise<void> {
  await page.getByTestId('restart-close').click();
  await expect(page.getByTestId('restart-progress')).toBeHidden();
}

async function setTimeoutMinutes(kind: 'server' | 'router', step: string, minutes: number): Promise<void> {
  await page.getByTestId('open-palette').click();
  await page.getByTestId('palette-input').fill('restart settings');
  await page.getByTestId('palette-item').first().click();
  const input = page.getByTestId(`restart-timeout-${kind}-${step}`);
  await input.fill(String(minutes));
  await input.blur();
  await page.getByTestId('restart-settings-close').click();
}

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  app = await startWebApp(['--demo', '--no-open', '--demo-speed', String(SPEED)]);
  url = app.url;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  for (const role of ['prefill', 'decode', 'router'])
    await expect(page.getByTestId(`service-card-${role}`).getByTestId('active-state')).toContainText(
      'active',
      {
        timeout: 30_000,
      },
    );
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

test('restart decode from its card: the plan, then every step visible until the router takes it back', async () => {
  await openPlan('decode');
  const dialog = page.getByTestId('restart-dialog');
  await expect(dialog.getByTestId('restart-plan-host')).toHaveText('demo GPU host (simulated)');
  await expect(dialog.getByTestId('restart-command-decode')).toHaveText(
    'sudo -n systemctl --no-block restart sglang-decode.service',
  );
  await expect(dialog.getByTestId('restart-impact-decode')).toContainText(
    /\d+ running request\(s\) on the worker/,
  );
  await expect(dialog.getByTestId('restart-last-decode')).toContainText(/last restart: .+ ago/);
  await expect(dialog.getByTestId('restart-drain')).toBeDisabled();
  await expect(dialog.getByTestId('restart-drain-reason')).toContainText(
    'drain not supported by this router version',
  );
  await expect(dialog.getByTestId('restart-warning').first()).toContainText(
    'PD needs a healthy prefill and a healthy decode',
  );
  await page.screenshot({ path: shot('restart-plan.png') });
  // The same dialog restarts the whole stack instead, in order.
  await dialog.getByTestId('restart-target-stack').check();
  await expect(dialog.getByTestId('restart-plan-order')).toHaveText('prefill + decode → router');
  await expect(dialog.getByTestId('restart-command-router')).toHaveText(
    'sudo -n systemctl --no-block restart sglang-router.service',
  );
  await dialog.getByTestId('restart-target-service').check();
  await expect(dialog.getByTestId('restart-plan-order')).toHaveText('decode');

  await page.getByTestId('restart-confirm').click();
  const panel = page.getByTestId('restart-progress');
  await expect(panel).toHaveAttribute('data-state', 'running');
  // Each step is seen running, in order, with the load's progress and journal as they happen.
  for (const kind of ['command', 'active'])
    await expect(panel.getByTestId(`restart-step-decode-${kind}`)).toHaveAttribute(
      'data-state',
      /running|succeeded/,
    );
  await expect(panel.getByTestId('restart-progress-decode')).toHaveAttribute(
    'data-phase',
    /weights|kv-cache|cuda-graph/,
  );
  await expect(panel.getByTestId('restart-journal-decode')).toContainText(
    'Loading safetensors checkpoint shards',
  );
  await page.screenshot({ path: shot('restart-progress.png') });
  await expect(panel.getByTestId('restart-step-decode-health')).toHaveAttribute(
    'data-state',
    /running|succeeded/,
    {
      timeout: 30_000,
    },
  );
  await expect(panel.getByTestId('restart-step-decode-router')).toHaveAttribute(
    'data-state',
    /running|succeeded/,
    {
      timeout: 30_000,
    },
  );
  await expect(panel).toHaveAttribute('data-state', 'succeeded', { timeout: 30_000 });
  await expect(panel.getByTestId('restart-summary')).toHaveText(/^decode restarted in \d+ min \d+ s$/);
  for (const kind of ['command', 'active', 'health', 'router'])
    await expect(panel.getByTestId(`restart-step-decode-${kind}`)).toHaveAttribute('data-state', 'succeeded');
  await expect(panel.getByTestId('restart-journal-decode')).toContainText('fired up and ready to roll');
  await page.screenshot({ path: shot('restart-done.png') });
  await closePanel();
  // Who, when, what, result and duration are on the deployment's timeline (drawn on the charts).
  const events = (await call('listEvents', { deploymentId: 'demo' })) as Array<{
    kind: string;
    title: string;
  }>;
  const restartEvents = events
    .filter((e) => e.kind === 'action' || e.kind === 'restart-step')
    .map((e) => e.title);
  expect(restartEvents[0]).toMatch(/^\S+ started a restart of decode on demo GPU host \(simulated\)$/);
  expect(restartEvents.at(-1)).toMatch(/^restart of decode succeeded after \d+ min \d+ s$/);
  expect(restartEvents.filter((t) => t.startsWith('decode restart: '))).toHaveLength(4);
  expect(errors).toEqual([]);
});

test('a stack restart from the palette survives a page reload and resumes on screen', async () => {
  await page.getByTestId('open-palette').click();
  await page.getByTestId('palette-input').fill('restart pd stack');
  await page.getByTestId('palette-item').first().click();
  await expect(page.getByTestId('restart-plan-order')).toHaveText('prefill + decode → router');
  await page.getByTestId('restart-confirm').click();
  const panel = page.getByTestId('restart-progress');
  // Mid-way: the model loads while the health step waits (the unit itself is active at once).
  await expect(panel.getByTestId('restart-step-decode-health')).toHaveAttribute('data-state', 'running');
  const id = await panel.getAttribute('data-operation');
  await page.reload();
  await expect(panel).toBeVisible({ timeout: 20_000 });
  await expect(panel).toHaveAttribute('data-operation', id!);
  await expect(panel).toHaveAttribute('data-state', 'succeeded', { timeout: 45_000 });
  await expect(panel.getByTestId('restart-step-router-router')).toContainText('/readiness 200');
  await closePanel();
});

test('sudo asks for a password: nothing restarts, the sudoers line that would allow it is shown', async () => {
  await fault('sudo-password', true);
  try {
    await openPlan('prefill');
    await confirmAndWaitEnd();
    const panel = page.getByTestId('restart-progress');
    await expect(panel).toHaveAttribute('data-state', 'failed');
    await expect(panel.getByTestId('restart-failure-message')).toContainText(
      'prefill: command step — sudo on demo GPU host (simulated) asks for a password',
    );
    await expect(panel.getByTestId('restart-sudoers')).toHaveText(
      /^\S+ ALL=\(root\) NOPASSWD: \/usr\/bin\/systemctl --no-block restart sglang-prefill\.service, \/usr\/bin\/systemctl --no-block restart sglang-decode\.service, \/usr\/bin\/systemctl --no-block restart sglang-router\.service$/,
    );
    await expect(panel.getByTestId('restart-step-prefill-active')).toHaveAttribute('data-state', 'skipped');
    await page.screenshot({ path: shot('restart-sudo.png') });
    await closePanel();
  } finally {
    await fault('sudo-password', false);
  }
});

test('decode fails to start: the failed step, systemd Result=exit-code and the traceback from the journal', async () => {
  await fault('unit-fails-to-start', true, 'decode');
  try {
    await openPlan('decode');
    await confirmAndWaitEnd();
    const panel = page.getByTestId('restart-progress');
    await expect(panel).toHaveAttribute('data-state', 'failed');
    await expect(panel.getByTestId('restart-failure-message')).toContainText(
      // Type=simple: active as soon as the process runs; the failure comes while loading, at the health step.
      'decode: health step — sglang-decode.service failed to start: the main process exited with an error, exit status 1',
    );
    await expect(panel.getByTestId('restart-failure-result')).toHaveText('systemd Result=exit-code');
    await expect(panel.getByTestId('restart-failure-journal')).toContainText(
      'RuntimeError: Not enough memory',
    );
    await expect(page.getByTestId('service-card-decode').getByTestId('active-state')).toContainText('failed');
    await closePanel();
  } finally {
    await fault('unit-fails-to-start', false, 'decode');
  }
});

test('/health never turns 200 within the (configured) timeout: fails at the health step with the last answer', async () => {
  // The health step waits through the model's load (the unit is active at once): 3 min covers decode's.
  await setTimeoutMinutes('server', 'healthMs', 3);
  await fault('health-never-ok', true, 'decode');
  try {
    await openPlan('decode');
    await confirmAndWaitEnd();
    const panel = page.getByTestId('restart-progress');
    await expect(panel).toHaveAttribute('data-state', 'failed');
    await expect(panel.getByTestId('restart-step-decode-active')).toHaveAttribute('data-state', 'succeeded');
    await expect(panel.getByTestId('restart-step-decode-health')).toHaveAttribute('data-state', 'failed');
    await expect(panel.getByTestId('restart-failure-message')).toContainText(
      /decode never answered http:\/\/127\.0\.0\.1:30200\/health with 200 within 3 min 0 s \(last: GET .* 503/,
    );
    await closePanel();
  } finally {
    await fault('health-never-ok', false, 'decode');
    await setTimeoutMinutes('server', 'healthMs', 35);
  }
  // Without the fault the same service comes back by itself: the card says so once the router re-adds it.
  await expect(page.getByTestId('service-card-decode').getByTestId('health')).toContainText('healthy', {
    timeout: 30_000,
  });
});

test('read-only mode hides every restart action, and the core refuses too', async () => {
  await page.getByTestId('nav-service-decode').click();
  await expect(page.getByTestId('worker-page').getByTestId('restart-button-decode')).toBeVisible();
  await page.getByTestId('open-palette').click();
  await page.getByTestId('palette-input').fill('restart settings');
  await page.getByTestId('palette-item').first().click();
  // The checkbox shows the core's setting: it turns checked when the core pushes the new settings back.
  await page.getByTestId('restart-setting-readonly').click();
  await expect(page.getByTestId('restart-setting-readonly')).toBeChecked();
  await page.getByTestId('restart-settings-close').click();
  await expect(page.getByTestId('worker-page').getByTestId('restart-button-decode')).toHaveCount(0);
  await page.getByTestId('nav-overview').click();
  for (const role of ['prefill', 'decode', 'router'])
    await expect(page.getByTestId(`restart-button-${role}`)).toHaveCount(0);
  await page.getByTestId('open-palette').click();
  await page.getByTestId('palette-input').fill('restart');
  await expect(page.locator('[data-command^="restart-"]')).toHaveText([/Restart settings/]);
  await page.keyboard.press('Escape');
  await expect(call('startRestart', { deploymentId: 'demo', target: 'decode' })).rejects.toThrow(
    'PD Console is in read-only mode: restarts are switched off',
  );
  await call('setRestartSettings', { readOnly: false });
  await expect(page.getByTestId('restart-button-decode')).toBeVisible();
});

test('the router never re-adds decode: fails at the router step, saying what the router reports', async () => {
  await setTimeoutMinutes('server', 'routerMs', 1);
  await fault('router-never-readds', true, 'decode');
  try {
    await openPlan('decode');
    await confirmAndWaitEnd();
    const panel = page.getByTestId('restart-progress');
    await expect(panel).toHaveAttribute('data-state', 'failed');
    await expect(panel.getByTestId('restart-step-decode-health')).toHaveAttribute('data-state', 'succeeded');
    await expect(panel.getByTestId('restart-failure-message')).toContainText(
      /decode: router step — the router never re-added decode within 1 min 0 s: the router reports http:\/\/127\.0\.0\.1:30200 unhealthy/,
    );
    await expect(panel.getByTestId('restart-failure-hint')).toContainText('restarting the router');
    await page.screenshot({ path: shot('restart-router-failure.png') });
    await closePanel();
  } finally {
    await fault('router-never-readds', false, 'decode');
  }
  expect(errors).toEqual([]);
});

/** What the decode card showed, each change once, recorded in the page. */
interface CardRenders {
  cardRenders: { state: string; health: string }[];
  cardObserver: MutationObserver;
}

test('decode crash-looping: the KV transfer link gives its figures as the last ones, and says why', async () => {
  // Several crash cycles of the demo (load, crash, RestartSec) pass in the course of this test.
  test.setTimeout(200_000);
  const link = page.getByTestId('pd-link-transfer');
  await expect(link).toHaveAttribute('data-stale', 'false');
  // The decode card never says "healthy" of a unit that is not active: /health is read every few polls, and an ok
  // from before the crash says when it was read. A Type=simple unit is active again while its model reloads: it
  // is out of the active state only between a crash and systemd's automatic restart (RestartSec 10 s, 250 ms at
  // this speed), so whether a 1 s poll lands in that window is chance, about one crash cycle (≈3 s) in four.
  // Every rendering of the card is recorded from before the fault on, so none is missed between samples.
  await page.evaluate(() => {
    const w = window as unknown as CardRenders;
    w.cardRenders = [];
    const record = (): void => {
      const card = document.querySelector('[data-testid="service-card-decode"]');
      const state = card?.querySelector('[data-testid="active-state"]')?.textContent;
      const health = card?.querySelector('[data-testid="health"]')?.textContent;
      const last = w.cardRenders.at(-1);
      if (state == null || health == null || (last?.state === state && last.health === health)) return;
      w.cardRenders.push({ state, health });
    };
    w.cardObserver = new MutationObserver(record);
    w.cardObserver.observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  const outOfActive = (): Promise<{ state: string; health: string }[]> =>
    page.evaluate(() =>
      (window as unknown as CardRenders).cardRenders.filter((r) => !r.state.startsWith('active ')),
    );
  await fault('crash-loop', true, 'decode');
  try {
    // Prefill's transfer gauges keep their last value; the link no longer presents it as the current one.
    await expect(link).toHaveAttribute('data-stale', 'true', { timeout: 30_000 });
    await expect(link.getByTestId('transfer-stale')).toHaveText('no decode worker serving');
    await expect(link.getByTestId('transfer-rate')).toHaveText(/^—/);
    // Bounded by 90 s, about 30 crash cycles: a poll that never lands between a crash and its restart in all of
    // them would be a defect of its own.
    await expect.poll(async () => (await outOfActive()).length, { timeout: 90_000 }).toBeGreaterThan(0);
    for (const r of await outOfActive()) expect(r.health, `decode card while ${r.state}`).not.toBe('healthy');
    await page.screenshot({ path: shot('overview-decode-crash-loop.png') });
  } finally {
    await page.evaluate(() => (window as unknown as CardRenders).cardObserver.disconnect());
    await fault('crash-loop', false, 'decode');
  }
  // Serving again (the demo restarts it): the figures are live again.
  await expect(link).toHaveAttribute('data-stale', 'false', { timeout: 60_000 });
  expect(errors).toEqual([]);
});
