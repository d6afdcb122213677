// The fleet KV page's charts: a role whose workers fit the line colours keeps its one chart (as the 3-host demo
// fleet always had), a larger role is spread over charts of up to eight workers in id order, each with the role's
// total, so no two lines of a chart share a colour and a worker's chart does not change as the table re-sorts.
import { expect, it } from 'vitest';
import { chartGroups, kvCharts, WORKERS_PER_CHART } from '../../src/renderer/src/workers/kv-charts';

const decode = (n: number): string[] => Array.from({ length: n }, (_, i) => `decode-${i}`);

it('keeps one chart for a role that fits the colours', () => {
  const [only, ...more] = kvCharts('decode', ['decode-2', 'decode-0', 'decode-1']);
  expect(more).toEqual([]);
  expect(only.id).toBe('fleet-kv-decode');
  expect(only.series.map((s) => s.key)).toEqual([
    'decode.kv_ratio@decode-0',
    'decode.kv_ratio@decode-1',
    'decode.kv_ratio@decode-2',
    'decode.kv_ratio',
  ]);
});

it('spreads 24 decode workers over three charts of eight, in numeric id order, each with the total', () => {
  expect(WORKERS_PER_CHART).toBe(8);
  const ids = decode(24).reverse();
  const charts = kvCharts('decode', ids);
  expect(charts.map((c) => c.id)).toEqual(['fleet-kv-decode', 'fleet-kv-decode-2', 'fleet-kv-decode-3']);
  expect(chartGroups(ids)[1]).toEqual(decode(16).slice(8));
  for (const c of charts) {
    expect(c.series.at(-1)?.key).toBe('decode.kv_ratio');
    expect(new Set(c.series.slice(0, -1).map((s) => s.color)).size).toBe(c.series.length - 1);
  }
  expect(charts[2].title).toBe('decode KV usage: decode-16 … decode-23, and in all');
  expect(charts.flatMap((c) => c.series.slice(0, -1).map((s) => s.label))).toEqual(decode(24));
});
