// The scrapes of one deployment as the app's monitors take them, per service (its id: `decode-1`, `router`):
// how many and when the first and last were, which is the span a rate covers, and the latest exposition, which
// says the server's era. Bounded: a count and two times per service, however long the watch.
import { serviceId, type Role } from '@shared/domain';
import type { Core } from '../core/core';
import type { Exposition } from '../core/probes/exposition/types';

export interface ScrapeSpan {
  count: number;
  firstMs: number | null;
  lastMs: number | null;
}

export interface ScrapeWatch {
  /** The service's scrapes since the watch began. */
  span: (serviceId: string) => ScrapeSpan;
  last: (serviceId: string) => Exposition | undefined;
  dispose: () => void;
}

export function watchScrapes(core: Core, deploymentId: string): ScrapeWatch {
  const spans = new Map<string, ScrapeSpan>();
  const last = new Map<string, Exposition>();
  const on = (e: {
    deploymentId: string;
    ts: number;
    role: Role;
    id?: string;
    exposition: Exposition;
  }): void => {
    if (e.deploymentId !== deploymentId) return;
    const id = serviceId(e);
    const s = spans.get(id);
    spans.set(id, { count: (s?.count ?? 0) + 1, firstMs: s?.firstMs ?? e.ts, lastMs: e.ts });
    last.set(id, e.exposition);
  };
  core.hooks.on('scrape', on);
  return {
    span: (id) => spans.get(id) ?? { count: 0, firstMs: null, lastMs: null },
    last: (id) => last.get(id),
    dispose: () => core.hooks.off('scrape', on),
  };
}
