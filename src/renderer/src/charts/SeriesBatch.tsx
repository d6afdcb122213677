// Where the charts of one page get their history: a batcher per page (series-batch.ts), so the page's charts
// ask once per window. A chart outside any page (none today) still works through a shared batcher.
import { createContext, useContext, useState } from 'react';
import type { HistoryResult, SeriesResult } from '@shared/contract';
import { api } from '../api/client';
import { createSeriesBatcher, type SeriesAsk, type SeriesBatcher } from './series-batch';
import { BATCH } from './setup';
import { takePrefetched } from '../review/first-screen';
import { withHistory, type OlderHistory } from './history-source';

/** A chart's history; `flush` sends what the page's charts asked so far at once (see SeriesBatcher.flush). */
export type SeriesSource = ((ask: SeriesAsk) => Promise<SeriesResult>) & Pick<SeriesBatcher, 'flush'>;

const newSource = (): SeriesSource => withHistory(liveSource(), olderSource());

/**
 * Windows older than the live store: the charts learn it from the same live answer, in the same task, and ask
 * together in one getHistoryBatch (per chart, the Metrics page sent nineteen getHistory one after another).
 */
const olderSource = (): OlderHistory => {
  if (!BATCH)
    return ({ deploymentId, keys, fromMs, toMs, maxPoints }) =>
      api.getHistory({ deploymentId, keys, fromMs, toMs, points: maxPoints });
  const batcher = createSeriesBatcher<HistoryResult>({
    // Every ask of this source carries both bounds (OlderHistory); the first ask's are the bucket's.
    fetch: ({ deploymentId, fromMs, toMs, groups }) =>
      api.getHistoryBatch({
        deploymentId,
        fromMs: fromMs!,
        toMs: toMs!,
        groups: groups.map((g) => ({ keys: g.keys, points: g.maxPoints })),
      }),
  });
  return (ask) => batcher.get(ask);
};

const liveSource = (): SeriesSource => {
  if (!BATCH)
    return Object.assign(
      ({ deploymentId, keys, fromMs, toMs, maxPoints }: SeriesAsk) =>
        api.getSeries({ deploymentId, keys, fromMs, toMs, maxPoints }),
      { flush: () => undefined },
    );
  const batcher = createSeriesBatcher({ fetch: (q) => api.getSeriesBatch(q) });
  // A review's first screen may have been asked for with its open (review/first-screen.ts).
  return Object.assign((ask: SeriesAsk) => takePrefetched(ask) ?? batcher.get(ask), { flush: batcher.flush });
};

let shared: SeriesSource | null = null;
const SeriesSourceContext = createContext<SeriesSource | null>(null);

export function SeriesBatchProvider({ children }: { children: React.ReactNode }): React.JSX.Element {
  const [source] = useState(newSource);
  return <SeriesSourceContext.Provider value={source}>{children}</SeriesSourceContext.Provider>;
}

export function useSeriesSource(): SeriesSource {
  return useContext(SeriesSourceContext) ?? (shared ??= newSource());
}
