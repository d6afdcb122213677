// The renderer's clock and date-time texts (src/renderer/src/format.ts) come from one formatter each, made
// once: they must read exactly as Date's own toLocale…String did, and an invalid time still reads as one
// instead of throwing (Intl.DateTimeFormat.format throws on NaN; a chart's tooltip or a marker would break).
import { describe, expect, it } from 'vitest';
import {
  formatClock,
  formatDateTime,
  formatRange,
  formatSeconds,
  formatTimeToFull,
} from '../../src/renderer/src/format';

const TIMES = [0, Date.UTC(2026, 0, 5, 8, 0, 0), Date.UTC(2026, 11, 1, 23, 59, 59, 999), 1_767_686_399_055];

describe('formatClock and formatDateTime', () => {
  it('read as toLocaleTimeString and toLocaleString with the same options', () => {
    for (const ts of TIMES) {
      expect(formatClock(ts)).toBe(
        new Date(ts).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' }),
      );
      expect(formatDateTime(ts)).toBe(
        new Date(ts).toLocaleString([], {
          month: 'short',
          day: 'numeric',
          hour: '2-digit',
          minute: '2-digit',
          second: '2-digit',
        }),
      );
    }
  });

  it('say "Invalid Date" for a time that is not one, as Date did', () => {
    for (const ts of [NaN, Infinity, -Infinity]) {
      expect(formatClock(ts)).toBe('Invalid Date');
      expect(formatDateTime(ts)).toBe('Invalid Date');
    }
  });
});

describe('formatSeconds', () => {
  it('rounds to whole seconds before splitting minutes, so a minute never shows 60 s', () => {
    expect(formatSeconds(119.6)).toBe('2 min 0 s');
    expect(formatSeconds(89.5)).toBe('1 min 30 s');
    expect(formatSeconds(59.97)).toBe('1 min 0 s');
    expect(formatSeconds(59.94)).toBe('59.9 s');
    expect(formatSeconds(3599.7)).toBe('1h 0m');
    for (let s = 60; s < 3600; s += 0.7) expect(formatSeconds(s)).not.toMatch(/\b60 s/);
  });
});

describe('formatRange', () => {
  it('names the end date when the window spans days (a 7 d window), only its clock within one day', () => {
    const to = new Date(2026, 10, 29, 5, 52, 2).getTime();
    const week = formatRange(to - 7 * 86_400_000, to);
    expect(week).toBe(`${formatDateTime(to - 7 * 86_400_000)} – ${formatDateTime(to)}`);
    expect(week).not.toBe(`${formatDateTime(to - 7 * 86_400_000)} – ${formatClock(to)}`);
    expect(formatRange(to - 300_000, to)).toBe(`${formatDateTime(to - 300_000)} – ${formatClock(to)}`);
  });
});

describe('formatTimeToFull', () => {
  it('"full" at 0, "< 1 min" below a minute, whole minutes above', () => {
    expect(formatTimeToFull(0)).toBe('full');
    expect(formatTimeToFull(0.138)).toBe('full in < 1 min');
    expect(formatTimeToFull(70)).toBe('full in ~1 min');
    expect(formatTimeToFull(4000)).toBe('full in ~1 h 7 min');
    expect(formatTimeToFull(null)).toBe('—');
  });
});
