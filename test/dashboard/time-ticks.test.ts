// The time axis's tick labels are cached per tick (charts/time-ticks.ts): they must read exactly as the
// date-fns adapter wrote them with the formats the charts used, and one tick labelled for one unit must not
// answer for another (a window widened from minutes to hours keeps the same tick times).
import { format } from 'date-fns';
import { describe, expect, it } from 'vitest';
import { DISPLAY_FORMATS, tickLabel, type TickUnit } from '../../src/renderer/src/charts/time-ticks';

const TIMES = [0, Date.UTC(2026, 0, 5, 8, 0, 30), Date.UTC(2026, 11, 1, 23, 59, 59), 1_767_686_400_000];
const UNITS: TickUnit[] = ['second', 'minute', 'hour', 'day'];

describe('tickLabel', () => {
  it('reads as date-fns format with the unit’s display format, asked once or again', () => {
    for (const unit of UNITS)
      for (const ts of TIMES) {
        const expected = format(ts, DISPLAY_FORMATS[unit]);
        expect(tickLabel(ts, unit)).toBe(expected);
        expect(tickLabel(ts, unit)).toBe(expected);
      }
  });

  it('labels the same tick time by the unit it is asked for', () => {
    const ts = Date.UTC(2026, 0, 5, 8, 0, 30);
    expect(tickLabel(ts, 'second')).toBe(format(ts, 'HH:mm:ss'));
    expect(tickLabel(ts, 'day')).toBe(format(ts, 'MMM d'));
    expect(tickLabel(ts, 'second')).not.toBe(tickLabel(ts, 'minute'));
  });

  it('stays right past its bound (the cache is emptied, not left stale)', () => {
    for (let i = 0; i < 2500; i++) tickLabel(i * 1000, 'second');
    for (const ts of TIMES) expect(tickLabel(ts, 'minute')).toBe(format(ts, 'HH:mm'));
  });
});
