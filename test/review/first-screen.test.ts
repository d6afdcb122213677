// The overview's history asked for with a review's open (src/renderer/src/review/first-screen.ts): the page's
// charts take it instead of asking again when it is for their deployment, window and keys at a usable width,
// once each; any other ask is left to the page's own request.
import { describe, expect, it } from 'vitest';
import type { DeploymentSummary } from '../../src/shared/domain';
import type { SeriesBatchQuery, SeriesBatchResult } from '../../src/shared/contract';
import type { SignalKey } from '../../src/shared/signals/spec';
import { prefetchOverview, takePrefetched } from '../../src/renderer/src/review/first-screen';
import type { SeriesAsk } from '../../src/renderer/src/charts/series-batch';

const FIRST = 1_767_600_000_000;
const LAST = FIRST + 86_400_000;

function summary(id: string): DeploymentSummary {
  return {
    deployment: {
      id,
      name: 'recorded',
      services: (['prefill', 'decode', 'router'] as const).map((role) => ({
        role,
        hostId: 'h',
        unit: `sglang-${role}.service`,
        apiUrl: 'http://127.0.0.1:1',
        metricsUrl: 'http://127.0.0.1:1/metrics',
      })),
    },
    host: { id: 'h', label: 'h', kind: 'ssh' },
    connection: { state: 'idle' },
    review: {
      sessionId: id,
      path: '/x',
      name: 'recorded',
      recordedHost: { id: 'h', label: 'h', kind: 'ssh' },
      startedAt: FIRST,
      firstTs: FIRST,
      lastTs: LAST,
      cursor: LAST,
      closedCleanly: true,
      warnings: [],
      loadedFrom: 'overview',
      openMs: 1,
    },
  } as DeploymentSummary;
}

function prefetch(id: string, width: number): SeriesBatchQuery[] {
  const asked: SeriesBatchQuery[] = [];
  const fetch = async (q: SeriesBatchQuery): Promise<SeriesBatchResult> => {
    asked.push(q);
    return {
      results: q.groups.map((g) => ({
        series: g.keys.map((key) => ({ key, t: [FIRST], v: [g.maxPoints] })),
        firstMs: FIRST,
        lastMs: LAST,
        rawPoints: 1,
        decimated: false,
        missing: {},
      })),
    };
  };
  prefetchOverview(summary(id), fetch, width);
  return asked;
}

const ask = (id: string, key: SignalKey, maxPoints: number, fromMs = FIRST): SeriesAsk => ({
  deploymentId: id,
  windowKey: `fixed:${fromMs}:${LAST + 1}`,
  keys: [key],
  fromMs,
  toMs: LAST + 1,
  maxPoints,
});

describe('a review first screen asked with its open', () => {
  it('asks once for both KV charts over the whole session, at half the window width', () => {
    const asked = prefetch('rec:a', 1440);
    expect(asked).toEqual([
      {
        deploymentId: 'rec:a',
        fromMs: FIRST,
        toMs: LAST + 1,
        groups: [
          { keys: ['prefill.kv_ratio'], maxPoints: 720 },
          { keys: ['decode.kv_ratio'], maxPoints: 720 },
        ],
      },
    ]);
  });

  it('is taken by the chart that asks for it, once, with its own group of the answer', async () => {
    prefetch('rec:b', 1440);
    // The KV chart of a 1440 px window is 663 px wide.
    const decode = takePrefetched(ask('rec:b', 'decode.kv_ratio', 663));
    expect(decode).not.toBeNull();
    expect((await decode!).series[0].key).toBe('decode.kv_ratio');
    expect(takePrefetched(ask('rec:b', 'decode.kv_ratio', 663))).toBeNull();
    expect(takePrefetched(ask('rec:b', 'prefill.kv_ratio', 663))).not.toBeNull();
  });

  it('is left alone by an ask for another window, deployment, or a width it does not fit', () => {
    prefetch('rec:c', 1440);
    expect(takePrefetched(ask('rec:c', 'decode.kv_ratio', 663, FIRST + 1))).toBeNull();
    expect(takePrefetched(ask('rec:other', 'decode.kv_ratio', 663))).toBeNull();
    // Fewer points than the chart draws, or more than twice as many: the chart asks itself.
    expect(takePrefetched(ask('rec:c', 'decode.kv_ratio', 1300))).toBeNull();
    expect(takePrefetched(ask('rec:c', 'decode.kv_ratio', 300))).toBeNull();
    expect(takePrefetched(ask('rec:c', 'decode.kv_ratio', 700))).not.toBeNull();
  });
});
