// What the bad-day specs share: demo faults through the API or the command palette, the screenshots of a telling
// moment, and readings of the page and the router.
import { expect, type Page } from '@playwright/test';
import { apiCall } from './api';
import type { PageSession } from './page-session';
import { shot } from './shots';

export async function deploymentId(s: PageSession): Promise<string> {
  const [d] = await apiCall<Array<{ deployment: { id: string } }>>(s.app.url, 'listDeployments', {});
  return d.deployment.id;
}

export async function fault(s: PageSession, args: Record<string, unknown>): Promise<void> {
  await apiCall(s.app.url, 'demoControl', { deploymentId: await deploymentId(s), ...args });
}

/** A demo fault through the command palette, as an operator turns it on: typed, the one command chosen. */
export async function palette(page: Page, typed: string, command: string): Promise<void> {
  await page.keyboard.press('Control+k');
  const box = page.getByTestId('command-palette');
  await expect(box).toBeVisible();
  await page.getByTestId('palette-input').fill(typed);
  await expect(box.getByTestId('palette-item').first()).toHaveAttribute('data-command', command);
  await page.keyboard.press('Enter');
  await expect(box).toBeHidden();
}

export async function shots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: shot(`bad-day-${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** "no data for 1m 10s — …" → seconds. */
export function noDataS(text: string | null): number {
  const m = /no data for ((?:\d+\s*(?:h|m|s)\s*)+)/.exec(text ?? '');
  if (!m) throw new Error(`no "no data for" age in "${text}"`);
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1 };
  let s = 0;
  for (const [, n, u] of m[1].matchAll(/(\d+)\s*(h|m|s)/g)) s += Number(n) * unit[u];
  return s;
}

/** How many workers the router's own gauges call unhealthy now. */
export async function unhealthyAtRouter(s: PageSession): Promise<number> {
  const snap = await apiCall<{ routerWorkers?: Array<{ healthy: boolean | null }> }>(
    s.app.url,
    'getDashboard',
    { deploymentId: await deploymentId(s) },
  );
  return (snap.routerWorkers ?? []).filter((w) => w.healthy === false).length;
}

export const alertItem = (page: Page, rule: string, text?: string) => {
  const items = page.locator(`[data-testid=alert-item][data-rule="${rule}"]`);
  return text ? items.filter({ hasText: text }) : items;
};
