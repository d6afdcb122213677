// Every exposition fixture holds to the upstream inventory of the era its first line names
// (`# inventory-era: E1…E4 | sglang-router-0.2.4 | smg-0.3 | smg-1.5 | smg-engine-metrics`): no family,
// type or label that version's code does not emit. Same check as the demo's (test/demo/inventory.ts),
// through the app's parser.
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_ERAS, ROUTER_ERAS } from '../../src/main/demo/eras';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { inventoryAvailable, inventoryViolations, SKIP_MESSAGE, type Era } from '../demo/inventory';

if (!inventoryAvailable) console.warn(SKIP_MESSAGE);

const DIR = resolve(__dirname, 'fixtures');
const ERAS: readonly string[] = [...DEMO_ERAS, ...ROUTER_ERAS];
const files = readdirSync(DIR).filter((f) => f.endsWith('.prom'));

function eraOf(file: string, text: string): Era {
  const m = /^# inventory-era: (\S+)/.exec(text);
  if (!m || !ERAS.includes(m[1]))
    throw new Error(
      `${file}: the first line must be "# inventory-era: <era>" with one of ${ERAS.join(', ')}; add it so the fixture is checked against that version's code`,
    );
  return m[1] as Era;
}

describe.skipIf(!inventoryAvailable)('fixtures against the upstream inventory', () => {
  it('there are fixtures to check', () => {
    expect(files.length).toBeGreaterThan(5);
  });

  it.each(files)('%s', (file) => {
    const text = readFileSync(resolve(DIR, file), 'utf8');
    const era = eraOf(file, text);
    expect(inventoryViolations(parseExposition(text, 'prometheus'), era, file)).toEqual([]);
  });
});
