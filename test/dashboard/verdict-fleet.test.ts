// The verdict of a fleet names the worker at fault and its host: one decode worker full while the others have
// room is decode-bound on that worker; one worker down while its role's others serve is "degraded", not
// "requests cannot flow"; a one-host pair reads as before (its keys carry no scope).
import { describe, expect, it } from 'vitest';
import { pipelineVerdict } from '../../src/main/core/signals/verdict';
import { fleetWorkersOf, type FleetWorker } from '@shared/worker-names';
import { DEMO_FLEET_WORKERS as WORKERS } from '../support/fleet-workers';
import type { Role } from '../../src/shared/domain';

const ROLES: Role[] = ['router', 'prefill', 'decode'];

/** A flowing fleet: every worker up and scraped, short queues, decode KV at 40/50/55 %, aggregate 48 %. */
function fleetValues(over: Record<string, number | null> = {}): Record<string, number | null> {
  const base: Record<string, number | null> = {};
  for (const r of ROLES) {
    base[`${r}.active`] = 1;
    base[`${r}.health_ok`] = 1;
    base[`${r}.metrics_ok`] = 1;
  }
  for (const w of WORKERS) {
    base[`${w.role}.active@${w.id}`] = 1;
    base[`${w.role}.health_ok@${w.id}`] = 1;
  }
  Object.assign(base, {
    'prefill.running': 4,
    'prefill.queued': 1,
    'decode.running': 30,
    'decode.queued': 0,
    'decode.kv_ratio': 0.48,
    'decode.kv_ratio@decode-0': 0.4,
    'decode.kv_ratio@decode-1': 0.5,
    'decode.kv_ratio@decode-2': 0.55,
    'router.router_requests_per_s': 5,
    'router.router_error_share': 0,
  });
  return { ...base, ...over };
}

describe('pipelineVerdict in a fleet', () => {
  it('one decode worker full while the aggregate is not: decode-bound, naming the worker and its host', () => {
    const v = pipelineVerdict({
      values: fleetValues({ 'decode.kv_ratio@decode-1': 0.97, 'decode.kv_ratio': 0.66 }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.headline).toBe(
      'Decode-bound: requests are piling up at decode — decode-1 on gpu-b at 97 % KV, others below 60 %.',
    );
  });

  it('the fullest dp rank of a worker counts, and two full workers are both named', () => {
    const v = pipelineVerdict({
      values: fleetValues({
        'decode.kv_ratio@decode-1': 0.8,
        'decode.kv_fullest_rank_ratio@decode-1': 0.95,
        'decode.kv_ratio@decode-2': 0.92,
      }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.evidence[0]).toBe(
      'decode-1 on gpu-b at 95 % KV, decode-2 on gpu-b+gpu-c at 92 %, 1 other below 50 %',
    );
  });

  it('without the worker list it names workers from the scoped keys (no host)', () => {
    const v = pipelineVerdict({ values: fleetValues({ 'decode.kv_ratio@decode-2': 0.97 }), roles: ROLES });
    expect(v.evidence[0]).toBe('decode-2 at 97 % KV, others below 60 %');
  });

  it("healthy: the decode bullet gives the card's aggregate and names the fullest worker, not one bare figure", () => {
    // The issue's picture: the card says 37 % while the fullest worker sits at 80 %, below the full threshold.
    const v = pipelineVerdict({
      values: fleetValues({
        'decode.kv_ratio': 0.37,
        'decode.kv_ratio@decode-0': 0.12,
        'decode.kv_ratio@decode-1': 0.8,
        'decode.kv_ratio@decode-2': 0.2,
      }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('healthy');
    expect(v.evidence[1]).toMatch(/, KV 37 % overall, fullest decode-1 on gpu-b at 80 %$/);
    expect(v.evidence.join(' ')).not.toMatch(/KV 80 %/);
  });

  it('the same fleet with room everywhere is healthy', () => {
    expect(pipelineVerdict({ values: fleetValues(), roles: ROLES, workers: WORKERS }).kind).toBe('healthy');
  });

  it('one decode worker down while two serve: degraded, naming it — not "requests cannot flow"', () => {
    const v = pipelineVerdict({
      values: fleetValues({ 'decode.active@decode-2': 0, 'decode.active': 0 }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('service-down');
    expect(v.headline).toBe(
      'Degraded: decode-2 on gpu-b+gpu-c is not active (systemd); 2 of 3 decode workers serve.',
    );
  });

  it("one decode worker down while the router still sends to it: its 5xx are the worker's, not the router's", () => {
    // The demo fleet's crash loop of decode-1: until the router's health checks drop it, requests routed to it
    // fail with 502, and the verdict said "Router-bound: the router is failing requests while the servers have
    // room — 15 % of router responses are 5xx" over the worker that was down.
    const v = pipelineVerdict({
      values: fleetValues({ 'decode.active@decode-1': 0, 'router.router_error_share': 0.15 }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('service-down');
    expect(v.headline).toBe(
      'Degraded: decode-1 on gpu-b is not active (systemd); 2 of 3 decode workers serve.',
    );
    expect(v.evidence).toContain(
      '15 % of router responses are 5xx: requests it still sends to decode-1 on gpu-b fail',
    );
    expect(`${v.headline} ${v.evidence.join(' ')} ${v.nextStep}`).not.toMatch(
      /router is failing|its 5xx are its own/,
    );
  });

  it('every decode worker down: requests cannot flow, each named once with the hosts, then by reason', () => {
    const v = pipelineVerdict({
      values: fleetValues({
        'decode.active@decode-0': 0,
        'decode.active@decode-1': 0,
        'decode.health_ok@decode-2': 0,
      }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('service-down');
    expect(v.headline).toBe(
      'Requests cannot flow: every decode worker is down: decode-0, decode-1, decode-2 (gpu-b, gpu-c).',
    );
    expect(v.evidence).toEqual([
      'every decode worker is down: decode-0, decode-1, decode-2 (gpu-b, gpu-c)',
      'decode-0, decode-1 (gpu-b): not active (systemd)',
      'decode-2 on gpu-b+gpu-c: running but failing its health check',
    ]);
  });

  it('two of three decode workers down: degraded, both named in one line with what still serves', () => {
    const v = pipelineVerdict({
      values: fleetValues({ 'decode.active@decode-0': 0, 'decode.health_ok@decode-2': 0 }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.headline).toBe(
      'Degraded: decode-0 on gpu-b is not active (systemd), decode-2 on gpu-b+gpu-c is running but failing its health check; 1 of 3 decode workers serve.',
    );
    expect(v.evidence).toHaveLength(1);
  });

  it('a long run of numbered workers is shortened in the down line', () => {
    const workers: FleetWorker[] = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => ({
      id: `decode-${k}`,
      role: 'decode',
      hosts: [k < 4 ? 'gpu-b' : 'gpu-c'],
    }));
    const values = fleetValues();
    for (const w of workers) values[`decode.active@${w.id}`] = 0;
    const v = pipelineVerdict({ values, roles: ROLES, workers: [...WORKERS.slice(0, 3), ...workers] });
    expect(v.headline).toBe('Requests cannot flow: every decode worker is down: decode-0–7 (gpu-b, gpu-c).');
  });

  it('a down worker beside a bottleneck is said as "also"', () => {
    const v = pipelineVerdict({
      values: fleetValues({ 'decode.kv_ratio@decode-1': 0.97, 'prefill.active@prefill-1': 0 }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.evidence).toContain(
      'also: prefill-1 on gpu-a is not active (systemd); 1 of 2 prefill workers serve',
    );
  });

  it('queues and running counts the aggregate lacks are summed over the workers', () => {
    const busy = fleetValues({
      'decode.running': null,
      'prefill.running': null,
      'prefill.queued': null,
      'decode.running@decode-0': 30,
      'prefill.queued@prefill-0': 6,
      'prefill.queued@prefill-1': 5,
      'router.router_requests_per_s': null,
    });
    const v = pipelineVerdict({ values: busy, roles: ROLES, workers: WORKERS });
    // 11 queued over two prefill workers is past the threshold (8) though neither alone is.
    expect(v.kind).toBe('prefill-bound');
    // Naming the worker that holds most of it, and how the others stand.
    expect(v.evidence[0]).toBe('11 requests queued for prefill, 6 on prefill-0 on gpu-a, others at most 5');
    const quiet = pipelineVerdict({
      values: { ...busy, 'prefill.queued@prefill-0': 0, 'prefill.queued@prefill-1': 0 },
      roles: ROLES,
      workers: WORKERS,
    });
    // Workers running requests are not idle, whatever the (absent) aggregate says.
    expect(quiet.kind).toBe('healthy');
  });

  it('a queue held by one worker names it, in the headline', () => {
    const v = pipelineVerdict({
      values: fleetValues({
        'decode.decode_prealloc_queue': 14,
        'decode.decode_prealloc_queue@decode-0': 0,
        'decode.decode_prealloc_queue@decode-1': 0,
        'decode.decode_prealloc_queue@decode-2': 14,
      }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.headline).toBe(
      'Decode-bound: requests are piling up at decode — 14 requests waiting for KV slots on decode, all on decode-2 on gpu-b+gpu-c.',
    );
  });

  it("roles listed once per worker (as a fleet's services are) are read once", () => {
    const v = pipelineVerdict({
      values: { ...fleetValues(), 'decode.metrics_ok': null, 'prefill.metrics_ok': null },
      roles: ['router', 'prefill', 'prefill', 'decode', 'decode', 'decode'],
      workers: WORKERS,
    });
    expect(v.kind).toBe('unknown');
    expect(v.evidence).toEqual(['prefill: not scraped yet', 'decode: not scraped yet']);
  });

  it('a one-host pair (no scoped keys) still reads its unscoped keys', () => {
    const v = pipelineVerdict({
      values: { ...fleetValues(), 'decode.kv_ratio': 0.95, 'decode.kv_ratio@decode-1': null },
      roles: ROLES,
      workers: [],
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.evidence[0]).toBe('decode KV cache 95 % full');
  });
  it('names the workers the router counts unhealthy, by worker name where it has one and by URL where not', () => {
    // The count is the router's list's (the one cards say too: shared/router-health.ts): four listed and
    // not removed, two of them healthy. The gauges' own count agrees in a real scrape.
    const v = pipelineVerdict({
      values: fleetValues({
        'router.router_error_share': 0.3,
        'router.workers_total': 4,
        'router.workers_healthy': 2,
      }),
      roles: ROLES,
      workers: WORKERS,
      routerWorkers: [
        { url: 'http://127.0.0.2:30100', role: 'prefill', healthy: true },
        { url: 'http://127.0.0.3:30201', role: 'decode', healthy: false, cbState: 'open' },
        { url: 'http://127.0.0.3:30200', role: 'decode', healthy: true },
        { url: 'http://10.1.0.13:30000', role: 'decode', healthy: false, cbState: 'closed' },
        // A removed worker is not one the router counts.
        { url: 'http://127.0.0.3:30202', role: 'decode', healthy: false, removed: true },
      ],
    });
    expect(v.kind).toBe('router-bound');
    expect(v.evidence).toContain(
      '2 of 4 workers healthy at the router; not healthy: decode-1 on gpu-b, decode worker http://10.1.0.13:30000 (1 with circuit breaker open)',
    );
  });

  it('a serving worker the router refuses, while the others pile up: the refusal is said first, before adding capacity', () => {
    const v = pipelineVerdict({
      values: fleetValues({
        'decode.kv_ratio@decode-0': 0.99,
        'router.workers_total': 5,
        'router.workers_healthy': 4,
      }),
      roles: ROLES,
      workers: WORKERS,
      routerWorkers: [
        { url: 'http://127.0.0.2:30100', role: 'prefill', healthy: true },
        { url: 'http://127.0.0.3:30200', role: 'decode', healthy: true },
        { url: 'http://127.0.0.3:30201', role: 'decode', healthy: false, cbState: 'open' },
      ],
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.headline).toMatch(
      /^Decode-bound: requests are piling up at decode — .*; the router routes nothing to decode-1, which serves\.$/,
    );
    expect(v.nextStep).toMatch(
      /^the router counts decode-1 unhealthy while its own \/health answers: check the router's health checks and its journal; routed again, decode-1 takes its share — if decode still piles up then: /,
    );
  });

  it("fleetWorkersOf keeps the URL the router lists a worker by, normalised as the router's gauges are", () => {
    const ws = fleetWorkersOf([
      {
        id: 'decode-1',
        role: 'decode',
        hostId: 'gpu-b',
        unit: 'd1.service',
        apiUrl: 'http://127.0.0.1:30201',
        workerUrl: 'HTTP://GPU-B:30201/',
      },
    ]);
    expect(ws).toEqual([
      {
        id: 'decode-1',
        role: 'decode',
        hosts: ['gpu-b'],
        url: 'http://gpu-b:30201',
        alone: { manyHosts: false },
      },
    ]);
  });
});
