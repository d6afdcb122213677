// The live columns hand the evaluator the newest row's own columns, grouped by name in the order the full
// columns list the names. The grouping is kept between scrapes and rebuilt only when a series comes or goes:
// at every scrape the newest columns must list what the full columns have in their newest row — same names in
// the same order, each name's series in order, only series with a value there — while series appear, drop
// out of the window, and skip scrapes.
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { isSignalInput } from '../../src/main/core/signals/evaluate';
import { LiveColumns } from '../../src/main/core/signals/live-columns';
import { rowAt, type TargetColumns } from '../../src/main/core/review/target-columns';
import { SGLANG } from '../../src/shared/signals/metric-names';

type Listed = [string, Record<string, string>, number][];

/** The newest row read off the full columns: every series whose last value is in that row. */
function fromFull(cols: TargetColumns): Listed {
  const last = cols.rows - 1;
  const out: Listed = [];
  for (const name of cols.names())
    for (const s of cols.series(name))
      if (s.v.length && rowAt(s, s.v.length - 1) === last) out.push([name, s.labels, s.v[s.v.length - 1]]);
  return out;
}

function listed(cols: TargetColumns): Listed {
  const out: Listed = [];
  for (const name of cols.names()) for (const s of cols.series(name)) out.push([name, s.labels, s.v[0]]);
  return out;
}

describe('LiveColumns newest row', () => {
  it('lists what the full columns have in their newest row while series come, go and skip scrapes', () => {
    const live = new LiveColumns({ keepMs: 20_000, track: isSignalInput });
    const t0 = Date.UTC(2026, 0, 5, 8);
    let generations = 0;
    let lastGeneration = -1;
    for (let s = 0; s < 120; s++) {
      const lines = [`# TYPE ${SGLANG.runningReqs} gauge`];
      // Ranks 0 and 1 always; rank 2 only from 30 s to 60 s (then it falls out of the 20 s window);
      // rank 1 skips every 4th scrape, so it is sometimes in the window but not in the newest row.
      for (const rank of ['0', '1', '2']) {
        if (rank === '2' && (s < 30 || s >= 60)) continue;
        if (rank === '1' && s % 4 === 3) continue;
        lines.push(`${SGLANG.runningReqs}{dp_rank="${rank}"} ${s + Number(rank)}`);
      }
      if (s % 9 !== 5) lines.push(`# TYPE ${SGLANG.queueReqs} gauge`, `${SGLANG.queueReqs} ${s % 7}`);
      if (s >= 50)
        lines.push(
          `# TYPE ${SGLANG.generationTokensTotal} counter`,
          `${SGLANG.generationTokensTotal} ${s * 10}`,
        );
      expect(live.append(t0 + s * 1000, parseExposition(lines.join('\n') + '\n', 'prometheus'))).toBe(true);
      if (live.seriesGeneration !== lastGeneration) generations++;
      lastGeneration = live.seriesGeneration;
      const cols = live.columns('decode');
      expect(listed(cols.newest!)).toEqual(fromFull(cols));
    }
    // Series did come and go, so the kept grouping was rebuilt along the way, not only once.
    expect(generations).toBeGreaterThan(3);
  });
});
