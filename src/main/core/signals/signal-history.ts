// One deployment's signal history, read: per group (a role, a worker `decode@decode-1`, a host's GPUs
// `gpu@gpu-b`) a ring of rows, and what the screens ask of it — every key's values at a moment (the newest row
// live, the cursor's row in review), a key's growth before that moment, a chart's series. The live store
// appends scrapes to its rings and reads them through this class; a recording's table is this class over its
// finished columns (review/signal-table.ts). Reading is apart from writing, as Prometheus' Querier is from its
// Appender: nothing here appends, so a recording has nothing to refuse.
import type { SeriesQuery, SeriesResult, SignalMissing } from '@shared/contract';
import type { ColumnRing } from './column-ring';
import { answerSeries, growthOf } from './series-query';

export interface SignalHistoryOptions {
  /** A time step longer than this is drawn as a gap, in `ring`. */
  gapMs(ring: ColumnRing): number;
  /** What a key with expected metrics but no column means in this history (said with the metrics). */
  absentWhy: string;
}

export class SignalHistory {
  constructor(
    private readonly rings: ReadonlyMap<string, ColumnRing>,
    private readonly opts: SignalHistoryOptions,
  ) {}

  /** The ring of a group (`decode`, `decode@decode-1`, `gpu@gpu-b`), if it has rows. */
  ring(group: string): ColumnRing | undefined {
    return this.rings.get(group);
  }

  /** Index of the last row at or before ts in a group, or −1. */
  rowAtOrBefore(group: string, ts: number): number {
    const ring = this.rings.get(group);
    return ring ? ring.range(-Infinity, ts)[1] - 1 : -1;
  }

  /** Every key's value at the last row at or before ts of its group (null = gap there); default the newest. */
  valuesAt(ts = Infinity): Record<string, number | null> {
    const out: Record<string, number | null> = {};
    for (const ring of this.rings.values()) {
      const k = ring.range(-Infinity, ts)[1] - 1;
      if (k < 0) continue;
      ring.forEachAt(k, (key, v) => {
        out[key] = Number.isNaN(v) ? null : v;
      });
    }
    return out;
  }

  /** One key's value at the last row at or before ts of its group (null = gap or no such key). */
  value(key: string, ts = Infinity): number | null {
    const group = groupOf(key);
    const ring = this.rings.get(group);
    const k = this.rowAtOrBefore(group, ts);
    if (!ring || !ring.has(key) || k < 0) return null;
    const v = ring.valueAt(key, k);
    return Number.isNaN(v) ? null : v;
  }

  /** Change of `key` over the `ms` ending at the last row at or before ts (default: the newest); null when unknown. */
  growth(key: string, ms: number, ts = Infinity): number | null {
    return growthOf(this.rings.get(groupOf(key)), key, ms, ts);
  }

  /**
   * A chart's history of keys: the rows in the asked span, min-max decimated; for a key without data the reason
   * (`notExposed`, or the metrics `expected` of it with this history's absentWhy).
   */
  series(
    q: Omit<SeriesQuery, 'deploymentId'>,
    notExposed: Record<string, SignalMissing>,
    expected: (key: string) => string[] | undefined,
  ): SeriesResult {
    return answerSeries(q, {
      ring: (key) => this.rings.get(groupOf(key)),
      gapMs: (ring) => this.opts.gapMs(ring),
      notExposed,
      missing: (key) => {
        const exp = expected(key);
        return exp ? { expected: exp, why: this.opts.absentWhy } : undefined;
      },
    });
  }
}

/** The ring a key lives in: its role, or 'gpu', and in a fleet its scope (`decode@decode-1`, `gpu@gpu-b`). */
export function groupOf(key: string): string {
  const at = key.indexOf('@');
  const base = at < 0 ? key : key.slice(0, at);
  const i = base.indexOf('.');
  const group = i < 0 ? base : base.slice(0, i);
  return at < 0 ? group : `${group}@${key.slice(at + 1)}`;
}
