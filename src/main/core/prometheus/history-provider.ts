// History's Prometheus, as discovery found it: the client of the engine watching the deployment, and per worker
// the job/instance labels that engine scrapes it under (its own /api/v1/targets, matched by coverage). The
// status is asked once a minute at most: coverage reads the targets list, and a chart asks on every zoom.
import type { Role } from '@shared/domain';
import type { PrometheusEndpointStatus, PrometheusStatus } from '@shared/api/prometheus';
import type { PromHistoryProvider, PromHistoryTarget } from './history-target';
import type { PromApi } from './prom-api';

export interface PrometheusLookup {
  clientFor(deploymentId: string): Promise<PromApi | null>;
  status(deploymentId: string): Promise<PrometheusStatus>;
}

const STATUS_TTL_MS = 60_000;

const quote = (v: string): string => JSON.stringify(v);
const escapeRegex = (v: string): string => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Matchers selecting the endpoints (one job, one or several instances); null when none is scraped. */
export function selectorOf(endpoints: PrometheusEndpointStatus[]): string | null {
  const scraped = endpoints.filter((e) => e.scraped && e.job && e.instance);
  if (scraped.length === 0) return null;
  const jobs = [...new Set(scraped.map((e) => e.job!))];
  const instances = [...new Set(scraped.map((e) => e.instance!))];
  const job = jobs.length === 1 ? `job=${quote(jobs[0])}` : `job=~${quote(jobs.map(escapeRegex).join('|'))}`;
  const instance =
    instances.length === 1
      ? `instance=${quote(instances[0])}`
      : `instance=~${quote(instances.map(escapeRegex).join('|'))}`;
  return `${job},${instance}`;
}

/** The target history queries, from one status answer. */
export function historyTargetOf(api: PromApi, status: PrometheusStatus): PromHistoryTarget {
  const intervals = status.endpoints.flatMap((e) => (e.scraped && e.intervalS ? [e.intervalS] : []));
  return {
    api,
    ...(intervals.length > 0 ? { scrapeIntervalS: Math.max(...intervals) } : {}),
    selector: (role: Role, scope?: string) =>
      selectorOf(status.endpoints.filter((e) => e.role === role && (scope === undefined || e.id === scope))),
  };
}

export function prometheusHistory(lookup: PrometheusLookup, now: () => number): PromHistoryProvider {
  const cache = new Map<string, { at: number; api: PromApi; target: PromHistoryTarget }>();
  return async (deploymentId) => {
    // The service keeps its client until the source changes, so a new client means a new source.
    const api = await lookup.clientFor(deploymentId);
    if (!api) return null;
    const hit = cache.get(deploymentId);
    if (hit && hit.api === api && now() - hit.at < STATUS_TTL_MS) return hit.target;
    const target = historyTargetOf(api, await lookup.status(deploymentId));
    cache.set(deploymentId, { at: now(), api, target });
    return target;
  };
}
