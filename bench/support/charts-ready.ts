// The moment a page's charts are all drawn, as the benches that time a page's first paint define it: every chart
// on the page has reported `data-state="ready"` (set by TimeChart once its first frame with data is drawn).
import type { Page } from 'playwright';

export async function allChartsReady(page: Page, timeoutMs = 300_000): Promise<void> {
  await page.waitForFunction(
    () => {
      const charts = [...document.querySelectorAll('[data-testid^="chart-"][data-state]')];
      return charts.length > 0 && charts.every((c) => c.getAttribute('data-state') === 'ready');
    },
    undefined,
    { timeout: timeoutMs, polling: 16 },
  );
}
