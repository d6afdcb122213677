// The router's Prometheus text (metrics-exporter-prometheus, Rust): `smg_*` names from sglang-router 0.3.0
// / smg 1.x, `sgl_router_*` names up to sglang-router 0.2.4.
import { RustExposition } from './exposition-writer';
import type { RouterProcess } from './processes';
import type { RouterEra } from './simulation';
import { MODEL_NAME } from './units';

type L = Array<[string, string]>;

export function renderRouterMetrics(r: RouterProcess, era: RouterEra): string {
  return era === 'smg' ? renderSmg(r) : renderLegacy(r);
}

function responses(r: RouterProcess): Array<{ path: string; status: string; error: string; n: number }> {
  return [...r.httpResponses.entries()].map(([k, n]) => {
    const [path, status, error] = k.split('\t');
    return { path, status, error, n };
  });
}

function renderSmg(r: RouterProcess): string {
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
    'Total HTTP responses by path, status_code and error_code',
    responses(r).map((e): [L, number] => [
      [
        ['path', e.path],
        ['status_code', e.status],
        ['error_code', e.error],
      ],
      e.n,
    ]),
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
  const errors = responses(r).filter((e) => e.status !== '200');
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
  if (r.routedRequests > 0)
    x.counter('sgl_router_requests_total', 'Total number of requests by route', [[route, r.routedRequests]]);
  if (r.durationLegacy.count > 0) {
    x.histogram('sgl_router_request_duration_seconds', 'Request duration in seconds', [
      [[], r.durationLegacy],
    ]);
  }
  const errors = responses(r).filter((e) => e.status !== '200');
  if (errors.length) {
    x.counter(
      'sgl_router_request_errors_total',
      'Total number of request errors by route and error type',
      errors.map((e): [L, number] => [[...route, ['error_type', e.error || 'internal_error']], e.n]),
    );
  }
  x.gauge('sgl_router_active_workers', 'Number of active workers', [
    [[], r.workers.filter((w) => w.health === 'healthy').length],
  ]);
  x.gauge(
    'sgl_router_worker_health',
    'Worker health status (1=healthy, 0=unhealthy)',
    r.workers.map((w): [L, number] => [[['worker', w.url]], w.health === 'healthy' ? 1 : 0]),
  );
  x.gauge(
    'sgl_router_running_requests',
    'Number of running requests per worker',
    r.workers.map((w): [L, number] => [[['worker', w.url]], w.active]),
  );
  x.counter(
    'sgl_router_processed_requests_total',
    'Total requests processed by each worker',
    r.workers.filter((w) => w.processed > 0).map((w): [L, number] => [[['worker', w.url]], w.processed]),
  );
  x.gauge(
    'sgl_router_cb_state',
    'Circuit breaker state per worker (0=closed, 1=open, 2=half_open)',
    r.workers.map((w): [L, number] => [[['worker', w.url]], w.cbState]),
  );
  if (r.routedRequests > 0) {
    x.counter('sgl_router_pd_requests_total', 'Total PD requests by route', [[route, r.routedRequests]]);
  }
  const prefill = r.worker('prefill');
  const decode = r.worker('decode');
  if (prefill.processed > 0) {
    x.counter('sgl_router_pd_prefill_requests_total', 'Total prefill requests per worker', [
      [[['worker', prefill.url]], prefill.processed],
    ]);
  }
  if (decode.processed > 0) {
    x.counter('sgl_router_pd_decode_requests_total', 'Total decode requests per worker', [
      [[['worker', decode.url]], decode.processed],
    ]);
  }
  if (prefill.errors > 0) {
    x.counter('sgl_router_pd_prefill_errors_total', 'Total prefill errors per worker', [
      [[['worker', prefill.url]], prefill.errors],
    ]);
  }
  if (decode.errors > 0) {
    x.counter('sgl_router_pd_decode_errors_total', 'Total decode errors per worker', [
      [[['worker', decode.url]], decode.errors],
    ]);
  }
  return x.text();
}
