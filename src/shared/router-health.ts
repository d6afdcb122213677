// How the router sees its workers, read from the router's own per-worker gauges (RouterWorkerState: the workers of
// its newest scrape): one reading for the verdict and the cards, so a card never reads "3/3 healthy" beside a
// verdict naming a worker the router counts unhealthy — a server healthy by its own /health that the router has
// marked unhealthy or removed takes no traffic.
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

export interface RouterWorkerHealth {
  /** Workers the router lists and has not removed. */
  total: number;
  healthy: number;
  /** Listed, not removed, and not healthy (false, or nothing reports its health), by URL order. */
  unhealthy: RouterWorkerState[];
}

/**
 * The router's own count of its workers, of one role when given (a worker whose role the router does not say is
 * counted under no role), as its workers_total / workers_healthy signals make it: a removed worker is not counted,
 * and a worker is healthy only when the router says so. The one count the verdict and the cards both say ("2/3
 * healthy at the router"). Undefined before the router's first scrape with worker gauges.
 */
export function routerWorkerHealth(
  listed: readonly RouterWorkerState[] | undefined,
  role?: string,
): RouterWorkerHealth | undefined {
  if (!listed) return undefined;
  const counted = listed.filter((w) => !w.removed && (role === undefined || w.role === role));
  const unhealthy = counted.filter((w) => w.healthy !== true);
  return { total: counted.length, healthy: counted.length - unhealthy.length, unhealthy };
}

/** The same count with the removed workers said apart (the router card). */
export function routerCounts(listed: readonly RouterWorkerState[]): {
  healthy: number;
  total: number;
  removed: number;
} {
  const { healthy, total } = routerWorkerHealth(listed) as RouterWorkerHealth;
  return { healthy, total, removed: listed.filter((w) => w.removed).length };
}
