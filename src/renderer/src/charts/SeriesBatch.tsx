// Where the charts of one page get their history: a batcher per page (series-batch.ts), so the page's charts
// ask once per window. A chart outside any page (none today) still works through a shared batcher.
import { createContext, useContext, useState } from 'react';
import type { SeriesResult } from '@shared/contract';
import { api } from '../api/client';
import { createSeriesBatcher, type SeriesAsk } from './series-batch';
import { BATCH } from './setup';

export type SeriesSource = (ask: SeriesAsk) => Promise<SeriesResult>;

const newSource = (): SeriesSource => {
  if (!BATCH)
    return ({ deploymentId, keys, fromMs, toMs, maxPoints }) =>
      api.getSeries({ deploymentId, keys, fromMs, toMs, maxPoints });
  const batcher = createSeriesBatcher({ fetch: (q) => api.getSeriesBatch(q) });
  return (ask) => batcher.get(ask);
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
