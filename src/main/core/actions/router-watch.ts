// What the router thinks of a worker right now, from every source it offers: GET /workers (its current
// registry), its Prometheus metrics (smg_worker_health / sgl_router_worker_health, both eras), and
// /readiness (PD: at least one healthy prefill and one healthy decode). The metrics are the monitor's scrape of
// the router; /workers and /readiness are its control plane, asked when the reading is made. A restart waits on this before it
// calls a prefill or decode restart done: the worker answering /health is not the same as the router
// sending it traffic again.
import type http from 'node:http';
import type { ServiceConfig } from '@shared/domain';
import { httpGet } from '../ssh/http-agent';
import type { Exposition } from '../probes/exposition/types';
import {
  mergeRouterHealth,
  normalizeWorkerUrl,
  parseReadiness,
  parseWorkersJson,
  routerHealthFromMetrics,
  type Readiness,
  type RouterHealth,
  type RouterWorker,
  type RouterWorkersReport,
} from '../probes/sglang/router';
import { SGL_ROUTER, SMG } from '@shared/signals/metric-names';

export interface RouterReading {
  health: RouterHealth;
  /** Which sources answered, for the step's detail line. */
  sources: string[];
  /** True when GET /workers answered with a list (so absence from it means "not registered"). */
  workersListed: boolean;
  readiness?: Readiness;
}

/**
 * `metrics`: the router's /metrics as its monitor last scraped it (ScrapeFeed), when the caller has a reading
 * taken after what it waits for began; GET /workers and /readiness are asked now.
 */
export async function readRouter(
  agent: http.Agent,
  router: ServiceConfig,
  metrics?: Exposition,
): Promise<RouterReading> {
  const base = router.apiUrl.replace(/\/+$/, '');
  const [workers, readiness] = await Promise.all([
    fetchWorkers(agent, `${base}/workers`),
    fetchReadiness(agent, `${base}/readiness`),
  ]);
  const sources: string[] = [];
  if (workers) sources.push('GET /workers');
  const metricHealth = metrics ? routerHealthFromMetrics(metrics) : undefined;
  if (metricHealth?.era)
    sources.push(metricHealth.era === 'smg' ? SMG.workerHealth : SGL_ROUTER.workerHealth);
  if (readiness && readiness.ready !== null) sources.push('/readiness');
  return {
    health: mergeRouterHealth({
      metrics: metricHealth,
      workers: workers ?? undefined,
      readiness: readiness ?? undefined,
    }),
    sources,
    workersListed: workers !== null,
    readiness: readiness ?? undefined,
  };
}

async function fetchWorkers(agent: http.Agent, url: string): Promise<RouterWorkersReport | null> {
  try {
    const res = await httpGet(agent, url, { timeoutMs: 5000, maxBytes: 2 * 1024 * 1024 });
    if (res.status !== 200) return null;
    return parseWorkersJson(JSON.parse(res.body) as unknown);
  } catch {
    // Older routers have no /workers, newer ones may require a control-plane token: the metrics still tell.
    return null;
  }
}

async function fetchReadiness(agent: http.Agent, url: string): Promise<Readiness | null> {
  try {
    const res = await httpGet(agent, url, { timeoutMs: 5000, maxBytes: 64 * 1024 });
    return parseReadiness(res.status, res.body);
  } catch {
    // Router not listening (it may be the one restarting): no readiness figure, which the caller reports.
    return null;
  }
}

/**
 * Finds a worker in the router's view: by its URL first; failing that by port among loopback/same-host
 * names (the router may call 127.0.0.1 "localhost"), and last by role when the router lists one such worker.
 */
export function findWorker(health: RouterHealth, worker: ServiceConfig): RouterWorker | undefined {
  const want = normalizeWorkerUrl(worker.apiUrl);
  const exact = health.workers.find((w) => w.url === want);
  if (exact) return exact;
  const port = portOf(want);
  const samePort = health.workers.filter((w) => portOf(w.url) === port);
  if (samePort.length === 1) return samePort[0];
  const sameRole = health.workers.filter((w) => w.role === worker.role);
  return sameRole.length === 1 ? sameRole[0] : undefined;
}

function portOf(url: string): string {
  try {
    const u = new URL(url);
    return u.port || (u.protocol === 'https:' ? '443' : '80');
  } catch {
    return '';
  }
}

export type WorkerVerdict =
  | { state: 'healthy'; detail: string }
  | { state: 'unhealthy'; detail: string }
  | { state: 'unknown'; detail: string };

/** Whether the router sends traffic to `worker`, in words an operator can check by hand. */
export function judgeWorker(reading: RouterReading, worker: ServiceConfig): WorkerVerdict {
  const w = findWorker(reading.health, worker);
  const via = reading.sources.length ? ` (${reading.sources.join(', ')})` : '';
  if (!w) {
    if (reading.workersListed)
      return { state: 'unhealthy', detail: `the router does not list ${worker.apiUrl} as a worker${via}` };
    return {
      state: 'unknown',
      detail: `the router reports nothing about ${worker.apiUrl}: no /workers answer and no worker health metric`,
    };
  }
  if (w.removed) return { state: 'unhealthy', detail: `the router removed ${w.url}${via}` };
  if (w.healthy === true) return { state: 'healthy', detail: `the router reports ${w.url} healthy${via}` };
  if (w.healthy === false) {
    const cb = w.cbState && w.cbState !== 'closed' ? `, circuit breaker ${w.cbState}` : '';
    return { state: 'unhealthy', detail: `the router reports ${w.url} unhealthy${cb}${via}` };
  }
  return { state: 'unknown', detail: `the router lists ${w.url} but reports no health for it${via}` };
}
