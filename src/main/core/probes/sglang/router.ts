// Router / model-gateway health in both metric eras (reference §2): `sgl_router_*` (sglang-router ≤ 0.2.4) and
// `smg_*` (sglang-router ≥ 0.3.0, smg 1.x), plus the router's /readiness status and /workers JSON.
//
// Per-worker gauges are keyed by the `worker` label (the worker's URL; the experimental in-tree sgl-router of
// 2026-06 calls it `worker_url`). Health: 1 healthy, 0 unhealthy, −1 removed. Circuit breaker: 0 closed,
// 1 open, 2 half-open, −1 removed.

import { z } from 'zod';
import type { RouterWorkerState } from '@shared/contract';
import type { Exposition } from '../exposition/types';
import { viewOf, type MetricView } from './series';
import { SGL_ROUTER, SMG } from '@shared/signals/metric-names';
import { scrapeColumns } from '../../signals/scrape-columns';
import {
  isWorkerInput,
  routerWorkerRows,
  workersAt,
  type RouterEra,
} from '../../signals/evaluate/router-workers';
import { normalizeWorkerUrl } from '@shared/worker-url';

export { normalizeWorkerUrl } from '@shared/worker-url';
export type { RouterEra } from '../../signals/evaluate/router-workers';
export type CbState = NonNullable<RouterWorkerState['cbState']>;
export type RouterWorker = RouterWorkerState;

export interface RouterHealth {
  /** null when the exposition carries no router metric at all. */
  era: RouterEra | null;
  workers: RouterWorker[];
  /** From /readiness: PD mode needs ≥1 healthy prefill and ≥1 healthy decode. Absent when not checked. */
  ready?: boolean;
  /** Counters since router start (rates are in derived.ts). */
  requestsTotal?: number;
  errorsTotal?: number;
}

const REQUESTS = {
  smg: [[SMG.routerRequestsTotal], [SMG.httpRequestsTotal]],
  // A PD-mode sglang-router (≤ 0.2.4) records only sgl_router_pd_*; sgl_router_requests_total and
  // sgl_router_request_errors_total are the regular router's (shared/reference/upstream/README.md).
  sgl_router: [[SGL_ROUTER.pdRequestsTotal], [SGL_ROUTER.requestsTotal]],
} as const;
const ERRORS = {
  smg: [[SMG.routerRequestErrorsTotal]],
  sgl_router: [
    [SGL_ROUTER.pdErrorsTotal, SGL_ROUTER.pdPrefillErrorsTotal, SGL_ROUTER.pdDecodeErrorsTotal],
    [SGL_ROUTER.requestErrorsTotal],
  ],
} as const;

/** Which router generation produced this exposition, by metric prefix; null if neither. */
export function detectRouterEra(exp: Exposition): RouterEra | null {
  let old = false;
  for (const fam of exp.families) {
    for (const s of fam.samples) {
      if (s.name.startsWith('smg_')) return 'smg';
      if (s.name.startsWith('sgl_router_')) old = true;
    }
  }
  return old ? 'sgl_router' : null;
}

/**
 * The router's workers as its metrics list them, and its request totals. The per-worker reading is the
 * evaluator's (signals/evaluate/router-workers.ts) over this one scrape, the same code that counts the
 * workers_total / workers_healthy signals at every row.
 */
export function routerHealthFromMetrics(exp: Exposition): RouterHealth {
  const era = detectRouterEra(exp);
  if (!era) return { era: null, workers: [] };
  const cols = scrapeColumns('router', exp, isWorkerInput);
  const out: RouterHealth = { era, workers: workersAt(routerWorkerRows(cols, era), 0) };
  const view = viewOf(exp);
  const requests = firstTotal(view, REQUESTS[era]);
  if (requests !== undefined) out.requestsTotal = requests;
  const errors = firstTotal(view, ERRORS[era]);
  if (errors !== undefined) out.errorsTotal = errors;
  return out;
}

/** The sum over the first group of names that has any sample (a group's names add up). */
function firstTotal(view: MetricView, groups: readonly (readonly string[])[]): number | undefined {
  for (const names of groups) {
    const samples = names.flatMap((n) => view.samples(n)).filter((s) => Number.isFinite(s.value));
    if (samples.length > 0) return samples.reduce((t, s) => t + s.value, 0);
  }
  return undefined;
}

export interface Readiness {
  /** null when the status says nothing about readiness (e.g. 404 from a router without /readiness). */
  ready: boolean | null;
  detail: string;
}

/** Interprets GET /readiness on the router's API port. */
export function parseReadiness(status: number, body = ''): Readiness {
  const text = body.trim().slice(0, 200);
  const suffix = text ? `: ${text}` : '';
  if (status >= 200 && status < 300) return { ready: true, detail: `${status} ready` };
  if (status === 503) {
    // smg and sglang-router answer {"status":"not ready","reason":…}: the router's own words go first.
    const reason = readinessReason(body);
    return {
      ready: false,
      detail: reason
        ? `503 not ready: ${reason} (PD needs at least one healthy prefill and one healthy decode worker)`
        : `503 not ready — PD needs at least one healthy prefill and one healthy decode worker (or the router is draining)${suffix}`,
    };
  }
  if (status === 404) {
    return {
      ready: null,
      detail: '404 — this router has no /readiness endpoint; rely on worker health instead',
    };
  }
  return { ready: null, detail: `unexpected HTTP ${status} from /readiness${suffix}` };
}

function readinessReason(body: string): string | undefined {
  try {
    const j = JSON.parse(body) as unknown;
    if (j && typeof j === 'object' && typeof (j as { reason?: unknown }).reason === 'string')
      return (j as { reason: string }).reason.slice(0, 200);
  } catch {
    // Not JSON: the caller shows the raw text.
  }
  return undefined;
}

export class RouterResponseError extends Error {
  constructor(
    message: string,
    readonly endpoint: string,
  ) {
    super(`${endpoint}: ${message}`);
    this.name = 'RouterResponseError';
  }
}

const workerEntry = z.object({
  url: z.string().min(1),
  id: z.string().optional(),
  worker_type: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
  is_healthy: z.boolean().optional(),
  // smg's lifecycle status (pending | ready | not_ready | failed | draining), next to is_healthy.
  status: z.unknown().optional(),
  load: z.number().optional(),
});
const workersResponse = z.union([
  z.object({
    workers: z.array(workerEntry),
    total: z.number().optional(),
    stats: z
      .object({
        total_workers: z.number().optional(),
        healthy_workers: z.number().optional(),
        total_models: z.number().optional(),
        total_load: z.number().optional(),
        // What sglang-router 0.2.0+ and smg answer; the four above were RouterManager's (IGW mode) only.
        prefill_count: z.number().optional(),
        decode_count: z.number().optional(),
        regular_count: z.number().optional(),
      })
      .optional(),
  }),
  // /list_workers of sglang-router ≤ 0.1 (removed in PR #11921): URLs only.
  z.object({ urls: z.array(z.string().min(1)) }),
]);

export interface RouterWorkersReport {
  workers: RouterWorker[];
  stats?: {
    totalWorkers?: number;
    healthyWorkers?: number;
    totalLoad?: number;
    prefillCount?: number;
    decodeCount?: number;
    regularCount?: number;
  };
}

/** Parses GET /workers (or the legacy /list_workers) JSON. Throws RouterResponseError on any other shape. */
export function parseWorkersJson(json: unknown, endpoint = 'GET /workers'): RouterWorkersReport {
  const parsed = workersResponse.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RouterResponseError(
      `expected {workers:[{url, worker_type, is_healthy, …}]} but ${issue ? `${issue.path.join('.') || 'the body'}: ${issue.message}` : 'the shape differs'}; ` +
        'check that the URL is the router’s API port (not its Prometheus port)',
      endpoint,
    );
  }
  const data = parsed.data;
  if ('urls' in data)
    return { workers: data.urls.map((u) => ({ url: normalizeWorkerUrl(u), healthy: null })) };
  const workers = data.workers.map((w): RouterWorker => {
    const role = workerRole(w.worker_type);
    return {
      url: normalizeWorkerUrl(w.url),
      healthy: w.is_healthy ?? healthFromStatus(w.status),
      ...(role ? { role } : {}),
      ...(w.load !== undefined ? { activeRequests: w.load } : {}),
    };
  });
  const report: RouterWorkersReport = { workers };
  if (data.stats) {
    const st = data.stats;
    const total = st.total_workers ?? data.total;
    report.stats = {
      ...(total !== undefined ? { totalWorkers: total } : {}),
      ...(st.healthy_workers !== undefined ? { healthyWorkers: st.healthy_workers } : {}),
      ...(st.total_load !== undefined ? { totalLoad: st.total_load } : {}),
      ...(st.prefill_count !== undefined ? { prefillCount: st.prefill_count } : {}),
      ...(st.decode_count !== undefined ? { decodeCount: st.decode_count } : {}),
      ...(st.regular_count !== undefined ? { regularCount: st.regular_count } : {}),
    };
  }
  return report;
}

function healthFromStatus(status: unknown): boolean | null {
  if (typeof status !== 'string') return null;
  if (status === 'ready') return true;
  return ['not_ready', 'failed', 'draining'].includes(status) ? false : null;
}

/** "prefill" | "Prefill" | {"Prefill": {"bootstrap_port": 8998}} → "prefill". */
function workerRole(t: string | Record<string, unknown> | undefined): string | undefined {
  if (t === undefined) return undefined;
  const name = typeof t === 'string' ? t : Object.keys(t)[0];
  return name ? name.toLowerCase() : undefined;
}

/**
 * Combines what the metrics, /workers and /readiness said. /workers is the router's current state, so its
 * health and role win; active requests and circuit-breaker state come from the metrics. `expectedRoles`
 * (e.g. from discovery of the router's --prefill/--decode flags) fills in roles nothing else reported.
 */
export function mergeRouterHealth(parts: {
  metrics?: RouterHealth;
  workers?: RouterWorkersReport;
  readiness?: Readiness;
  expectedRoles?: { url: string; role: string }[];
}): RouterHealth {
  const byUrl = new Map<string, RouterWorker>();
  for (const w of parts.metrics?.workers ?? []) byUrl.set(w.url, { ...w });
  for (const w of parts.workers?.workers ?? []) {
    const cur = byUrl.get(w.url);
    if (!cur) {
      byUrl.set(w.url, { ...w });
      continue;
    }
    if (w.healthy !== null && !cur.removed) cur.healthy = w.healthy;
    if (w.role) cur.role = w.role;
    if (cur.activeRequests === undefined && w.activeRequests !== undefined)
      cur.activeRequests = w.activeRequests;
  }
  for (const e of parts.expectedRoles ?? []) {
    const w = byUrl.get(normalizeWorkerUrl(e.url));
    if (w && !w.role) w.role = e.role;
  }
  const out: RouterHealth = {
    era: parts.metrics?.era ?? null,
    workers: [...byUrl.values()].sort((a, b) => a.url.localeCompare(b.url)),
  };
  if (parts.readiness && parts.readiness.ready !== null) out.ready = parts.readiness.ready;
  if (parts.metrics?.requestsTotal !== undefined) out.requestsTotal = parts.metrics.requestsTotal;
  if (parts.metrics?.errorsTotal !== undefined) out.errorsTotal = parts.metrics.errorsTotal;
  return out;
}
