import { describe, expect, it } from 'vitest';
import { toCsv } from '../../src/renderer/src/charts/csv';

describe('chart CSV export', () => {
  it('writes one row per timestamp across series, leaves gaps empty and quotes labels that need it', () => {
    const csv = toCsv([
      {
        label: 'used',
        key: 'decode.kv_used',
        data: [
          { x: 1000, y: 5 },
          { x: 3000, y: null },
        ],
      },
      {
        label: 'capacity, tokens',
        key: 'decode.kv_capacity',
        data: [
          { x: 2000, y: 10 },
          { x: 3000, y: 10 },
        ],
      },
    ]);
    expect(csv.split('\n')).toEqual([
      'time,epoch_ms,used [decode.kv_used],"capacity, tokens [decode.kv_capacity]"',
      '1970-01-01T00:00:01.000Z,1000,5,',
      '1970-01-01T00:00:02.000Z,2000,,10',
      '1970-01-01T00:00:03.000Z,3000,,10',
      '',
    ]);
  });
});
