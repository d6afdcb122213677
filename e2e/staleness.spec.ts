// The bad day told truthfully, one host (browser mode, the real core, the demo host over real SSH, Chromium at
// 1280×720). The link blackholed (the demo's link-down fault: its SSH server stops answering, the units keep
// running): every card turns "unknown — last seen healthy at …", greyed, its age counting up; the banner names
// the host's last answer and its age counts up; the header stops claiming updates; nothing says "yet" or "no
// worker serving". And a crash-looping decode says why: exit status, restarts, since when, the CUDA error from
// its journal and the way to the journal at the crash; its service page agrees with its card; the journal's
// "problems" filter finds the traceback that "err and worse" misses.
import { test, expect, type Page } from '@playwright/test';
import { apiCall } from './support/api';
import { pageSession } from './support/page-session';
import { QUICK_LOAD } from './support/web-app';
import { shot } from './support/shots';

const session = pageSession(['--demo', '--no-open', ...QUICK_LOAD]);
const ROLES = ['router', 'prefill', 'decode'] as const;

async function demoFault(page: Page, fault: string, on: boolean, role?: string): Promise<void> {
  const [d] = await apiCall<Array<{ deployment: { id: string } }>>(session.app.url, 'listDeployments', {});
  await apiCall(session.app.url, 'demoControl', {
    deploymentId: d.deployment.id,
    fault,
    on,
    ...(role ? { role } : {}),
  });
}

/** "(12s ago)", "(1m 10s)", "(1 min 10 s ago)" → ms: the first age in parentheses a text gives. */
function ageMs(text: string): number {
  const m = /\(((?:\d+\s*(?:h|min|m|s)\s*)+)(?:ago)?\)/.exec(text);
  if (!m) throw new Error(`no age in "${text}"`);
  const unit: Record<string, number> = { h: 3_600_000, min: 60_000, m: 60_000, s: 1000 };
  let ms = 0;
  for (const [, n, u] of m[1].matchAll(/(\d+)\s*(h|min|m|s)/g)) ms += Number(n) * unit[u];
  return ms;
}

/** The first clock time a text names ("09:08:47 AM" or "09:08:47"). */
function clockIn(text: string): string {
  const m = /\d{1,2}:\d{2}:\d{2}(?: [AP]M)?/.exec(text);
  if (!m) throw new Error(`no clock time in "${text}"`);
  return m[0];
}

test('the link blackholed: unknown since the last answer, greyed, ages counting up, no claim that needs data', async () => {
  test.setTimeout(180_000);
  const { page, errors } = session;
  await page.goto(session.app.url);
  for (const role of ROLES)
    await expect(page.getByTestId(`service-card-${role}`).getByTestId('condition')).toHaveAttribute(
      'data-kind',
      'serving',
      { timeout: 60_000 },
    );

  await demoFault(page, 'link-down', true);
  for (const role of ROLES) {
    const card = page.getByTestId(`service-card-${role}`);
    await expect(card.getByTestId('condition'), `${role} card`).toHaveText(
      /^unknown — last seen healthy at \d{1,2}:\d{2}:\d{2}( [AP]M)? \(.+ ago\)/,
      { timeout: 20_000 },
    );
    await expect(card).toHaveAttribute('data-stale', 'true');
    // Grey, never the colour of what it was.
    await expect(card).toHaveClass(/tone-idle/);
    await expect(card.getByTestId('health')).not.toHaveText('healthy');
    await expect(card.getByTestId('health')).toContainText('unknown');
  }
  const lastAnswer = clockIn(
    (await page.getByTestId('service-card-decode').getByTestId('condition').textContent())!,
  );

  // The banner names the host's last answer; its age counts up (it read "… for 3.0 s" for the whole outage).
  const banner = page.getByTestId('connection-banner-text');
  await expect(banner).toContainText(`stopped answering at ${lastAnswer}`, { timeout: 20_000 });
  await expect(banner).toContainText(`The figures below are from ${lastAnswer}`);
  const firstBanner = (await banner.textContent())!;
  await expect
    .poll(async () => ageMs((await banner.textContent())!), { timeout: 10_000 })
    .toBeGreaterThan(ageMs(firstBanner));

  // The header stops claiming updates: the time stays the last answer's, and says how long ago.
  const updated = page.getByTestId('updated');
  await expect(updated).toHaveAttribute('data-quiet', 'true', { timeout: 15_000 });
  await expect(updated).toContainText(`no data since ${lastAnswer}`);
  const firstUpdated = (await updated.textContent())!;
  await expect.poll(async () => (await updated.textContent())!, { timeout: 10_000 }).not.toBe(firstUpdated);
  expect(clockIn((await updated.textContent())!)).toBe(lastAnswer);

  // Nothing asserted that needs data, between the stages or on the cards.
  const transfer = page.getByTestId('pd-link-transfer');
  await expect(transfer.getByTestId('transfer-unknown')).toHaveText(
    `prefill and decode unknown since ${lastAnswer}`,
  );
  await expect(transfer).not.toContainText('serving');
  for (const role of ROLES)
    await expect(page.getByTestId(`service-card-${role}`)).not.toContainText(/\byet\b/);
  await expect(page.getByTestId('connection-banner')).not.toContainText(/\byet\b/);

  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: shot(`stale-link-down-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });

  // Lost for good (ssh2's keepalives give up): still dated from the last answer, the card still unknown.
  await expect(banner).toContainText(`was lost at ${lastAnswer}`, { timeout: 60_000 });
  await expect(page.getByTestId('connection-banner')).toHaveClass(/banner-bad/);
  await expect(page.getByTestId('service-card-decode').getByTestId('condition')).toContainText(
    `last seen healthy at ${lastAnswer}`,
  );
  await expect(page.getByTestId('connection-state')).toContainText(`lost since ${lastAnswer}`);

  // The service page says the same: unknown, its systemd state as read then.
  await page.getByTestId('nav-service-decode').click();
  await expect(page.getByTestId('worker-props')).toHaveAttribute('data-stale', 'true');
  await expect(page.getByTestId('worker-props').getByTestId('condition')).toContainText(
    `unknown — last seen healthy at ${lastAnswer}`,
  );
  await page.getByTestId('nav-overview').click();

  await demoFault(page, 'link-down', false);
  for (const role of ROLES)
    await expect(page.getByTestId(`service-card-${role}`)).toHaveAttribute('data-stale', 'false', {
      timeout: 60_000,
    });
  await expect(page.getByTestId('connection-banner')).toHaveCount(0, { timeout: 15_000 });
  await expect(page.getByTestId('updated')).toHaveAttribute('data-quiet', 'false');
  expect(errors).toEqual([]);
});

test('a crash-looping decode says why: exit, restarts, since, its CUDA error, the journal at the crash; its page agrees', async () => {
  test.setTimeout(180_000);
  const { page, errors } = session;
  await page.goto(session.app.url);
  await expect(page.getByTestId('service-card-decode').getByTestId('condition')).toHaveAttribute(
    'data-kind',
    'serving',
    { timeout: 60_000 },
  );
  await demoFault(page, 'crash-loop', true, 'decode');
  const card = page.getByTestId('service-card-decode');
  await expect(card.getByTestId('condition')).toHaveAttribute('data-kind', 'crash-looping', {
    timeout: 90_000,
  });
  await expect(card.getByTestId('condition')).toContainText('crash-looping: restart');
  await expect(card.getByTestId('condition-next')).toContainText('systemctl stop sglang-decode.service');
  await expect(card.getByTestId('exit-status')).toHaveText(/^(status \d+|SIG[A-Z]+)$/);
  await expect(card.getByTestId('condition')).toContainText(
    'RuntimeError: CUDA error: an illegal memory access was encountered',
  );
  await expect(card.getByTestId('last-error')).toContainText('open the journal at the crash');
  await expect(card.getByTestId('state-since')).toHaveText(/\d{1,2}:\d{2}:\d{2}/);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: shot(`crash-loop-overview-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });

  // "open the journal at the crash": the drawer at the error, the traceback marked as problems.
  await card.getByTestId('open-journal-at-crash').click();
  const drawer = page.getByTestId('journal-around');
  await expect(drawer.locator('[data-problem="true"]').filter({ hasText: 'CUDA error' }).first()).toBeVisible(
    {
      timeout: 15_000,
    },
  );
  await page.keyboard.press('Escape');
  await expect(drawer).toHaveCount(0);

  // The service page reads the same state: the condition, since its last crash, no "Result success".
  await card.getByTestId('open-service-decode').click();
  const props = page.getByTestId('worker-props');
  await expect(props.getByTestId('condition')).toHaveAttribute('data-kind', /crash-looping|starting|loading/);
  await expect(props).toContainText('State since');
  await expect(props).toContainText('Exit status');
  await expect(props).not.toContainText(/Result\s*success/);
  await expect(props.getByTestId('condition')).toContainText('CUDA error');
  await expect(props.getByTestId('last-error')).toContainText('open the journal at the crash');
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: shot(`crash-loop-service-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });

  // The journal: "err and worse" misses the cause (SGLang logs it at info); "problems" finds it, traceback whole.
  const journal = page.getByTestId('journal');
  await expect(journal.getByTestId('journal-line').filter({ hasText: 'CUDA error' }).first()).toBeVisible({
    timeout: 15_000,
  });
  await journal.getByTestId('journal-priority').selectOption('3');
  await expect(journal.getByTestId('journal-line').filter({ hasText: 'CUDA error' })).toHaveCount(0);
  await journal.getByTestId('journal-problems').click();
  await expect(journal.getByTestId('journal-problems')).toHaveAttribute('aria-pressed', 'true');
  await expect(journal.getByTestId('journal-line').filter({ hasText: 'CUDA error' }).first()).toBeVisible();
  await expect(journal.getByTestId('journal-line').filter({ hasText: 'scheduler.py' }).first()).toBeVisible();
  await expect(journal.getByTestId('journal-line').filter({ hasText: '"GET /metrics' })).toHaveCount(0);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await journal.screenshot({ path: shot(`crash-loop-journal-problems-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await demoFault(page, 'crash-loop', false, 'decode');
  expect(errors).toEqual([]);
});
