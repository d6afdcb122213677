import { defineConfig } from '@playwright/test';

// One worker. With two on a two-core machine, the specs that measure the page (chart-requests' frame order) or
// wait on the demo's scrapes (history's charts beside the fleet bad day's five demo hosts) failed under the
// other's load; the suite is run as the operator's machine would run the app, one at a time.
export default defineConfig({
  testDir: './e2e',
  testMatch: /.*\.spec\.ts/,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results',
  use: { trace: 'retain-on-failure', screenshot: 'only-on-failure' },
});
