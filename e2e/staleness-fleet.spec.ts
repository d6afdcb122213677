// The demo fleet with the links to its decode hosts blackholed (link-down on the hosts running decode: gpu-b and
// gpu-c), browser mode at 1280×720: each silent host says so on its own line and in the host list, the fleet's
// own link (gpu-a) stays connected, the decode workers read "unknown · was healthy" (greyed) while the prefill
// workers on gpu-a keep their live state, and nothing says "no decode worker serving". Every host's link push
// used to overwrite the fleet's link ("the host is not connected" over a fleet whose origin answered) while the
// host list kept the states of the moment the fleet opened.
import { test, expect } from '@playwright/test';
import { apiCall } from './support/api';
import { pageSession } from './support/page-session';
import { shot } from './support/shots';

const session = pageSession(['--no-open']);

test('decode hosts silent: their workers unknown since their last reading, the rest live, each host said', async () => {
  test.setTimeout(240_000);
  const { app, page, errors } = session;
  await page.goto(app.url);
  await page.getByTestId('open-demo-fleet').click();
  await expect(page.getByTestId('page-overview')).toHaveAttribute('data-fleet', 'true', { timeout: 60_000 });
  for (const id of ['decode-0', 'decode-1', 'decode-2', 'prefill-0'])
    await expect(page.getByTestId(`worker-row-${id}`).getByTestId('worker-state')).toContainText('active', {
      timeout: 60_000,
    });
  const [d] = await apiCall<Array<{ deployment: { id: string } }>>(app.url, 'listDeployments', {});
  await apiCall(app.url, 'demoControl', {
    deploymentId: d.deployment.id,
    fault: 'link-down',
    on: true,
    role: 'decode',
  });

  for (const id of ['decode-0', 'decode-1', 'decode-2']) {
    const row = page.getByTestId(`worker-row-${id}`);
    await expect(row.getByTestId('worker-unknown'), id).toHaveText('unknown · was healthy', {
      timeout: 20_000,
    });
    await expect(row).toHaveAttribute('data-tone', 'idle');
    await expect(row.getByTestId('worker-unknown')).toHaveAttribute(
      'title',
      /last seen healthy at \d{1,2}:\d{2}:\d{2}/,
    );
  }
  await expect(page.getByTestId('role-group-decode').getByTestId('role-healthy')).toHaveText(
    /^all 3 unknown since \d{1,2}:\d{2}:\d{2}/,
  );
  // The prefill workers on gpu-a are read as before.
  for (const id of ['prefill-0', 'prefill-1'])
    await expect(page.getByTestId(`worker-row-${id}`).getByTestId('worker-state')).toContainText('active');
  // Each host's own link: gpu-b and gpu-c not answering, gpu-a (the fleet's own) connected.
  for (const h of ['gpu-b', 'gpu-c']) {
    await expect(page.getByTestId(`host-link-${h}`)).not.toHaveAttribute('data-state', 'connected', {
      timeout: 20_000,
    });
    await expect(page.getByTestId(`connection-banner-${h}`)).toContainText(
      /stopped answering at|was lost at/,
    );
  }
  await expect(page.getByTestId('connection-banner-gpu-b')).toContainText(
    'Unknown now: decode-0, decode-1, decode-2.',
  );
  await expect(page.getByTestId('host-link-gpu-a')).toHaveAttribute('data-state', 'connected');
  await expect(page.getByTestId('connection-state')).toHaveAttribute('data-state', 'connected');
  await expect(page.getByTestId('connection-banner-text')).toHaveCount(0);
  await expect(page.getByTestId('pd-link-transfer').getByTestId('transfer-unknown')).toHaveText(
    /^decode unknown since \d{1,2}:\d{2}:\d{2}/,
  );
  await expect(page.getByTestId('pd-link-transfer')).not.toContainText('serving');
  await expect(page.getByTestId('role-group-decode')).not.toContainText(/\byet\b/);

  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: shot(`stale-fleet-link-down-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });

  // A silent worker's page: unknown, its state as last read, its units' state unknown.
  await page.getByTestId('worker-row-decode-1').click();
  const props = page.getByTestId('worker-props');
  await expect(props.getByTestId('condition')).toHaveText(/^unknown — last seen healthy at /);
  await expect(props.getByTestId('worker-unit-gpu-b')).toContainText('unknown');

  await apiCall(app.url, 'demoControl', {
    deploymentId: d.deployment.id,
    fault: 'link-down',
    on: false,
    role: 'decode',
  });
  await page.getByTestId('nav-overview').click();
  for (const id of ['decode-0', 'decode-1', 'decode-2'])
    await expect(page.getByTestId(`worker-row-${id}`).getByTestId('worker-state')).toContainText('active', {
      timeout: 90_000,
    });
  await expect(page.getByTestId('connection-banner')).toHaveCount(0, { timeout: 30_000 });
  expect(errors).toEqual([]);
});
