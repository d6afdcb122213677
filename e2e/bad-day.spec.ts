// The rest of the demo's bad day, told as the operator sees it (browser mode, the real core, the demo host over
// real SSH, Chromium at 1280×720): each scenario asserts the verdict, the alert states and the staleness display,
// with a screenshot of its telling moment in light and dark. Crash loop and recovery (verdict.spec), /metrics 500
// (alerts.spec) and a lost link (staleness.spec, staleness-fleet.spec) are told there.
//
// The fleet and the health check run the demo at speed 1: the core reads systemd's and the journal's times against
// its own clock, and a demo clock running ahead would date a start or a crash "in the future". The KV scenarios
// run it faster: a filled KV cache drains only as its long generations finish.
import { test, expect, type Page } from '@playwright/test';
import { apiCall } from './support/api';
import { pageSession, type PageSession } from './support/page-session';
import { shot } from './support/shots';
import { recordVerdicts, seenVerdicts } from './support/verdict-log';

interface AlertRuleLike {
  kind: string;
  [k: string]: unknown;
}

/** The default rules with holds of seconds, so a scenario needs seconds, not minutes. */
async function quickRules(s: PageSession): Promise<void> {
  const rules = await apiCall<AlertRuleLike[]>(s.app.url, 'getAlertRules', {});
  await apiCall(s.app.url, 'setAlertRules', {
    rules: rules.map((r) => ({
      ...r,
      ...(r.kind === 'kv-high' ? { forS: 2, clearForS: 5 } : {}),
      ...(r.kind === 'metrics-stale' ? { forS: 5, clearForS: 3 } : {}),
      ...(r.kind === 'service-inactive' ? { forS: 2, clearForS: 3 } : {}),
      ...(r.kind === 'health-failing' ? { forS: 8, clearForS: 3 } : {}),
      // A crash loop at real speed restarts about once a minute (the model loads between crashes); the window
      // outlasts the fleet's scenarios, so the alert of the first is still there for the last.
      ...(r.kind === 'restart-loop' ? { threshold: 2, windowS: 1800 } : {}),
    })),
  });
}

async function deploymentId(s: PageSession): Promise<string> {
  const [d] = await apiCall<Array<{ deployment: { id: string } }>>(s.app.url, 'listDeployments', {});
  return d.deployment.id;
}

async function fault(s: PageSession, args: Record<string, unknown>): Promise<void> {
  await apiCall(s.app.url, 'demoControl', { deploymentId: await deploymentId(s), ...args });
}

/** A demo fault through the command palette, as an operator turns it on: typed, the one command chosen. */
async function palette(page: Page, typed: string, command: string): Promise<void> {
  await page.keyboard.press('Control+k');
  const box = page.getByTestId('command-palette');
  await expect(box).toBeVisible();
  await page.getByTestId('palette-input').fill(typed);
  await expect(box.getByTestId('palette-item').first()).toHaveAttribute('data-command', command);
  await page.keyboard.press('Enter');
  await expect(box).toBeHidden();
}

async function shots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: shot(`bad-day-${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** "no data for 1m 10s — …" → seconds. */
function noDataS(text: string | null): number {
  const m = /no data for ((?:\d+\s*(?:h|m|s)\s*)+)/.exec(text ?? '');
  if (!m) throw new Error(`no "no data for" age in "${text}"`);
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1 };
  let s = 0;
  for (const [, n, u] of m[1].matchAll(/(\d+)\s*(h|m|s)/g)) s += Number(n) * unit[u];
  return s;
}

/** How many workers the router's own gauges call unhealthy now. */
async function unhealthyAtRouter(s: PageSession): Promise<number> {
  const snap = await apiCall<{ routerWorkers?: Array<{ healthy: boolean | null }> }>(
    s.app.url,
    'getDashboard',
    { deploymentId: await deploymentId(s) },
  );
  return (snap.routerWorkers ?? []).filter((w) => w.healthy === false).length;
}

const alertItem = (page: Page, rule: string, text?: string) => {
  const items = page.locator(`[data-testid=alert-item][data-rule="${rule}"]`);
  return text ? items.filter({ hasText: text }) : items;
};

test.describe('the fleet', () => {
  const s = pageSession(['--no-open']);

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    const { page, app } = s;
    await page.goto(app.url);
    await page.getByTestId('open-demo-fleet').click();
    await expect(page.getByTestId('page-overview')).toHaveAttribute('data-fleet', 'true', {
      timeout: 60_000,
    });
    for (const id of ['decode-0', 'decode-1', 'decode-2', 'prefill-0', 'prefill-1'])
      await expect(page.getByTestId(`worker-row-${id}`).getByTestId('worker-state')).toContainText('active', {
        timeout: 60_000,
      });
    await quickRules(s);
  });

  test('a crash loop of decode-1 from the palette: only decode-1 goes bad, the verdict names it and says the others serve; off, it recovers', async () => {
    test.setTimeout(600_000);
    const { page, errors } = s;
    const verdict = page.getByTestId('verdict');
    const headline = page.getByTestId('verdict-headline');
    await expect(verdict).toHaveAttribute('data-kind', /^(healthy|idle)$/, { timeout: 90_000 });
    await recordVerdicts(page);

    await palette(page, 'crash-loop decode-1', 'demo-crash-loop-on-decode-1');
    // Degraded in the headline, or beside a decode bottleneck of the two left serving the fleet's load.
    await expect(verdict).toContainText(
      /decode-1 on gpu-b is not serving — crash-looping: restart \d+.*; 2 of 3 decode workers serve/,
      { timeout: 180_000 },
    );
    await expect(verdict).toHaveAttribute('data-kind', /^(service-down|decode-bound)$/);
    await expect(headline).not.toContainText(/decode-[02] on gpu-b is not serving/);
    await expect(page.getByTestId('worker-row-decode-1')).toHaveAttribute('data-tone', /bad|warn/);
    for (const id of ['decode-0', 'decode-2', 'prefill-0', 'prefill-1']) {
      await expect(page.getByTestId(`worker-row-${id}`), id).toHaveAttribute('data-tone', 'ok');
      await expect(page.getByTestId(`worker-row-${id}`).getByTestId('worker-state')).toContainText('active');
    }
    await expect(page.getByTestId('role-group-decode').getByTestId('role-healthy')).toContainText(
      '2/3 healthy',
    );
    await shots(page, 'fleet-crash-loop');

    // The restart-loop alert is about decode-1 only.
    await page.getByTestId('nav-alerts').click();
    const loop = alertItem(page, 'restart-loop');
    // Two restarts: at real speed the model loads for a while between crashes.
    await expect(loop.first()).toHaveAttribute('data-state', 'firing', { timeout: 240_000 });
    await expect(loop).toHaveCount(1);
    await expect(loop).toContainText('decode-1');
    await expect(loop).not.toContainText(/decode-[02]/);
    await page.getByTestId('nav-overview').click();

    await palette(page, 'end the crash loop of decode-1', 'demo-crash-loop-off-decode-1');
    // Back once its model loaded (its /metrics answers: a KV figure again) and the router took it again.
    await expect(page.getByTestId('worker-row-decode-1').getByTestId('worker-kv')).not.toHaveAttribute(
      'data-ratio',
      '',
      { timeout: 300_000 },
    );
    await expect.poll(() => unhealthyAtRouter(s), { timeout: 120_000 }).toBe(0);
    await expect(page.getByTestId('worker-row-decode-1')).toHaveAttribute('data-tone', 'ok', {
      timeout: 60_000,
    });
    // Back: no longer down (the fleet's load may still make it decode-bound, which the verdict may say).
    await expect(verdict).not.toHaveAttribute('data-kind', 'service-down', { timeout: 60_000 });
    await expect(headline).not.toContainText('decode-1 on gpu-b is not serving');
    await expect(page.getByTestId('role-group-decode').getByTestId('role-healthy')).toContainText(
      '3/3 healthy',
    );
    // The 5xx of requests the router still sent to decode-1 never blamed the router.
    const seen = await seenVerdicts(page);
    expect(seen.filter((l) => l.startsWith('router-bound'))).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('the router never re-adds decode-1: decode-1 serves, the verdict points at the router and names it', async () => {
    test.setTimeout(420_000);
    const { page, errors } = s;
    const verdict = page.getByTestId('verdict');
    const headline = page.getByTestId('verdict-headline');
    // From a fleet the router fully serves (decode-1 back from its crash loop, re-added).
    await expect.poll(() => unhealthyAtRouter(s), { timeout: 240_000 }).toBe(0);
    await palette(page, 'never re-adds decode-1', 'demo-router-never-readds-on-decode-1');
    // decode-1's /health fails long enough for the router to mark it unhealthy (3 failed checks, 10 s apart).
    await fault(s, { fault: 'health-never-ok', on: true, worker: 'decode-1' });
    await expect.poll(() => unhealthyAtRouter(s), { timeout: 120_000 }).toBe(1);
    await fault(s, { fault: 'health-never-ok', on: false, worker: 'decode-1' });

    // decode-1 answers its own /health; the router refuses it and keeps doing so.
    const row = page.getByTestId('worker-row-decode-1');
    await expect(row.getByTestId('worker-at-router')).toHaveText('not routed', { timeout: 60_000 });
    // The router blamed — or, once decode-0 and decode-2 pile up with decode-1's share, the stage that piles up,
    // with the refusal said first: never "add decode capacity" alone while a serving worker gets nothing.
    await expect(headline).toHaveText(
      /^(Router-bound: the router is failing requests while the servers have room — \d+ of \d+ workers healthy at the router; not healthy: decode-1 on gpu-b|\w+-bound: .*; the router routes nothing to decode-1, which serves\.$)/,
      { timeout: 150_000 },
    );
    await expect(page.getByTestId('verdict-next')).toContainText(
      "the router counts decode-1 unhealthy while its own /health answers: check the router's health checks",
    );
    await expect(page.getByTestId('role-group-decode').getByTestId('role-healthy-at-router')).toContainText(
      '2/3 healthy at the router',
    );
    expect(await unhealthyAtRouter(s)).toBe(1);
    await shots(page, 'router-never-readds');

    // Turned off: the router re-adds decode-1 after its own checks, and the verdict leaves the router.
    await palette(page, 'router re-adds decode-1 again', 'demo-router-never-readds-off-decode-1');
    await expect(row.getByTestId('worker-at-router')).toHaveCount(0, { timeout: 120_000 });
    await expect(verdict).not.toHaveAttribute('data-kind', 'router-bound', { timeout: 30_000 });
    // (Its evidence may still say what it was: "was router-bound until …: … not healthy: decode-1".)
    await expect(page.getByTestId('verdict-headline')).not.toContainText('not healthy: decode-1');
    expect(errors).toEqual([]);
  });

  test('the link to gpu-b down for 30 s: its workers unknown since their last reading, back by itself, the alerts of before kept', async () => {
    test.setTimeout(300_000);
    const { page, errors } = s;
    // The restart-loop alert of decode-1's crash loop still counts its restarts in its window.
    await page.getByTestId('nav-alerts').click();
    const loop = alertItem(page, 'restart-loop', 'decode-1');
    await expect(loop).toHaveAttribute('data-state', 'firing');
    await page.getByTestId('nav-overview').click();

    await palette(page, 'drop the link to gpu-b for 30', 'demo-link-down-gpu-b-30');
    for (const w of ['decode-0', 'decode-1', 'decode-2'])
      await expect(page.getByTestId(`worker-row-${w}`).getByTestId('worker-unknown'), w).toHaveText(
        /^unknown · was /,
        { timeout: 30_000 },
      );
    await expect(page.getByTestId('verdict')).toHaveAttribute('data-kind', 'unreachable');
    await expect(page.getByTestId('verdict-headline')).toHaveText(
      /^gpu-b unreachable since \d\d:\d\d:\d\d \(.+\): decode-0, decode-1, decode-2 \(gpu-b, gpu-c\) not read\.$/,
    );
    await expect(page.getByTestId('role-group-decode').getByTestId('role-healthy')).toHaveText(
      /^all 3 unknown since \d{1,2}:\d{2}:\d{2}/,
    );
    for (const w of ['prefill-0', 'prefill-1'])
      await expect(page.getByTestId(`worker-row-${w}`).getByTestId('worker-state')).toContainText('active');
    await expect(page.getByTestId('connection-banner-gpu-b')).toContainText(
      /stopped answering at|was lost at/,
    );
    await shots(page, 'fleet-link-down');

    // The alert of before: kept, without data, never resolved by the silence.
    await page.getByTestId('nav-alerts').click();
    await expect(loop).toHaveAttribute('data-state', 'no-data', { timeout: 30_000 });
    await expect(loop.getByTestId('alert-no-data')).toContainText(/no data for \d+s/);
    await expect(
      page
        .getByTestId('alert-history')
        .getByTestId('event-item')
        .filter({ hasText: 'resolved: decode is restarting' }),
    ).toHaveCount(0);
    await shots(page, 'fleet-link-down-alerts');

    // Back by itself after 30 s: live again, the alert read from fresh data.
    await page.getByTestId('nav-overview').click();
    for (const w of ['decode-0', 'decode-1', 'decode-2'])
      await expect(page.getByTestId(`worker-row-${w}`).getByTestId('worker-state'), w).toContainText(
        'active',
        {
          timeout: 120_000,
        },
      );
    await expect(page.getByTestId('connection-banner-gpu-b')).toHaveCount(0, { timeout: 60_000 });
    await expect(page.getByTestId('verdict')).not.toHaveAttribute('data-kind', 'unreachable');
    await page.getByTestId('nav-alerts').click();
    await expect(loop).toHaveAttribute('data-state', 'firing', { timeout: 30_000 });
    expect(errors).toEqual([]);
  });
});

test.describe('decode whose /health never answers OK after a restart', () => {
  const s = pageSession(['--demo', '--no-open']);

  test('not serving, and why: the verdict and the card say so', async () => {
    test.setTimeout(420_000);
    const { page, app, errors } = s;
    await page.goto(app.url);
    const card = page.getByTestId('service-card-decode');
    await expect(card.getByTestId('condition')).toHaveAttribute('data-kind', 'serving', { timeout: 90_000 });
    await quickRules(s);
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
    await quickRules(s);
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
