// Recordings damaged after they were closed, in the browser (real Chromium, browser mode): a copy cut after its
// end record opens from its overview with a note, and once the full read is in, the review banner says the index
// is missing and that the data is complete; one whose overview is damaged opens from its data at once, and the
// banner says where the overview is damaged and that the review was rebuilt from the data.
import { mkdtempSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect, type Browser, type Page } from '@playwright/test';
import { launchChromium } from './support/browser';
import { startWebApp, type WebApp } from './support/web-app';
import { writeSession } from '../test/review/helpers';
import { scanMarked } from '../src/main/core/recording/members';

const dataDir = mkdtempSync(join(tmpdir(), 'pdc-e2e-review-damaged-'));
let app: WebApp | undefined;
let browser: Browser;
let page: Page;
const errors: string[] = [];
let overviewAt = 0;
let cutAt = 0;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const dir = join(dataDir, 'recordings');
  // 21 minutes: overview members after 10 and 20 minutes and at close, then the index.
  const s = await writeSession(dir, 21, { seed: 11 });
  const bytes = await readFile(s.path);
  const members = scanMarked(bytes);
  cutAt = members[members.length - 2].at;
  await writeFile(join(dir, 'cut-after-close.pdrec.jsonl.gz'), bytes.subarray(0, cutAt));
  overviewAt = members[0].at;
  const damaged = Buffer.from(bytes);
  damaged[overviewAt + 200] ^= 0xff;
  await writeFile(join(dir, 'damaged-overview.pdrec.jsonl.gz'), damaged);
  app = await startWebApp(['--no-open'], { PD_CONSOLE_DATA_DIR: dataDir });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(app.url);
});

test.afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function openFromSessions(id: string): Promise<void> {
  // From the start page, or from the top bar of a review already open.
  const fromTop = page.getByTestId('open-sessions-topbar');
  await ((await fromTop.count()) > 0 ? fromTop : page.getByTestId('open-sessions')).click();
  await page.getByTestId(`session-open-${id}`).click();
  await expect(page.getByTestId('review-bar')).toBeVisible({ timeout: 60_000 });
}

test('a copy cut after its end record: the banner says what the full read found once it is in', async () => {
  await openFromSessions('cut-after-close');
  const banner = page.getByTestId('review-warnings');
  // The overview's own note first (it cannot tell a cut from a crash) …
  await expect(banner).toContainText('no index at its end');
  // … then the full read's account, pushed to the open page.
  await expect(banner).toContainText(
    `index is missing: the file ends at byte ${cutAt}, after its end record`,
    {
      timeout: 60_000,
    },
  );
  await expect(banner).not.toContainText('no index at its end');
  await expect(page.getByTestId('review-integrity')).toHaveText('complete');
  expect(errors).toEqual([]);
});

test('a damaged overview: the review is rebuilt from the data, and the banner says where and in how long', async () => {
  await openFromSessions('damaged-overview');
  const banner = page.getByTestId('review-warnings');
  await expect(banner).toContainText(`overview at byte ${overviewAt} (`);
  await expect(banner).toContainText('the data is intact and all of it is shown');
  await expect(banner).toContainText(/The review was rebuilt from the recording's data in \d+\.\d s/);
  await expect(page.getByTestId('review-integrity')).toHaveText('complete');
  expect(errors).toEqual([]);
});
