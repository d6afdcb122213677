// The charts' series source over long ranges: a window inside the live store stays on the page batch; one
// that starts before it goes to getHistory and comes back as one column per key, the parts joined oldest
// first; what each part came from and what failed is kept for the chart's note; a core that cannot answer
// getHistory (a review) still draws the live rows and says why the rest is missing.
import { describe, expect, it, vi } from 'vitest';
import type { HistoryResult, SeriesResult } from '@shared/contract';
import type { SignalKey } from '@shared/signals/spec';
import { historyNotes, withHistory } from '../../src/renderer/src/charts/history-source';
import type { SeriesAsk } from '../../src/renderer/src/charts/series-batch';

const KEYS: SignalKey[] = ['decode.kv_ratio'];
const LIVE_FROM = 1_000_000_000;
const live: SeriesResult = {
  series: [{ key: 'decode.kv_ratio', t: [LIVE_FROM, LIVE_FROM + 1000], v: [0.5, 0.51] }],
  firstMs: LIVE_FROM,
  lastMs: LIVE_FROM + 1000,
  rawPoints: 2,
  decimated: false,
  missing: {},
};
const history: HistoryResult = {
  liveFromMs: LIVE_FROM,
  promBytes: 1234,
  series: [
    {
      key: 'decode.kv_ratio',
      parts: [
        {
          source: 'prometheus',
          label: 'prometheus.service on gpu-a',
          points: [
            [LIVE_FROM - 600_000, 0.4],
            [LIVE_FROM - 300_000, null],
          ],
          stepS: 300,
        },
        {
          source: 'live',
          label: 'this app (live)',
          points: [
            [LIVE_FROM, 0.5],
            [LIVE_FROM + 1000, 0.51],
          ],
        },
      ],
      problems: [{ source: 'prometheus', code: 'partial', message: 'answered with warnings: x' }],
    },
  ],
};

const source = (getHistory: (q: unknown) => Promise<HistoryResult>) => {
  const base = Object.assign(
    vi.fn(async (_a: SeriesAsk) => structuredClone(live)),
    { flush: vi.fn() },
  );
  return { base, src: withHistory(base, getHistory, () => LIVE_FROM + 2000) };
};
const ask = (fromMs: number): SeriesAsk => ({
  deploymentId: 'demo',
  windowKey: `w${fromMs}`,
  keys: KEYS,
  fromMs,
  maxPoints: 700,
});

describe('withHistory', () => {
  it('keeps a window inside the live store on the page batch', async () => {
    const getHistory = vi.fn(async () => history);
    const { src } = source(getHistory);
    const r = await src(ask(LIVE_FROM + 100));
    expect(r).toEqual(live);
    expect(getHistory).not.toHaveBeenCalled();
  });

  it('asks getHistory for an older window and joins the parts into one column', async () => {
    const getHistory = vi.fn(async () => history);
    const { src, base } = source(getHistory);
    const r = await src(ask(LIVE_FROM - 7 * 86_400_000));
    expect(getHistory).toHaveBeenCalledWith({
      deploymentId: 'demo',
      windowKey: `w${LIVE_FROM - 7 * 86_400_000}`,
      keys: KEYS,
      fromMs: LIVE_FROM - 7 * 86_400_000,
      toMs: LIVE_FROM + 2000,
      maxPoints: 700,
    });
    expect(r.series[0]).toEqual({
      key: 'decode.kv_ratio',
      t: [LIVE_FROM - 600_000, LIVE_FROM - 300_000, LIVE_FROM, LIVE_FROM + 1000],
      v: [0.4, null, 0.5, 0.51],
    });
    expect(r.firstMs).toBe(LIVE_FROM - 600_000);
    const note = historyNotes.get(KEYS)!;
    expect(note.parts.map((p) => p.label)).toEqual(['prometheus.service on gpu-a', 'this app (live)']);
    expect(note.problems[0].message).toContain('warnings');
    // Once the live store's start is known, the next older window goes straight to getHistory.
    base.mockClear();
    await src(ask(LIVE_FROM - 86_400_000));
    expect(base).not.toHaveBeenCalled();
  });

  it('draws the live rows and says why when getHistory fails', async () => {
    const { src } = source(async () => {
      throw new Error('getHistory is not available in review');
    });
    const r = await src(ask(LIVE_FROM - 86_400_000));
    expect(r).toEqual(live);
    expect(historyNotes.get(KEYS)!.problems[0].message).toBe(
      'older history unavailable: getHistory is not available in review',
    );
  });
});

describe('withHistory without a Prometheus', () => {
  const none = (series: SeriesResult): HistoryResult => ({
    liveFromMs: LIVE_FROM,
    promBytes: 0,
    series: [
      {
        key: 'decode.kv_ratio',
        parts: [{ source: 'live', label: 'this app (live)', points: [[series.series[0].t[0], 0.5]] }],
        problems: [
          {
            source: 'prometheus',
            code: 'no-prometheus',
            message: 'no Prometheus is known for this deployment',
          },
        ],
      },
    ],
  });

  it('says so for a long range only, and does not ask again for short gaps', async () => {
    const getHistory = vi.fn(async () => none(live));
    const { src } = source(getHistory);
    // The first minutes of a 5 min chart after connecting: asked once, nothing to tell.
    await src(ask(LIVE_FROM - 240_000));
    expect(historyNotes.get(KEYS)?.problems ?? []).toEqual([]);
    await src(ask(LIVE_FROM - 230_000));
    expect(getHistory).toHaveBeenCalledTimes(1);
    // Seven days: asked, and told.
    await src(ask(LIVE_FROM - 7 * 86_400_000));
    expect(getHistory).toHaveBeenCalledTimes(2);
    expect(historyNotes.get(KEYS)!.problems[0].message).toBe('no Prometheus is known for this deployment');
  });
});

describe('one notice per page for what failed for every chart', () => {
  it('a problem naming no query (no Prometheus) is the page’s, once, while charts on screen have it', async () => {
    const noProm = {
      source: 'prometheus' as const,
      code: 'no-prometheus',
      message: "no Prometheus was found on this deployment's hosts",
      fix: 'give its URL',
    };
    const mine = { source: 'prometheus' as const, code: 'missing', message: 'no data for x', query: 'up' };
    const answer = (
      key: SignalKey,
      problems: HistoryResult['series'][number]['problems'],
    ): HistoryResult => ({
      liveFromMs: LIVE_FROM,
      promBytes: 0,
      series: [{ key, parts: [], problems }],
    });
    const charts: SignalKey[][] = [
      ['prefill.kv_ratio'],
      ['decode.kv_ratio'],
      ['router.router_requests_per_s'],
    ];
    for (const [i, keys] of charts.entries()) {
      const { src } = source(async () => answer(keys[0], i === 0 ? [noProm, mine] : [noProm]));
      await src({ ...ask(LIVE_FROM - 7 * 86_400_000), keys });
    }
    const unmount = charts.map((keys) => historyNotes.mount(keys));
    expect(historyNotes.page()).toEqual([noProm]);
    // The chart keeps its own query's problem; the shared one is not repeated there.
    expect(historyNotes.get(charts[0])!.problems).toContainEqual(mine);
    unmount.forEach((u) => u());
    expect(historyNotes.page()).toEqual([]);
  });
});
