// The parser's memory stays proportional to its input on inputs built to blow it up. Escapes used to be
// decoded by string concatenation: one ~32-byte cons-string node per escape, alive as long as the result, so
// 8 MB of "\\\\" in one label value held ~16× its size. The bound (4×) is loose against noise and still far
// below that; bench/parser.ts prints the measured figures.

import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { ExpositionFormat } from '../../src/main/core/probes/exposition/types';

/** A full garbage collection, when this process lets us have one. */
function findGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  try {
    v8.setFlagsFromString('--expose-gc');
    const fromContext: unknown = vm.runInNewContext('gc');
    return typeof fromContext === 'function' ? (fromContext as () => void) : undefined;
  } catch {
    return undefined;
  }
}

const gc = findGc();
if (gc === undefined) {
  console.warn(
    'exposition memory test skipped: no garbage collector access (run node with --expose-gc); without a ' +
      'full GC before and after, heap figures are noise.',
  );
}

const SIZE = 8 * 1024 * 1024;

/** prefix + `unit` repeated to SIZE characters + suffix, built as one flat string. */
function big(prefix: string, unit: string, suffix: string): string {
  const chunk = unit.repeat((64 * 1024) / unit.length);
  return [prefix, ...Array<string>(SIZE / chunk.length).fill(chunk), suffix].join('');
}

/** Heap + external bytes the parse adds: the larger of what it holds when it returns and what it keeps. */
function growth(text: string, format: ExpositionFormat): number {
  const collect = gc as () => void;
  collect();
  const used = (): number => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const before = used();
  const result = parseExposition(text, format);
  const atEnd = used();
  collect();
  const kept = used();
  expect(result.sampleCount).toBe(1); // and keeps the result alive until here
  return Math.max(atEnd, kept) - before;
}

describe.skipIf(gc === undefined)('parser memory on adversarial input', () => {
  it.each([
    ['escaped backslashes in one label value', big('m{a="', '\\\\', '"} 1\n'), 'prometheus'],
    ['the same in OpenMetrics', big('m{a="', '\\\\', '"} 1\n# EOF\n'), 'openmetrics'],
    ['escaped quotes and newlines in one label value', big('m{a="', '\\"\\n', '"} 1\n'), 'prometheus'],
    ['escaped backslashes in HELP text', big('# HELP m ', '\\\\', '\nm 1\n'), 'prometheus'],
    ['a two-byte label value with escapes', big('m{a="', 'é€\\\\', '"} 1\n'), 'prometheus'],
  ] as const)('%s: grows by less than 4× the input', (_what, text, format) => {
    const ratio = growth(text, format) / Buffer.byteLength(text, 'utf8');
    expect(ratio).toBeLessThan(4);
  });
});
