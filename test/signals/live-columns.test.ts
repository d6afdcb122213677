// The live columns match each sample to its series by the previous scrape's order first (no key built): a
// target that reorders, adds, drops or relabels series, or writes labels in another order, must still land
// every value in its own series and row.
import { describe, expect, it } from 'vitest';
import { LiveColumns } from '../../src/main/core/signals/live-columns';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';

const scrape = (lines: string[]) => parseExposition(lines.join('\n') + '\n', 'prometheus');

/** Every series of the columns as "name{labels}" → its values per row (null where it has none). */
function table(live: LiveColumns): Record<string, (number | null)[]> {
  const cols = live.columns('t');
  const out: Record<string, (number | null)[]> = {};
  for (const name of cols.names())
    for (const s of cols.series(name)) {
      const key = `${name}{${Object.entries(s.labels)
        .sort()
        .map(([k, v]) => `${k}=${v}`)
        .join(',')}}`;
      const row: (number | null)[] = Array.from({ length: cols.rows }, () => null);
      for (let k = 0; k < s.v.length; k++) row[s.rows ? s.rows[k] : s.row0 + k] = s.v[k];
      expect(out[key], `${key} appears once`).toBeUndefined();
      out[key] = row;
    }
  return out;
}

describe('LiveColumns', () => {
  it('keeps each value in its series when the target reorders, adds, drops and relabels series', () => {
    const live = new LiveColumns({ keepMs: 60_000, track: (n) => n.startsWith('m') });
    live.append(1000, scrape(['m{a="1",b="x"} 1', 'm{a="2",b="x"} 2', 'other 5', 'm{a="3",b="x"} 3']));
    // Same series, labels written in another order, and the last two swapped.
    live.append(2000, scrape(['m{b="x",a="1"} 11', 'm{a="3",b="x"} 13', 'm{a="2",b="x"} 12']));
    // A new series in the middle, one gone, one NaN.
    live.append(3000, scrape(['m{a="1",b="x"} 21', 'm{a="9",b="x"} 29', 'm{a="3",b="x"} NaN']));
    // A label added to a known series makes it another series.
    live.append(4000, scrape(['m{a="1",b="x",c="y"} 31', 'm{a="1",b="x"} 32', 'm{a="9",b="x"} 39']));
    expect(table(live)).toEqual({
      'm{a=1,b=x}': [1, 11, 21, 32],
      'm{a=2,b=x}': [2, 12, null, null],
      'm{a=3,b=x}': [3, 13, null, null],
      'm{a=9,b=x}': [null, null, 29, 39],
      'm{a=1,b=x,c=y}': [null, null, null, 31],
    });
  });

  it('keeps the first value of a series a scrape repeats, in one row', () => {
    const live = new LiveColumns({ keepMs: 60_000, track: () => true });
    live.append(1000, scrape(['m{a="1"} 1', 'm{a="1"} 2']));
    live.append(2000, scrape(['m{a="1"} 3']));
    expect(table(live)).toEqual({ 'm{a=1}': [1, 3] });
  });
});
