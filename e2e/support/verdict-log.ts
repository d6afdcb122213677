// Every verdict the overview's box shows, in order, as it changes: a test asserts what was never said (the router
// blamed at any moment), which waiting on the box's current text cannot see.
import type { Page } from '@playwright/test';

type Logged = Window & { seenVerdicts?: string[] };

/** Starts recording the verdict box's kind and headline on each change ("service-down | Requests cannot …"). */
export async function recordVerdicts(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as Logged;
    const seen: string[] = (w.seenVerdicts = []);
    const box = document.querySelector('[data-testid="verdict"]')!;
    const note = (): void => {
      const line = `${box.getAttribute('data-kind')} | ${box.querySelector('[data-testid="verdict-headline"]')?.textContent}`;
      if (seen.at(-1) !== line) seen.push(line);
    };
    new MutationObserver(note).observe(box, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    });
    note();
  });
}

/** What the box said since recordVerdicts, one "kind | headline" line per change. */
export function seenVerdicts(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as Logged).seenVerdicts ?? []);
}
