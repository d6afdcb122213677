// Live keeps one window bucket cursor per fleet worker and rewinds it onto every scrape's columns while no series
// came or went, instead of building one per scrape. Checked here against a cursor built afresh at every scrape,
// over a worker's real exposition text through the production parser and live columns: bucket series with gaps
// (a bound missing from some scrapes), a counter reset (the server restarted), the ITL histogram renamed midway
// (the legacy TPOT name first), and a label set arriving later (a second model), which must build a new cursor.
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { isSignalInput } from '../../src/main/core/signals/evaluate';
import { WindowBucketCursor } from '../../src/main/core/signals/fleet-quantile';
import { LiveColumns } from '../../src/main/core/signals/live-columns';

const BOUNDS = ['0.05', '0.1', '0.5', '1.0', '2.5', '+Inf'];
const START = Date.UTC(2026, 11, 3, 9);

/** A decode worker's /metrics at scrape s: TTFT and ITL (TPOT before scrape 90) histograms per model. */
function scrape(s: number): string {
  // Restarted at scrape 140: every counter starts again from 0.
  const age = s < 140 ? s : s - 140;
  const models = s < 110 ? ['m'] : ['m', 'n'];
  const lines: string[] = [];
  const histogram = (name: string, rate: number): void => {
    lines.push(`# TYPE ${name} histogram`);
    for (const model of models) {
      BOUNDS.forEach((le, k) => {
        // The lowest bound is left out of every 7th scrape: that series has gaps in the window.
        if (k === 0 && s % 7 === 3) return;
        const count = Math.floor(age * rate * (k + 1) + ((age * (k + 3)) % 5));
        lines.push(`${name}_bucket{le="${le}",model_name="${model}"} ${count}`);
      });
      lines.push(`${name}_count{model_name="${model}"} ${Math.floor(age * rate * BOUNDS.length)}`);
    }
  };
  histogram('sglang:time_to_first_token_seconds', 2);
  histogram(s < 90 ? 'sglang:time_per_output_token_seconds' : 'sglang:inter_token_latency_seconds', 7);
  return `${lines.join('\n')}\n`;
}

describe('window bucket cursor, rewound per scrape', () => {
  it('reads every scrape as a cursor built afresh does, and is built again when a series comes or goes', () => {
    const live = new LiveColumns({ keepMs: 60_000, track: isSignalInput });
    let cursor: WindowBucketCursor | undefined;
    let generation = -1;
    let built = 0;
    let rewound = 0;
    let increases = 0;
    for (let s = 0; s < 200; s++) {
      expect(live.append(START + s * 1000, parseExposition(scrape(s), 'prometheus'))).toBe(true);
      const cols = live.columns('decode');
      const last = cols.rows - 1;
      if (cursor && generation === live.seriesGeneration) {
        cursor.rewind(cols);
        rewound++;
      } else {
        cursor = new WindowBucketCursor(cols, 60_000);
        generation = live.seriesGeneration;
        built++;
      }
      const got = cursor.at(last);
      expect(got, `scrape ${s}`).toEqual(new WindowBucketCursor(cols, 60_000).at(last));
      for (const g of got.groups) for (const b of g.bases) increases += b.inc.filter((x) => x > 0).length;
    }
    // The comparison was of real increases, mostly by rewound cursors; the second model's series, the renamed
    // histogram's and the old name's leaving the window each built a new one.
    expect(increases).toBeGreaterThan(1000);
    expect(rewound).toBeGreaterThan(150);
    expect(built).toBeGreaterThanOrEqual(4);
  });
});
