// The default CSV export of a session: the signals review charts (a column per key), a row per scrape time with
// each group's values on its own rows, float32 values as their shortest decimals, gaps empty, a window honoured.
import { describe, expect, it } from 'vitest';
import { SignalTable } from '../../src/main/core/review/signal-table';
import { signalsCsvChunks } from '../../src/main/core/review/signals-csv';

const T0 = Date.UTC(2026, 10, 29, 5, 52, 0);
const table = new SignalTable(
  new Map([
    [
      'decode',
      {
        t: Float64Array.from([T0, T0 + 1000]),
        cols: new Map([
          ['decode.kv_ratio', Float32Array.from([0.35, NaN])],
          ['decode.ttft_p99_s', Float32Array.from([1.25, 2])],
        ]),
      },
    ],
    [
      'prefill',
      {
        t: Float64Array.from([T0, T0 + 2000]),
        cols: new Map([['prefill.kv_ratio', Float32Array.from([0.1, 0.2])]]),
      },
    ],
  ]),
);

describe('signalsCsvChunks', () => {
  it('one column per signal key, a row per time, values as read back from float32', () => {
    expect([...signalsCsvChunks(table)].join('')).toBe(
      [
        'time_utc,timestamp_ms,decode.kv_ratio,decode.ttft_p99_s,prefill.kv_ratio',
        `2026-11-29T05:52:00.000Z,${T0},0.35,1.25,0.1`,
        `2026-11-29T05:52:01.000Z,${T0 + 1000},,2,`,
        `2026-11-29T05:52:02.000Z,${T0 + 2000},,,0.2`,
        '',
      ].join('\n'),
    );
  });

  it('only the chosen window', () => {
    const rows = [...signalsCsvChunks(table, { fromMs: T0 + 500, toMs: T0 + 1500 })].join('').split('\n');
    expect(rows.slice(1)).toEqual([`2026-11-29T05:52:01.000Z,${T0 + 1000},,2,`, '']);
  });
});
