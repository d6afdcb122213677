import { defineConfig } from '@playwright/test';

// The specs that measure the page (chart-requests' paint and request order) or read charts filled by the demo's
// scrapes within a deadline (history) run first and alone: beside another spec's demo hosts on a two-core machine
// they failed under its load (history beside the fleet bad day's five demo hosts). Every other spec then runs
// two at a time: most of their time is spent waiting on the demo at real speed (model loads, crash loops,
// router checks), not on the CPU. A failure in the first group stops the run before the second.
const MEASURED = /\/(chart-requests|history)\.spec\.ts$/;

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
    { name: 'measured, alone', testMatch: MEASURED, workers: 1 },
    { name: 'scenarios, two at a time', testIgnore: MEASURED, dependencies: ['measured, alone'] },
  ],
});
