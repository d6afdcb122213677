// How many workers the router counts healthy: the one count the verdict and the cards both say ("2/3 healthy at
// the router"), so a card never reads "3/3 healthy" beside a verdict naming a worker the router counts unhealthy.
// The same rule as the router's workers_total / workers_healthy signals: a removed worker is not counted, and a
// worker is healthy only when the router says so.
import type { RouterWorkerState } from './api/dashboard';

export interface RouterWorkerHealth {
  /** Workers the router lists and has not removed. */
  total: number;
  healthy: number;
  /** Listed, not removed, and not healthy (false, or nothing reports its health), by URL order. */
  unhealthy: RouterWorkerState[];
}

/**
 * The router's count of its workers, of one role when given (a worker whose role the router does not say is
 * counted under no role). Undefined before the router's first scrape with worker gauges.
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

/** "2/3 healthy at the router", or undefined when the router reports no such workers. */
export function routerWorkerHealthText(
  listed: readonly RouterWorkerState[] | undefined,
  role?: string,
): string | undefined {
  const h = routerWorkerHealth(listed, role);
  return h && h.total > 0 ? `${h.healthy}/${h.total} healthy at the router` : undefined;
}
