// The router's Prometheus text (metrics-exporter-prometheus, Rust) per router era, as the upstream code
// records it in PD mode (shared/reference/upstream/router-real-metrics.tsv; test/demo/inventory.test.ts):
// - 'sglang-router-0.2.4': the PD router's sgl_router_pd_* counters and histogram, per-worker health and
//   circuit-breaker gauges, the policy's processed_requests_total and the middleware's
//   sgl_router_http_responses_total{status_code}. The regular router's sgl_router_requests_total,
//   request_errors_total, running_requests and active_workers are never recorded in PD mode;
// - 'smg-0.3' (0.3.0 … 1.4): smg_* names; smg_http_responses_total has status_code and error_code only;
// - 'smg-1.5': smg_http_responses_total gains the `path` label;
// - 'smg-engine-metrics' (≥ 1.7 with --engine-metrics): + smg_engine_* gauges scraped from the workers.
import { RustExposition } from './exposition-writer';
import type { Histogram } from './histogram';
import { isSmgEra, type RouterEra } from './eras';
import type { RouterProcess, RouterWorker, ServerProcess } from './processes';
import { MODEL_NAME, type ServerRole } from './units';

type L = Array<[string, string]>;

/** What the engine-metrics poller of smg reads from each worker's /v1/loads. */
/** Per worker (the fleet), or per role where each role has one worker (the single host). */
export type EngineLoads =
  ((w: RouterWorker) => ServerProcess | null) | Partial<Record<ServerRole, ServerProcess | null>>;

export function renderRouterMetrics(r: RouterProcess, era: RouterEra, engines: EngineLoads = {}): string {
  if (!isSmgEra(era)) return renderLegacy(r);
  let text = renderSmg(r, era !== 'smg-0.3');
  if (era === 'smg-engine-metrics') text += renderEngineMetrics(r, engines);
  return text;
}

function responses(r: RouterProcess): Array<{ path: string; status: string; error: string; n: number }> {
  return [...r.httpResponses.entries()].map(([k, n]) => {
    const [path, status, error] = k.split('\t');
    return { path, status, error, n };
  });
}

/** Before smg 1.5 the middleware counted responses without a path: every path sums into one series. */
function byStatus(r: RouterProcess): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of responses(r)) {
    const k = `${e.status}\t${e.error}`;
    out.set(k, (out.get(k) ?? 0) + e.n);
  }
  return out;
}

function renderSmg(r: RouterProcess, pathLabel: boolean): string {
  const x = new RustExposition();
  const model: [string, string] = ['model', MODEL_NAME];
  x.counter(
    'smg_http_requests_total',
    'Total HTTP requests by method and path',
    [...r.httpRequests.entries()].map(([k, n]): [L, number] => {
      const [method, path] = k.split(' ');
      return [
        [
          ['method', method],
          ['path', path],
        ],
        n,
      ];
    }),
  );
  x.counter(
    'smg_http_responses_total',
    pathLabel
      ? 'Total HTTP responses by path, status_code and error_code'
      : 'Total HTTP responses by status code and error code',
    pathLabel
      ? responses(r).map((e): [L, number] => [
          [
            ['path', e.path],
            ['status_code', e.status],
            ['error_code', e.error],
          ],
          e.n,
        ])
      : [...byStatus(r).entries()].map(([k, n]): [L, number] => {
          const [status, error] = k.split('\t');
          return [
            [
              ['status_code', status],
              ['error_code', error],
            ],
            n,
          ];
        }),
  );
  x.histogram(
    'smg_http_request_duration_seconds',
    'HTTP request duration by method and path',
    [...r.httpDurations.entries()].map(([k, h]): [L, Histogram] => {
      const [method, path] = k.split(' ');
      return [
        [
          ['method', method],
          ['path', path],
        ],
        h,
      ];
    }),
  );
  x.gauge('smg_http_connections_active', 'Currently active HTTP connections', [[[], r.connectionsActive]]);
  const routeLabels: L = [
    ['router_type', 'http'],
    ['backend_type', 'pd'],
    ['connection_mode', 'http'],
    model,
    ['endpoint', 'chat'],
  ];
  if (r.routedRequests > 0) {
    x.counter(
      'smg_router_requests_total',
      'Total routed requests by router_type, backend_type, connection_mode, model, endpoint, streaming',
      [[[...routeLabels, ['streaming', 'true']], r.routedRequests]],
    );
  }
  if (r.duration.count > 0) {
    x.histogram(
      'smg_router_request_duration_seconds',
      'Router request duration by router_type, backend_type, connection_mode, model, endpoint',
      [[routeLabels, r.duration]],
    );
  }
  const errors = responses(r).filter((e) => e.path === '/v1/chat/completions' && e.status !== '200');
  if (errors.length) {
    const byType = new Map<string, number>();
    for (const e of errors)
      byType.set(e.error || 'internal_error', (byType.get(e.error || 'internal_error') ?? 0) + e.n);
    x.counter(
      'smg_router_request_errors_total',
      'Router request errors by router_type, backend_type, connection_mode, model, endpoint, error_type',
      [...byType.entries()].map(([t, n]): [L, number] => [[...routeLabels, ['error_type', t]], n]),
    );
  }
  x.gauge(
    'smg_worker_pool_size',
    'Current worker pool size by worker_type, connection_mode, model',
    r.workers.map((w): [L, number] => [[['worker_type', w.role], ['connection_mode', 'http'], model], 1]),
  );
  x.gauge(
    'smg_worker_health',
    'Worker health status (1=healthy, 0=unhealthy)',
    r.workers.map((w): [L, number] => [[['worker', w.url]], w.health === 'healthy' ? 1 : 0]),
  );
  x.counter(
    'smg_worker_health_checks_total',
    'Health check results by worker_type and result',
    r.workers.flatMap((w): Array<[L, number]> => [
      [
        [
          ['worker_type', w.role],
          ['result', 'success'],
        ],
        w.checksOk,
      ],
      [
        [
          ['worker_type', w.role],
          ['result', 'failure'],
        ],
        w.checksFailed,
      ],
    ]),
  );
  x.gauge(
    'smg_worker_cb_state',
    'Circuit breaker state per worker (0=closed, 1=open, 2=half_open)',
    r.workers.map((w): [L, number] => [[['worker', w.url]], w.cbState]),
  );
  x.gauge(
    'smg_worker_cb_consecutive_failures',
    'Consecutive failures per worker circuit breaker',
    r.workers.map((w): [L, number] => [[['worker', w.url]], w.cbConsecutiveFailures]),
  );
  x.gauge(
    'smg_worker_requests_active',
    'Currently running requests per worker',
    r.workers.map((w): [L, number] => [[['worker', w.url]], w.active]),
  );
  x.counter(
    'smg_worker_selection_total',
    'Worker selections by worker_type, connection_mode, model, policy',
    r.workers
      .filter((w) => w.processed > 0)
      .map((w): [L, number] => [
        [['worker_type', w.role], ['connection_mode', 'http'], model, ['policy', 'cache_aware']],
        w.processed,
      ]),
  );
  return x.text();
}

function renderLegacy(r: RouterProcess): string {
  const x = new RustExposition();
  const route: L = [['route', '/v1/chat/completions']];
  const prefills = r.workers.filter((w) => w.role === 'prefill');
  const decodes = r.workers.filter((w) => w.role === 'decode');
  const perWorker = (f: (w: RouterProcess['workers'][number]) => number): Array<[L, number]> =>
    r.workers.map((w): [L, number] => [[['worker', w.url]], f(w)]);
  // Counters of metrics-exporter-prometheus exist from their first increment.
  const once = (w: RouterProcess['workers'][number], v: number): Array<[L, number]> =>
    v > 0 ? [[[['worker', w.url]], v]] : [];

  if (r.pdRequests > 0)
    x.counter('sgl_router_pd_requests_total', 'Total PD requests by route', [[route, r.pdRequests]]);
  if (r.durationLegacy.count > 0) {
    x.histogram('sgl_router_pd_request_duration_seconds', 'PD request duration by route', [
      [route, r.durationLegacy],
    ]);
  }
  if (r.pdSelectionErrors > 0) {
    x.counter('sgl_router_pd_errors_total', 'Total PD errors by type', [
      [[['error_type', 'server_selection']], r.pdSelectionErrors],
    ]);
  }
  x.counter(
    'sgl_router_pd_prefill_requests_total',
    'Total prefill requests per worker',
    prefills.flatMap((w) => once(w, w.processed)),
  );
  x.counter(
    'sgl_router_pd_decode_requests_total',
    'Total decode requests per worker',
    decodes.flatMap((w) => once(w, w.processed)),
  );
  x.counter(
    'sgl_router_pd_prefill_errors_total',
    'Total prefill errors per worker',
    prefills.flatMap((w) => once(w, w.errors)),
  );
  x.counter(
    'sgl_router_pd_decode_errors_total',
    'Total decode errors per worker',
    decodes.flatMap((w) => once(w, w.errors)),
  );
  x.counter(
    'sgl_router_processed_requests_total',
    'Total requests processed by each worker',
    r.workers.flatMap((w) => once(w, w.processed)),
  );
  x.gauge(
    'sgl_router_worker_health',
    'Worker health status (1=healthy, 0=unhealthy)',
    perWorker((w) => (w.health === 'healthy' ? 1 : 0)),
  );
  x.gauge(
    'sgl_router_cb_state',
    'Circuit breaker state per worker (0=closed, 1=open, 2=half_open)',
    perWorker((w) => w.cbState),
  );
  const statuses = byStatus(r);
  const byCode = new Map<string, number>();
  for (const [k, n] of statuses) {
    const code = k.split('\t')[0];
    byCode.set(code, (byCode.get(code) ?? 0) + n);
  }
  x.counter(
    'sgl_router_http_responses_total',
    'Total HTTP responses by status code',
    [...byCode.entries()].map(([code, n]): [L, number] => [[['status_code', code]], n]),
  );
  return x.text();
}

/** smg --engine-metrics: gauges polled from each worker's /v1/loads, one series per DP rank. */
function renderEngineMetrics(r: RouterProcess, engines: EngineLoads): string {
  const x = new RustExposition();
  const rows = r.workers.flatMap((w) => {
    const p = typeof engines === 'function' ? engines(w) : (engines[w.role] ?? null);
    if (!p || p.stage === 'loading') return [];
    return p.ranks.map((rank, i) => ({ w, p, rank, dpRank: String(i) }));
  });
  const byModel = (f: (row: (typeof rows)[number]) => number): Array<[L, number]> =>
    rows.map((row): [L, number] => [
      [
        ['worker', row.w.url],
        ['model', MODEL_NAME],
        ['dp_rank', row.dpRank],
      ],
      f(row),
    ]);
  const byRole = (f: (row: (typeof rows)[number]) => number): Array<[L, number]> =>
    rows.map((row): [L, number] => [
      [
        ['worker', row.w.url],
        ['role', row.w.role],
        ['dp_rank', row.dpRank],
      ],
      f(row),
    ]);
  x.gauge(
    'smg_engine_running_requests',
    'Engine running requests',
    byModel((o) => o.rank.running),
  );
  x.gauge(
    'smg_engine_waiting_requests',
    'Engine waiting requests',
    byModel((o) => o.rank.queue),
  );
  x.gauge(
    'smg_engine_token_usage',
    'Engine KV token usage',
    byModel((o) => Math.round((o.rank.usedTokens / o.rank.capacity) * 100) / 100),
  );
  x.gauge(
    'smg_engine_gen_throughput',
    'Engine generation throughput',
    byModel((o) => Math.round((o.p.genThroughput / o.p.dpRanks) * 100) / 100),
  );
  x.gauge(
    'smg_engine_cache_hit_rate',
    'Engine prefix cache hit rate',
    byModel((o) => (o.p.role === 'prefill' ? Math.round(o.p.cacheHitRate * 1000) / 1000 : 0)),
  );
  x.gauge(
    'smg_engine_pd_prefill_queue_reqs',
    'Engine PD prefill queue requests',
    byRole((o) => (o.p.role === 'prefill' ? o.p.bootstrapQueue : 0)),
  );
  x.gauge(
    'smg_engine_pd_decode_queue_reqs',
    'Engine PD decode queue requests',
    byRole((o) => (o.p.role === 'decode' ? o.p.preallocQueue + o.p.transferQueue : 0)),
  );
  x.gauge(
    'smg_engine_pd_kv_transfer_latency_ms',
    'Engine PD KV transfer latency',
    byRole((o) => (o.p.role === 'prefill' ? Math.round(o.p.lastKvTransfer.latencyMs * 100) / 100 : 0)),
  );
  x.gauge(
    'smg_engine_pd_kv_transfer_speed_gb_s',
    'Engine PD KV transfer speed',
    byRole((o) => (o.p.role === 'prefill' ? Math.round(o.p.lastKvTransfer.speedGbS * 100) / 100 : 0)),
  );
  return x.text();
}
