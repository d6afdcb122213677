// Draining a worker before its restart, where the router can: smg's worker management API
// (GET /workers, GET/DELETE /workers/{id}, POST /workers; smg docs "Admin API Reference") removes a worker
// from the pool so no new request is routed to it, while requests already proxied keep running. After the
// restart the worker is registered again with the same URL, type and bootstrap port.
// sglang-router ≤ 0.2.x and routers without that API cannot drain; the plan then says so and the option
// is disabled. Nothing here guesses: support is read from the router's own answers.
import type http from 'node:http';
import { z } from 'zod';
import type { DrainSupport } from '@shared/contract';
import type { ServiceConfig } from '@shared/domain';
import { httpGet } from '../ssh/http-agent';
import { normalizeWorkerUrl } from '../probes/sglang/router';
import { httpRequest } from './http-request';
import { evaluateScrape } from '../signals/evaluate';
import { scrapeKey, type ScrapeFeed } from '../monitor/scrape-feed';

const entry = z.object({
  id: z.string().min(1).optional(),
  url: z.string().min(1),
  worker_type: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  bootstrap_port: z.number().int().nullable().optional(),
});
const listing = z.object({ workers: z.array(entry) });

/** What the router told us about the worker, enough to put it back exactly as it was. */
export interface RouterRegistration {
  id: string;
  url: string;
  workerType?: string;
  bootstrapPort?: number;
}

export type DrainProbe = DrainSupport & { registration?: RouterRegistration };

const UNSUPPORTED = 'drain not supported by this router version';

function typeName(t: z.infer<typeof entry>['worker_type']): { name?: string; bootstrapPort?: number } {
  if (t === undefined) return {};
  if (typeof t === 'string') return { name: t.toLowerCase() };
  // Older smg serialised PD types as {"Prefill": {"bootstrap_port": 8998}}.
  const [name, inner] = Object.entries(t)[0] ?? [];
  const port = (inner as { bootstrap_port?: unknown } | undefined)?.bootstrap_port;
  return { name: name?.toLowerCase(), bootstrapPort: typeof port === 'number' ? port : undefined };
}

export async function probeDrain(
  agent: http.Agent,
  router: ServiceConfig | undefined,
  worker: ServiceConfig,
): Promise<DrainProbe> {
  if (!router)
    return { supported: false, detail: 'no router in this deployment: nothing routes work to drain' };
  const base = router.apiUrl.replace(/\/+$/, '');
  let res;
  try {
    res = await httpGet(agent, `${base}/workers`, { timeoutMs: 5000, maxBytes: 2 * 1024 * 1024 });
  } catch (err) {
    return {
      supported: false,
      detail: `${UNSUPPORTED}: GET ${base}/workers failed (${(err as Error).message})`,
    };
  }
  if (res.status === 401 || res.status === 403)
    return {
      supported: false,
      detail: `GET ${base}/workers answered ${res.status}: the router's control plane needs a token PD Console does not have`,
    };
  if (res.status !== 200)
    return { supported: false, detail: `${UNSUPPORTED}: GET ${base}/workers answered HTTP ${res.status}` };
  let parsed;
  try {
    parsed = listing.safeParse(JSON.parse(res.body) as unknown);
  } catch {
    parsed = null;
  }
  if (!parsed?.success)
    return { supported: false, detail: `${UNSUPPORTED}: GET ${base}/workers did not return {workers:[…]}` };
  const want = normalizeWorkerUrl(worker.apiUrl);
  const found = parsed.data.workers.find((w) => normalizeWorkerUrl(w.url) === want);
  if (!found)
    return { supported: false, detail: `the router does not list ${worker.apiUrl}, so it cannot be drained` };
  if (!found.id)
    return { supported: false, detail: `${UNSUPPORTED}: /workers lists no worker ids (no per-worker API)` };
  let one;
  try {
    one = await httpGet(agent, `${base}/workers/${encodeURIComponent(found.id)}`, { timeoutMs: 5000 });
  } catch (err) {
    return {
      supported: false,
      detail: `${UNSUPPORTED}: GET /workers/{id} failed (${(err as Error).message})`,
    };
  }
  if (one.status !== 200)
    return { supported: false, detail: `${UNSUPPORTED}: GET /workers/{id} answered HTTP ${one.status}` };
  const t = typeName(found.worker_type);
  const bootstrapPort = found.bootstrap_port ?? t.bootstrapPort;
  return {
    supported: true,
    detail: `removes ${found.url} from the router (DELETE /workers/${found.id}), waits for its running requests to finish, and registers it again after the restart`,
    registration: {
      id: found.id,
      url: found.url,
      ...(t.name ? { workerType: t.name } : {}),
      ...(typeof bootstrapPort === 'number' ? { bootstrapPort } : {}),
    },
  };
}

export async function removeFromRouter(
  agent: http.Agent,
  router: ServiceConfig,
  reg: RouterRegistration,
): Promise<void> {
  const url = `${router.apiUrl.replace(/\/+$/, '')}/workers/${encodeURIComponent(reg.id)}`;
  const res = await httpRequest(agent, 'DELETE', url);
  if (res.status < 200 || res.status >= 300)
    throw new Error(`DELETE ${url} answered HTTP ${res.status}: ${res.body.slice(0, 200)}`);
}

export function readdBody(reg: RouterRegistration): Record<string, unknown> {
  return {
    url: reg.url,
    ...(reg.workerType ? { worker_type: reg.workerType } : {}),
    ...(reg.bootstrapPort !== undefined ? { bootstrap_port: reg.bootstrapPort } : {}),
  };
}

/** The command an operator can run on the host to put the worker back by hand. */
export function readdCurl(router: ServiceConfig, reg: RouterRegistration): string {
  return `curl -X POST ${router.apiUrl.replace(/\/+$/, '')}/workers -H 'content-type: application/json' -d '${JSON.stringify(readdBody(reg))}'`;
}

export async function addToRouter(
  agent: http.Agent,
  router: ServiceConfig,
  reg: RouterRegistration,
): Promise<void> {
  const url = `${router.apiUrl.replace(/\/+$/, '')}/workers`;
  const res = await httpRequest(agent, 'POST', url, readdBody(reg));
  if (res.status < 200 || res.status >= 300)
    throw new Error(`POST ${url} answered HTTP ${res.status}: ${res.body.slice(0, 200)}`);
}

/** A worker the router can drain: how to take it out of the router's pool and put it back as it was. */
export interface WorkerDrain {
  /** The URL the router knows the worker by. */
  url: string;
  /** The router's API URL, for what the steps say. */
  routerUrl: string;
  remove(): Promise<void>;
  add(): Promise<void>;
  /**
   * Requests running or queued on the worker, from the monitor's next scrape of it: null when it does not say,
   * 'no-scrape' when no new scrape arrived yet.
   */
  running(): Promise<number | null | 'no-scrape'>;
  /** What an operator runs on the host to register the worker again by hand. */
  readdCommand: string;
}

/** The drain of `worker` through `router`'s worker API, its running requests read from the monitor's scrapes. */
export function routerDrain(o: {
  agent: () => http.Agent;
  router: ServiceConfig;
  worker: ServiceConfig;
  registration: RouterRegistration;
  scrapes: ScrapeFeed;
}): WorkerDrain {
  const { router, worker, registration: reg } = o;
  return {
    url: reg.url,
    routerUrl: router.apiUrl,
    remove: () => removeFromRouter(o.agent(), router, reg),
    add: () => addToRouter(o.agent(), router, reg),
    running: async () => {
      if (!worker.metricsUrl) return null;
      const scrape = await o.scrapes.next(scrapeKey(worker));
      if (!scrape) return 'no-scrape';
      const v = evaluateScrape(scrape.exposition, worker.role);
      const parts = [v.running, v.prefill_inflight_queue, v.decode_transfer_queue].filter(
        (x): x is number => typeof x === 'number',
      );
      return parts.length ? parts.reduce((a, b) => a + b, 0) : null;
    },
    readdCommand: readdCurl(router, reg),
  };
}

/** What one reading of a draining worker's running requests says: done (restart now) or what the wait shows. */
export function drainReading(left: number | null | 'no-scrape'): { done: boolean; detail: string } {
  if (left === 'no-scrape')
    return {
      done: false,
      detail: 'removed from the router; waiting for the monitor to scrape the worker again',
    };
  if (left === null)
    return { done: true, detail: 'removed from the router; the worker does not report running requests' };
  if (left === 0) return { done: true, detail: 'removed from the router; no requests running' };
  return {
    done: false,
    detail: `removed from the router; ${left} request${left === 1 ? '' : 's'} still running`,
  };
}

export function drainRemoveFailed(d: WorkerDrain, err: unknown): { message: string; hint: string } {
  return {
    message: `could not remove ${d.url} from the router: ${(err as Error).message}`,
    hint: 'Nothing was restarted. Restart without drain, or check the router’s control plane (GET /workers).',
  };
}

export function readdFailed(d: WorkerDrain, err: unknown): { message: string; hint: string } {
  return {
    message: `could not register ${d.url} with the router again: ${(err as Error).message}`,
    hint: `The worker restarted and is healthy but the router does not route to it. On the host run: ${d.readdCommand}`,
  };
}

/** A drain cancelled before anything was restarted: the worker goes back into the router. What to say. */
export function putBack(d: WorkerDrain): Promise<string> {
  return d.add().then(
    () => 'cancelled; the worker was registered with the router again',
    (err: Error) =>
      `cancelled, but registering the worker again failed (${err.message}); run on the host: ${d.readdCommand}`,
  );
}
