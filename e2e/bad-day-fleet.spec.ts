// The demo fleet's bad day, told as the operator sees it (browser mode, the real core, the demo fleet over real
// SSH, Chromium at 1280×720): a crash loop of decode-1 from the command palette, a router that never re-adds it,
// and the link to gpu-b down for 30 s — the verdict, the alert states, the worker rows and the staleness display,
// with a screenshot of each telling moment in light and dark. The one-host scenarios are in bad-day.spec.ts; the
// two files run side by side.
//
// The fleet runs the demo at speed 1: the core reads systemd's and the journal's times against its own clock, and
// a demo clock running ahead would date a start or a crash "in the future". The scenarios are serial on purpose:
// the link scenario reads the restart-loop alert the crash loop raised.
import { test, expect } from '@playwright/test';
import { pageSession } from './support/page-session';
import { alertItem, fault, palette, shots, unhealthyAtRouter } from './support/bad-day';
import { quickRules, RESTART_LOOP_AT_REAL_SPEED } from './support/quick-rules';
import { recordVerdicts, seenVerdicts } from './support/verdict-log';
import { QUICK_LOAD } from './support/web-app';

test.describe('the fleet', () => {
  const s = pageSession(['--no-open', ...QUICK_LOAD]);

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
    await quickRules(s.app.url, RESTART_LOOP_AT_REAL_SPEED);
  });

  test('a crash loop of decode-1 from the palette: only decode-1 goes bad, the verdict names it and says the others serve; off, it recovers', async () => {
    test.setTimeout(600_000);
    const { page, errors } = s;
    const verdict = page.getByTestId('verdict');
    const headline = page.getByTestId('verdict-headline');
    // A start where every worker serves, read first. The fleet's own load makes it decode-bound now and then (two
    // decode pools near full): that is a bottleneck, not a worker down, and it is not what this scenario changes.
    await expect(verdict).not.toHaveAttribute('data-kind', /^(unknown|service-down|unreachable)$/, {
      timeout: 90_000,
    });
    await expect(headline).not.toContainText('not serving');
    await recordVerdicts(page);

    await palette(page, 'crash-loop decode-1', 'demo-crash-loop-on-decode-1');
    // Degraded in the headline, or beside a decode bottleneck of the two left serving the fleet's load.
    await expect(verdict).toContainText(
      /decode-1 on gpu-b is not serving — crash-looping: restart \d+.*; 2 of 3 decode workers serve/,
      { timeout: 180_000 },
    );
    // The kind is the degradation itself, or the bottleneck it causes beside it: the two decode workers left
    // take the fleet's load (decode-bound), or prefill's hand-overs to decode-1 wait until the router drops it
    // (transfer-bound). Never healthy, never the router's.
    await expect(verdict).toHaveAttribute('data-kind', /^(service-down|decode-bound|transfer-bound)$/);
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
