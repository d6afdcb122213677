// The rest of the demo's bad day on one host, told as the operator sees it (browser mode, the real core, the demo
// host over real SSH, Chromium at 1280×720): each scenario asserts the verdict, the alert states and the
// staleness display, with a screenshot of its telling moment in light and dark. Crash loop and recovery
// (verdict.spec), /metrics 500 (alerts.spec) and a lost link (staleness.spec, staleness-fleet.spec) are told
// there; the fleet's bad day in bad-day-fleet.spec.ts.
//
// The health check runs the demo at speed 1: the core reads systemd's and the journal's times against its own
// clock, and a demo clock running ahead would date a start or a crash "in the future". The KV scenarios run it
// faster: a filled KV cache drains only as its long generations finish.
import { test, expect, type Page } from '@playwright/test';
import { apiCall } from './support/api';
import { pageSession } from './support/page-session';
import { QUICK_LOAD } from './support/web-app';
import { alertItem, fault, noDataS, shots } from './support/bad-day';
import { quickRules, RESTART_LOOP_AT_REAL_SPEED } from './support/quick-rules';

test.describe('decode whose /health never answers OK after a restart', () => {
  const s = pageSession(['--demo', '--no-open', ...QUICK_LOAD]);

  test('not serving, and why: the verdict and the card say so', async () => {
    test.setTimeout(420_000);
    const { page, app, errors } = s;
    await page.goto(app.url);
    const card = page.getByTestId('service-card-decode');
    await expect(card.getByTestId('condition')).toHaveAttribute('data-kind', 'serving', { timeout: 90_000 });
    await quickRules(s.app.url, RESTART_LOOP_AT_REAL_SPEED);
    // The restart gives up on /health after 40 s instead of 35 min.
    await apiCall(app.url, 'setRestartSettings', { timeouts: { server: { healthMs: 40_000 } } });
    await fault(s, { fault: 'health-never-ok', on: true, role: 'decode' });
    await apiCall(app.url, 'startRestart', { deploymentId: 'demo', target: 'decode', drain: false });
    const verdict = page.getByTestId('verdict');
    await expect(verdict).toHaveAttribute('data-kind', 'restarting', { timeout: 30_000 });
    await expect(card.getByTestId('condition')).toHaveAttribute('data-kind', 'not-answering', {
      timeout: 240_000,
    });
    await expect(card.getByTestId('condition')).toHaveText(
      /^running but \/health fails: .*503.* — .+ since start/,
    );
    await expect(card.getByTestId('condition-next')).toContainText('open the journal');
    await expect(verdict).toHaveAttribute('data-kind', 'service-down', { timeout: 120_000 });
    await expect(page.getByTestId('verdict-headline')).toHaveText(
      /^Requests cannot flow: decode is not serving — running but \/health fails: .*503/,
    );
    await expect(page.getByTestId('verdict-next')).toContainText('decode: open the journal');
    await expect(card.getByTestId('health')).not.toHaveText(/^healthy/);
    await shots(page, 'health-never-ok');
    await page.getByTestId('nav-alerts').click();
    await expect(alertItem(page, 'health-failing', 'decode').first()).toHaveAttribute(
      'data-state',
      'firing',
      {
        timeout: 60_000,
      },
    );
    await page.getByTestId('nav-overview').click();

    await fault(s, { fault: 'health-never-ok', on: false, role: 'decode' });
    await expect(card.getByTestId('condition')).toHaveAttribute('data-kind', 'serving', { timeout: 60_000 });
    expect(errors).toEqual([]);
  });
});

test.describe('decode KV full, then its /metrics hanging', () => {
  const s = pageSession(['--demo', '--no-open', '--demo-speed', '20']);
  const kvItem = (page: Page) => page.locator('[data-testid=alert-item][data-key="decode-kv-high|decode"]');

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    await s.page.goto(s.app.url);
    await expect(s.page.getByTestId('service-card-decode').getByTestId('condition')).toHaveAttribute(
      'data-kind',
      'serving',
      { timeout: 90_000 },
    );
    await quickRules(s.app.url, RESTART_LOOP_AT_REAL_SPEED);
  });

  test('kv-full on decode: the KV alert fires, the verdict is decode-bound naming the KV cache', async () => {
    test.setTimeout(300_000);
    const { page, errors } = s;
    await fault(s, { fault: 'kv-full', on: true, role: 'decode' });
    const verdict = page.getByTestId('verdict');
    await expect(verdict).toHaveAttribute('data-kind', 'decode-bound', { timeout: 240_000 });
    await expect(page.getByTestId('verdict-headline')).toHaveText(
      /^Decode-bound: requests are piling up at decode — .*/,
    );
    await expect(verdict).toContainText(/decode KV cache \d+(\.\d)? % full/, { timeout: 60_000 });
    await expect(page.getByTestId('verdict-next')).toContainText('decode has no KV room');
    await shots(page, 'kv-full');
    await page.getByTestId('nav-alerts').click();
    await expect(kvItem(page)).toHaveAttribute('data-state', 'firing', { timeout: 60_000 });
    await expect(kvItem(page)).toContainText('decode KV cache above 90 %');
    await shots(page, 'kv-full-alerts');
    expect(errors).toEqual([]);
  });

  test('metrics-hang on decode: the KV alert stays, without data, its age counting up; the verdict claims no health', async () => {
    test.setTimeout(240_000);
    const { page, errors } = s;
    await fault(s, { fault: 'metrics-hang', on: true, role: 'decode' });
    const kv = kvItem(page);
    await expect(kv).toHaveAttribute('data-state', 'no-data', { timeout: 60_000 });
    const noData = kv.getByTestId('alert-no-data');
    await expect(noData).toContainText(/no data for \d+s — no successful \/metrics scrape of decode/);
    const first = noDataS(await noData.textContent());
    await expect
      .poll(async () => noDataS(await noData.textContent()), { timeout: 30_000 })
      .toBeGreaterThan(first);
    await expect(page.getByTestId('alert-history')).not.toContainText('resolved: decode KV');
    await shots(page, 'metrics-hang-alerts');

    await page.getByTestId('nav-overview').click();
    const verdict = page.getByTestId('verdict');
    await expect(verdict).not.toHaveAttribute('data-kind', /^(healthy|idle)$/);
    await expect(page.getByTestId('verdict-headline')).not.toContainText(/^Healthy|^Idle/);
    // The card: the scrape that waits, since when nothing was read (its age counting up), no figure as if live.
    const card = page.getByTestId('service-card-decode');
    await expect(card.getByTestId('metrics-state')).toContainText(/no answer yet from .*\/metrics|timed out/);
    const lastOk = card.getByTestId('metrics-last-ok');
    await expect(lastOk).toHaveText(/^\s*· last good scrape \d{1,2}:\d{2}:\d{2}( [AP]M)? \(.+ ago\)$/);
    const age = async (): Promise<number> =>
      noDataS(`no data for ${/\((.+) ago\)/.exec((await lastOk.textContent()) ?? '')?.[1]}`);
    const firstAge = await age();
    await expect.poll(age, { timeout: 30_000 }).toBeGreaterThan(firstAge + 2);
    await expect(card.getByTestId('stage-kv')).toHaveText('—');
    await expect(card.getByTestId('stage-running')).toHaveText('—');
    // The verdict reads decode's queues as unknown, not as empty.
    await expect(page.getByTestId('verdict-headline')).not.toContainText(/decode KV cache \d/);
    await shots(page, 'metrics-hang');

    await fault(s, { fault: 'metrics-hang', on: false, role: 'decode' });
    await expect(card.getByTestId('metrics-state')).toContainText('families', { timeout: 60_000 });
    await page.getByTestId('nav-alerts').click();
    await expect(kv).toHaveAttribute('data-state', 'firing', { timeout: 60_000 });
    expect(errors).toEqual([]);
  });

  test('kv-full off: the KV alert resolves on fresh data and the verdict returns', async () => {
    test.setTimeout(300_000);
    const { page, errors } = s;
    await fault(s, { fault: 'kv-full', on: false, role: 'decode' });
    await expect(kvItem(page)).toHaveCount(0, { timeout: 240_000 });
    await expect(page.getByTestId('alert-history')).toContainText('resolved: decode KV');
    await page.getByTestId('nav-overview').click();
    await expect(page.getByTestId('verdict')).toHaveAttribute('data-kind', /^(healthy|idle)$/, {
      timeout: 120_000,
    });
    await expect(page.getByTestId('verdict-headline')).toHaveText(
      /^(Healthy|Idle)( again since \d\d:\d\d:\d\d)?:/,
    );
    await shots(page, 'kv-full-over');
    expect(errors).toEqual([]);
  });
});
