// The SGLang fixtures and inline expositions of these tests go through the app's own parser, so a mapping
// test also fails when the parser's model (family names, histogram grouping, labels) stops matching it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseExposition, type Exposition } from '../../src/main/core/probes/exposition/parser';

/** Prometheus text 0.0.4, as SGLang and the routers serve it, parsed by parseExposition. */
export function prom(text: string): Exposition {
  return parseExposition(text, 'prometheus');
}

/** The text of test/sglang/fixtures/<name>. */
export function fixtureText(name: string): string {
  return readFileSync(join(__dirname, 'fixtures', name), 'utf8');
}

/** test/sglang/fixtures/<name>, parsed by parseExposition. */
export function fixture(name: string): Exposition {
  return prom(fixtureText(name));
}
