// Where e2e screenshots go. A test run writes them under test-results/ (untracked: look at them there);
// only `npm run docs:screenshots` writes docs/screenshots, on purpose, so the tracked images change only
// when someone means to regenerate them.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

export const SHOTS_DIR =
  process.env.PD_DOCS_SCREENSHOTS === '1'
    ? join(root, 'docs', 'screenshots')
    : join(root, 'test-results', 'screenshots');

/** The path of a named screenshot, its folder created. */
export function shot(name: string): string {
  mkdirSync(SHOTS_DIR, { recursive: true });
  return join(SHOTS_DIR, name);
}
