// Chromium for the e2e run: Debian's /usr/bin/chromium (Playwright cannot download browsers here),
// or Playwright's own browser where one is installed.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from '@playwright/test';

const CANDIDATES = [process.env.PD_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  Boolean,
) as string[];

export async function launchChromium(): Promise<Browser> {
  const executablePath = CANDIDATES.find((p) => existsSync(p));
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
