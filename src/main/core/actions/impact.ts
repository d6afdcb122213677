// What a restart will cut off, read from the latest scrapes: requests running and queued on the worker, and
// what the router has in flight to it. Figures the deployment does not expose stay null with a note saying
// why, rather than reading as 0.
import type { RestartImpact } from '@shared/contract';
import type { Role, ServiceConfig } from '@shared/domain';
import type { Exposition } from '../probes/exposition/types';
import { evaluateScrape } from '../signals/evaluate';
import { scrapeNotes } from '../signals/evaluate/notes';
import { SGLANG } from '@shared/signals/metric-names';
import { QUEUE_SIGNALS } from '@shared/signals/spec';
import { routerHealthFromMetrics } from '../probes/sglang/router';
import { findWorker } from './router-watch';

export interface LatestScrape {
  ts: number;
  exposition: Exposition;
}

/** Everything the router has in flight, summed over workers; null when its metrics do not say. */
export function routerInFlight(router: LatestScrape | undefined): number | null {
  if (!router) return null;
  const h = routerHealthFromMetrics(router.exposition);
  const active = h.workers.map((w) => w.activeRequests).filter((v): v is number => typeof v === 'number');
  return active.length ? active.reduce((a, b) => a + b, 0) : null;
}

export function restartImpact(
  role: Role,
  service: ServiceConfig,
  own: LatestScrape | undefined,
  router: LatestScrape | undefined,
): RestartImpact {
  const notes: string[] = [];
  if (role === 'router') {
    const inFlight = routerInFlight(router);
    if (inFlight === null)
      notes.push(
        router ? 'the router metrics carry no per-worker active requests' : 'no router metrics scraped yet',
      );
    return {
      runningOnWorker: null,
      queuedOnWorker: null,
      inFlightAtRouter: inFlight,
      observedAt: router?.ts ?? null,
      notes,
    };
  }
  let running: number | null = null;
  let queued: number | null = null;
  if (own) {
    const values = evaluateScrape(own.exposition, role);
    running = values.running ?? null;
    const qs = QUEUE_SIGNALS[role].map((k) => values[k]).filter((v): v is number => typeof v === 'number');
    queued = qs.length ? qs.reduce((a, b) => a + b, 0) : null;
    notes.push(...scrapeNotes(values, role));
    if (running === null) notes.push(`${SGLANG.runningReqs} is not exposed`);
  } else notes.push(`no metrics scraped from ${service.unit} yet (metrics off, or the service is down)`);
  let inFlight: number | null = null;
  if (router) {
    const w = findWorker(routerHealthFromMetrics(router.exposition), service);
    if (w?.activeRequests !== undefined) inFlight = w.activeRequests;
    else notes.push('the router metrics carry no active-request count for this worker');
  } else notes.push('no router metrics scraped yet');
  return {
    runningOnWorker: running,
    queuedOnWorker: queued,
    inFlightAtRouter: inFlight,
    observedAt: own?.ts ?? router?.ts ?? null,
    notes,
  };
}
