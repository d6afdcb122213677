// "A renamed upstream metric is one edit": outside the table of names (src/shared/signals/metric-names.ts),
// the shipped family list and the demo host (which plays the upstream servers), no source file spells an
// upstream family as a code literal. Prose (messages, comments) may name them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SGLANG, SGL_ROUTER, SMG } from '../../src/shared/signals/metric-names';

const ROOT = join(__dirname, '..', '..');
const ALLOWED = new Set(['src/shared/signals/metric-names.ts', 'src/shared/signals/known-families.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'demo' ? [] : sources(p);
    return /\.tsx?$/.test(name) ? [p] : [];
  });
}

describe('upstream metric names', () => {
  it('are spelled once, in the metric-names table', () => {
    const names = new Set<string>([
      ...Object.values(SGLANG),
      ...Object.values(SMG),
      ...Object.values(SGL_ROUTER),
    ]);
    expect(names.size).toBeGreaterThan(50);
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      const rel = relative(ROOT, file);
      if (ALLOWED.has(rel)) continue;
      const text = readFileSync(file, 'utf8');
      // A whole string literal that is exactly a family name the table holds.
      for (const m of text.matchAll(/(['"`])((?:sglang:|smg_|sgl_router_)[a-z_:]+)\1/g))
        if (names.has(m[2])) offenders.push(`${rel}: ${m[2]}`);
    }
    expect(offenders).toEqual([]);
  });
});
