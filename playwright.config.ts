import { defineConfig } from '@playwright/test';

// Two workers. The two bad-day specs mostly wait on the demo's real-time faults, but the fleet's runs five demo
// hosts and starves a spec beside it on two cores (history's charts saw no scrape for 30 s): they run last, as a
// project of their own, beside each other.
const BAD_DAY = /bad-day.*\.spec\.ts/;

export default defineConfig({
  testDir: './e2e',
  testMatch: /.*\.spec\.ts/,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 2,
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results',
  use: { trace: 'retain-on-failure', screenshot: 'only-on-failure' },
  projects: [
    { name: 'app', testIgnore: BAD_DAY },
    { name: 'bad-day', testMatch: BAD_DAY, dependencies: ['app'] },
  ],
});
