// One browser-mode app and one Chromium page shared by the tests of a serial spec file, with the page's uncaught
// errors collected (each spec ends by asserting there were none): the setup every multi-test spec repeated.
import { test, type Browser, type Page } from '@playwright/test';
import { launchChromium } from './browser';
import { startWebApp, type WebApp } from './web-app';

export interface PageSession {
  app: WebApp;
  browser: Browser;
  page: Page;
  errors: string[];
}

/** Registers the spec's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function pageSession(args: string[], viewport = { width: 1280, height: 720 }): PageSession {
  const s = { errors: [] as string[] } as PageSession;
  test.describe.configure({ mode: 'serial' });
  test.beforeAll(async () => {
    s.app = await startWebApp(args);
    s.browser = await launchChromium();
    s.page = await s.browser.newPage({ viewport });
    s.page.on('pageerror', (e) => s.errors.push(e.message));
  });
  test.afterAll(async () => {
    await s.browser?.close();
    await s.app?.stop();
  });
  return s;
}

/** The demo fleet's workers and the host serving each one's HTTP (decode-2's rank 1 on gpu-c serves none). */
export const DEMO_FLEET_WORKERS = {
  'prefill-0': 'gpu-a',
  'prefill-1': 'gpu-a',
  'decode-0': 'gpu-b',
  'decode-1': 'gpu-b',
  'decode-2': 'gpu-b',
} as const;
