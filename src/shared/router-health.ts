// How the router sees one of its workers, read from the router's own per-worker gauges (RouterWorkerState: the
// workers of its newest scrape, which the verdict reads too), so the cards say what the verdict says: a server
// healthy by its own /health that the router has marked unhealthy or removed takes no traffic.
import type { RouterWorkerState } from './api/dashboard';
import { normalizeWorkerUrl } from './worker-url';

export interface RouterView {
  state: 'healthy' | 'unhealthy' | 'removed';
  /** The router's circuit breaker for it is open (it sends it nothing until the breaker half-opens). */
  breakerOpen: boolean;
}

/**
 * The router's view of the worker at `url` (as the deployment names it: the router's own URL, or the base URL of a
 * DP-aware server, which the router lists once per rank as `{base}@{rank}` and which is healthy only when every
 * rank is); undefined when the router lists no such worker or reports no health for it.
 */
export function routerViewOf(
  url: string | undefined,
  listed: readonly RouterWorkerState[] | undefined,
): RouterView | undefined {
  if (url === undefined || !listed) return undefined;
  const base = normalizeWorkerUrl(url);
  const mine = listed.filter((w) => w.url === base || w.url.startsWith(`${base}@`));
  if (mine.length === 0) return undefined;
  const breakerOpen = mine.some((w) => w.cbState === 'open');
  if (mine.some((w) => w.removed || w.cbState === 'removed')) return { state: 'removed', breakerOpen };
  if (mine.some((w) => w.healthy === false)) return { state: 'unhealthy', breakerOpen };
  if (mine.every((w) => w.healthy === true)) return { state: 'healthy', breakerOpen };
  return undefined;
}

/**
 * The router's own count, as its workers_total / workers_healthy signals make it (removed workers are not counted
 * in the total, and are said apart): what the verdict's "2 of 3 workers healthy at the router" reads.
 */
export function routerCounts(listed: readonly RouterWorkerState[]): {
  healthy: number;
  total: number;
  removed: number;
} {
  const removed = listed.filter((w) => w.removed).length;
  const kept = listed.filter((w) => !w.removed);
  return { healthy: kept.filter((w) => w.healthy === true).length, total: kept.length, removed };
}
