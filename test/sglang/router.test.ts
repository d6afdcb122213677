import { describe, expect, it } from 'vitest';
import {
  detectRouterEra,
  mergeRouterHealth,
  normalizeWorkerUrl,
  parseReadiness,
  parseWorkersJson,
  RouterResponseError,
  routerHealthFromMetrics,
} from '../../src/main/core/probes/sglang/router';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { fixture, prom } from './prom';

describe('router metrics', () => {
  it('smg 1.x (§7.3): per-worker health, cb state, active requests; roles from --engine-metrics gauges', () => {
    const h = routerHealthFromMetrics(fixture('router-smg.prom'));
    expect(h.era).toBe('smg');
    expect(h.workers).toEqual([
      { url: 'http://127.0.0.1:30100', healthy: true, cbState: 'closed', activeRequests: 4 },
      // only the decode worker appears in smg_engine_pd_decode_queue_reqs{role="decode"}
      { url: 'http://127.0.0.1:30200', healthy: true, cbState: 'closed', activeRequests: 58, role: 'decode' },
    ]);
    // smg_router_requests_total is the routed-request counter: 1533
    expect(h.requestsTotal).toBe(1533);
    expect(h.errorsTotal).toBeUndefined();
  });

  it('sglang-router ≤ 0.2.4 in PD mode: sgl_router_pd_* counters, roles from the PD per-worker counters', () => {
    const h = routerHealthFromMetrics(fixture('router-sgl-0.2.4.prom'));
    expect(h.era).toBe('sgl_router');
    // A PD router has no per-worker running-requests gauge (sgl_router_running_requests is regular-only).
    expect(h.workers).toEqual([
      { url: 'http://127.0.0.1:30100', healthy: true, cbState: 'closed', role: 'prefill' },
      { url: 'http://127.0.0.1:30200', healthy: false, cbState: 'open', role: 'decode' },
    ]);
    // sgl_router_pd_requests_total; errors = pd_errors_total 4 + pd_decode_errors_total 3
    expect(h.requestsTotal).toBe(907);
    expect(h.errorsTotal).toBe(7);
  });

  it('a regular-mode sglang-router still counts sgl_router_requests_total and request_errors_total', () => {
    const h = routerHealthFromMetrics(
      prom(
        'sgl_router_requests_total{route="/generate"} 50\nsgl_router_request_errors_total{route="/generate",error_type="no_available_workers"} 2\n',
      ),
    );
    expect(h.requestsTotal).toBe(50);
    expect(h.errorsTotal).toBe(2);
  });

  it('health −1 marks a removed worker (not merely unhealthy)', () => {
    const h = routerHealthFromMetrics(
      prom(`
smg_worker_health{worker="http://10.0.0.5:30200/"} -1
smg_worker_cb_state{worker="http://10.0.0.5:30200/"} -1
smg_worker_health{worker="HTTP://10.0.0.5:30100"} 0
`),
    );
    expect(h.workers).toEqual([
      { url: 'http://10.0.0.5:30100', healthy: false },
      { url: 'http://10.0.0.5:30200', healthy: false, removed: true, cbState: 'removed' },
    ]);
  });

  it('the live worker table and the workers_total / workers_healthy signals are one reading of the gauges', () => {
    const exp = prom(`
smg_worker_health{worker="http://10.0.0.5:30200/"} -1
smg_worker_cb_state{worker="http://10.0.0.5:30200/"} -1
smg_worker_health{worker="HTTP://10.0.0.5:30100"} 0
smg_worker_health{worker="http://10.0.0.5:30300"} 1
smg_worker_cb_state{worker="http://10.0.0.5:30300"} 1
smg_worker_requests_active{worker="http://10.0.0.5:30400"} 3
`);
    const store = new SignalsStore({ capacity: 10 });
    store.open('d', ['router']);
    const values = store.ingest('d', 1_800_000_000_000, 'router', exp);
    const workers = store.routerWorkers('d');
    expect(workers).toEqual(routerHealthFromMetrics(exp).workers);
    expect(workers).toEqual([
      { url: 'http://10.0.0.5:30100', healthy: false },
      { url: 'http://10.0.0.5:30200', healthy: false, removed: true, cbState: 'removed' },
      { url: 'http://10.0.0.5:30300', healthy: true, cbState: 'open' },
      { url: 'http://10.0.0.5:30400', healthy: null, activeRequests: 3 },
    ]);
    // Removed workers are listed in the table but not counted; unknown health is not healthy.
    expect(values['router.workers_total']).toBe(3);
    expect(values['router.workers_healthy']).toBe(1);
  });

  it('the experimental in-tree sgl-router labels workers worker_url', () => {
    const h = routerHealthFromMetrics(prom('sgl_router_worker_health{worker_url="http://h:1"} 1\n'));
    expect(h.workers).toEqual([{ url: 'http://h:1', healthy: true }]);
  });

  it('a server exposition is not a router', () => {
    expect(detectRouterEra(fixture('decode-newest.prom'))).toBeNull();
    expect(routerHealthFromMetrics(fixture('decode-newest.prom'))).toEqual({ era: null, workers: [] });
  });

  it('normalizes worker URLs for matching', () => {
    expect(normalizeWorkerUrl('127.0.0.1:30200')).toBe('http://127.0.0.1:30200');
    expect(normalizeWorkerUrl(' HTTP://Node-1:30200/ ')).toBe('http://node-1:30200');
  });
});

describe('/readiness and /workers', () => {
  it('maps status codes', () => {
    expect(parseReadiness(200).ready).toBe(true);
    const r = parseReadiness(503, '{"status":"not ready"}');
    expect(r.ready).toBe(false);
    expect(r.detail).toMatch(/prefill and one healthy decode/);
    expect(r.detail).toContain('not ready');
    // The router's own reason is shown as it wrote it.
    const why = parseReadiness(503, '{"status":"not ready","reason":"insufficient healthy workers"}');
    expect(why.ready).toBe(false);
    expect(why.detail).toMatch(/^503 not ready: insufficient healthy workers \(PD needs/);
    expect(parseReadiness(503, '{"status":"not ready","reason":"draining"}').detail).toContain(': draining');
    expect(parseReadiness(404).ready).toBeNull();
    expect(parseReadiness(500).detail).toMatch(/unexpected HTTP 500/);
  });

  it('parses the /workers shape, including enum-style worker_type', () => {
    const rep = parseWorkersJson({
      workers: [
        {
          id: 'w1',
          url: 'http://127.0.0.1:30100',
          worker_type: { Prefill: { bootstrap_port: 8998 } },
          is_healthy: true,
          load: 2,
        },
        { id: 'w2', url: 'http://127.0.0.1:30200/', worker_type: 'decode', is_healthy: false, status: 'x' },
      ],
      total: 2,
      stats: { total_workers: 2, healthy_workers: 1, total_models: 1, total_load: 2 },
    });
    expect(rep.workers).toEqual([
      { url: 'http://127.0.0.1:30100', healthy: true, role: 'prefill', activeRequests: 2 },
      { url: 'http://127.0.0.1:30200', healthy: false, role: 'decode' },
    ]);
    expect(rep.stats).toEqual({ totalWorkers: 2, healthyWorkers: 1, totalLoad: 2 });
  });

  it('parses /workers as sglang-router 0.2.x and smg answer it: UUID ids, status, {prefill_count,…} stats', () => {
    const rep = parseWorkersJson({
      workers: [
        {
          id: '2f1c8a52-3c55-4e8a-9d2b-4c1d7a0e9b11',
          model_id: 'Qwen/Qwen3-32B',
          url: 'http://127.0.0.1:30100',
          worker_type: 'prefill',
          connection_mode: 'http',
          runtime_type: 'sglang',
          priority: 50,
          cost: 1.0,
          bootstrap_port: 8998,
          is_healthy: true,
          status: 'ready',
          load: 2,
        },
        {
          id: '9b0e2c41-5d6f-4a7b-8c9d-0e1f2a3b4c5d',
          url: 'http://127.0.0.1:30200',
          worker_type: 'decode',
          status: 'not_ready',
          load: 0,
        },
      ],
      total: 2,
      stats: { prefill_count: 1, decode_count: 1, regular_count: 0 },
    });
    expect(rep.workers).toEqual([
      { url: 'http://127.0.0.1:30100', healthy: true, role: 'prefill', activeRequests: 2 },
      // No is_healthy: the lifecycle status says it.
      { url: 'http://127.0.0.1:30200', healthy: false, role: 'decode', activeRequests: 0 },
    ]);
    expect(rep.stats).toEqual({ totalWorkers: 2, prefillCount: 1, decodeCount: 1, regularCount: 0 });
  });

  it('accepts the legacy /list_workers {urls} shape', () => {
    expect(parseWorkersJson({ urls: ['http://a:1'] }, 'GET /list_workers').workers).toEqual([
      { url: 'http://a:1', healthy: null },
    ]);
  });

  it('rejects other shapes with an error naming the endpoint and the likely mistake', () => {
    expect(() => parseWorkersJson('# HELP smg_http_requests_total')).toThrow(RouterResponseError);
    expect(() => parseWorkersJson({ workers: [{ id: 1 }] })).toThrow(/GET \/workers: .*Prometheus port/);
  });

  it('merges: /workers health and role win, metrics keep cb state and load, discovery fills roles', () => {
    const metrics = routerHealthFromMetrics(fixture('router-sgl-0.2.4.prom'));
    const merged = mergeRouterHealth({
      metrics,
      workers: parseWorkersJson({
        workers: [
          { url: 'http://127.0.0.1:30200', worker_type: 'decode', is_healthy: true },
          { url: 'http://127.0.0.1:30300', is_healthy: true },
        ],
      }),
      readiness: parseReadiness(200),
      expectedRoles: [{ url: 'http://127.0.0.1:30300/', role: 'decode' }],
    });
    expect(merged.ready).toBe(true);
    expect(merged.era).toBe('sgl_router');
    expect(merged.workers).toEqual([
      { url: 'http://127.0.0.1:30100', healthy: true, cbState: 'closed', role: 'prefill' },
      { url: 'http://127.0.0.1:30200', healthy: true, cbState: 'open', role: 'decode' },
      { url: 'http://127.0.0.1:30300', healthy: true, role: 'decode' },
    ]);
  });
});
