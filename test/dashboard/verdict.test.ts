import { describe, expect, it } from 'vitest';
import { pipelineVerdict } from '../../src/main/core/signals/verdict';
import type { Role } from '../../src/shared/domain';

const ROLES: Role[] = ['router', 'prefill', 'decode'];

/** A running, scraped, healthy deployment with empty queues, plus the overrides of a case. */
function values(over: Record<string, number | null> = {}): Record<string, number | null> {
  const base: Record<string, number | null> = {};
  for (const r of ROLES) {
    base[`${r}.active`] = 1;
    base[`${r}.health_ok`] = 1;
    base[`${r}.metrics_ok`] = 1;
  }
  Object.assign(base, {
    'prefill.running': 4,
    'prefill.queued': 1,
    'prefill.prefill_bootstrap_queue': 0,
    'prefill.prefill_inflight_queue': 1,
    'decode.running': 30,
    'decode.queued': 0,
    'decode.decode_prealloc_queue': 0,
    'decode.decode_transfer_queue': 1,
    'decode.kv_ratio': 0.5,
    'router.router_requests_per_s': 5,
    'router.router_error_share': 0,
    'router.workers_healthy': 2,
    'router.workers_total': 2,
  });
  return { ...base, ...over };
}

describe('pipelineVerdict', () => {
  it('reads a flowing pipeline with short queues as healthy, with the queue figures as evidence', () => {
    const v = pipelineVerdict({ values: values(), roles: ROLES });
    expect(v.kind).toBe('healthy');
    expect(v.evidence.join(' ')).toContain('1 request queued');
  });

  it('says idle when nothing runs and the router sees no traffic', () => {
    const v = pipelineVerdict({
      values: values({ 'prefill.running': 0, 'decode.running': 0, 'router.router_requests_per_s': 0 }),
      roles: ROLES,
    });
    expect(v.kind).toBe('idle');
  });

  it('blames a stopped service before any queue', () => {
    const v = pipelineVerdict({
      values: values({ 'decode.active': 0, 'prefill.queued': 50 }),
      roles: ROLES,
    });
    expect(v.kind).toBe('service-down');
    expect(v.headline).toContain('decode is not active');
  });

  it('calls a health-check failure on a running service a service problem too', () => {
    const v = pipelineVerdict({ values: values({ 'router.health_ok': 0 }), roles: ROLES });
    expect(v.kind).toBe('service-down');
    expect(v.evidence[0]).toContain('readiness');
  });

  it('will not guess without metrics from the servers', () => {
    const v = pipelineVerdict({
      values: values({ 'prefill.metrics_ok': 0, 'decode.metrics_ok': null }),
      roles: ROLES,
    });
    expect(v.kind).toBe('unknown');
    expect(v.evidence).toEqual(['prefill: /metrics did not answer', 'decode: not scraped yet']);
  });

  it('is prefill-bound when requests wait for prefill compute while decode has room', () => {
    const v = pipelineVerdict({ values: values({ 'prefill.queued': 40 }), roles: ROLES });
    expect(v.kind).toBe('prefill-bound');
    expect(v.evidence[0]).toBe('40 requests queued for prefill');
  });

  it('is decode-bound when decode has no KV slots, even though prefill is queueing too', () => {
    const v = pipelineVerdict({
      values: values({
        'decode.decode_prealloc_queue': 20,
        'prefill.prefill_bootstrap_queue': 12,
        'decode.kv_ratio': 0.97,
        'prefill.queued': 10,
      }),
      roles: ROLES,
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.evidence).toContain('20 requests waiting for KV slots on decode');
    expect(v.evidence).toContain('decode KV cache 97 % full');
    expect(v.evidence).toContain('also: 10 requests queued for prefill');
  });

  it('names a full dp rank as decode KV pressure although the summed usage is moderate', () => {
    const v = pipelineVerdict({
      values: values({
        'decode.decode_prealloc_queue': 20,
        'decode.kv_ratio': 0.8,
        'decode.kv_fullest_rank_ratio': 0.97,
      }),
      roles: ROLES,
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.evidence).toContain('decode KV cache 97 % full on its fullest dp rank (80 % overall)');
  });

  it('is transfer-bound when requests sit between prefill and decode and transfers are slow or failing', () => {
    const v = pipelineVerdict({
      values: values({
        'prefill.prefill_inflight_queue': 14,
        'decode.decode_transfer_queue': 9,
        'decode.kv_transfer_latency_p50_ms': 1800,
        'decode.transfer_failed_per_min': 3,
      }),
      roles: ROLES,
    });
    expect(v.kind).toBe('transfer-bound');
    expect(v.evidence.join('\n')).toMatch(/14 requests in flight[\s\S]*3 KV transfer failures per minute/);
  });

  it('is router-bound when the router fails requests while the servers are empty', () => {
    const v = pipelineVerdict({
      values: values({ 'router.router_error_share': 0.25, 'router.workers_healthy': 1 }),
      roles: ROLES,
    });
    expect(v.kind).toBe('router-bound');
    expect(v.evidence).toEqual(['25 % of router responses are 5xx', '1 of 2 workers healthy at the router']);
    // With the router's worker list, a one-host pair's unhealthy worker is named by its role and URL.
    const named = pipelineVerdict({
      values: values({ 'router.router_error_share': 0.25, 'router.workers_healthy': 1 }),
      roles: ROLES,
      routerWorkers: [
        { url: 'http://127.0.0.1:30100', role: 'prefill', healthy: true },
        { url: 'http://127.0.0.1:30200', role: 'decode', healthy: false, cbState: 'open' },
      ],
    });
    expect(named.evidence[1]).toBe(
      '1 of 2 workers healthy at the router; not healthy: decode worker http://127.0.0.1:30200 (circuit breaker open)',
    );
  });

  it('counts a queue that keeps growing even before it is long', () => {
    const flat = pipelineVerdict({ values: values({ 'prefill.queued': 6 }), roles: ROLES });
    expect(flat.kind).toBe('healthy');
    const growing = pipelineVerdict({
      values: values({ 'prefill.queued': 6 }),
      growth: { 'prefill.queued': 6 },
      roles: ROLES,
    });
    expect(growing.kind).toBe('prefill-bound');
    expect(growing.evidence[0]).toContain('+6 in 2 min');
  });

  it('ignores signals a server version does not expose instead of reading them as zero pressure', () => {
    const v = pipelineVerdict({
      values: values({ 'decode.decode_prealloc_queue': null, 'decode.kv_ratio': 0.95 }),
      roles: ROLES,
    });
    expect(v.kind).toBe('decode-bound');
  });
});
