// The renderer's clock and date-time texts (src/renderer/src/format.ts) come from one formatter each, made
// once: they must read exactly as Date's own toLocale…String did, and an invalid time still reads as one
// instead of throwing (Intl.DateTimeFormat.format throws on NaN; a chart's tooltip or a marker would break).
import { describe, expect, it } from 'vitest';
import { formatClock, formatDateTime } from '../../src/renderer/src/format';

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
