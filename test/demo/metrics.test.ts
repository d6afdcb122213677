// /metrics and the other HTTP endpoints per era, checked with the app's real exposition parser, plus the
// /metrics faults. Requests go over real loopback sockets to the same handlers the SSH forwards use.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DemoHttpServers, DemoSimulation, emulateCommand } from '../../src/main/demo';
import { DEMO_ERAS, ROUTER_ERAS } from '../../src/main/demo/eras';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { Exposition, MetricFamily } from '../../src/main/core/probes/exposition/types';
import { manualClock, parseShow, T0, waitFor, type ManualClock } from './helpers';

interface Env {
  sim: DemoSimulation;
  clock: ManualClock;
  ports: Record<number, number>;
  servers: DemoHttpServers;
}

const open: DemoHttpServers[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function env(opts: Partial<ConstructorParameters<typeof DemoSimulation>[0]> = {}): Promise<Env> {
  const clock = manualClock(T0);
  const sim = new DemoSimulation({ clock, historyMs: 6 * 60_000, ...opts });
  const servers = new DemoHttpServers(sim);
  open.push(servers);
  const ports = await servers.listen();
  return { sim, clock, ports, servers };
}

interface Resp {
  status: number;
  type: string;
  body: Buffer;
}

function get(
  e: Env,
  port: number,
  path: string,
  opts: { timeoutMs?: number; onHeaders?: (r: http.IncomingMessage) => void } = {},
): Promise<Resp> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: e.ports[port], path, agent: false }, (res) => {
      opts.onHeaders?.(res);
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.setTimeout(opts.timeoutMs ?? 5000, () =>
      req.destroy(new Error(`timeout after ${opts.timeoutMs ?? 5000} ms`)),
    );
    req.on('error', reject);
  });
}

async function scrape(e: Env, port: number): Promise<{ text: string; exp: Exposition }> {
  const r = await get(e, port, '/metrics');
  expect(r.status).toBe(200);
  expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8');
  const text = r.body.toString('utf8');
  return { text, exp: parseExposition(text, 'prometheus') };
}

function fam(exp: Exposition, name: string): MetricFamily | undefined {
  return exp.families.find((f) => f.name === name);
}

function sampleValues(exp: Exposition, name: string): number[] {
  return exp.families
    .flatMap((f) => f.samples)
    .filter((s) => s.name === name)
    .map((s) => s.value);
}

function names(exp: Exposition): Set<string> {
  return new Set(exp.families.map((f) => f.name));
}

describe('era E4 (newest, @016d8605)', () => {
  it('serves kv_* token gauges, capacity, the bootstrap queue name and kv_transfer_* histograms', async () => {
    const e = await env();
    const p = await scrape(e, 30100);
    const d = await scrape(e, 30200);
    for (const n of [
      'sglang:kv_used_tokens',
      'sglang:kv_evictable_tokens',
      'sglang:kv_available_tokens',
      'sglang:max_total_num_tokens',
    ]) {
      expect(fam(d.exp, n)?.type).toBe('gauge');
    }
    expect(sampleValues(d.exp, 'sglang:max_total_num_tokens')).toEqual([2_580_000]);
    expect(sampleValues(p.exp, 'sglang:max_total_num_tokens')).toEqual([447_416]);
    const used = sampleValues(d.exp, 'sglang:kv_used_tokens')[0];
    const ev = sampleValues(d.exp, 'sglang:kv_evictable_tokens')[0];
    const av = sampleValues(d.exp, 'sglang:kv_available_tokens')[0];
    expect(used + ev + av).toBeLessThanOrEqual(2_580_000);
    expect(used).toBe(e.sim.snapshot().kv.decode?.used);
    expect(names(p.exp).has('sglang:num_prefill_bootstrap_queue_reqs')).toBe(true);
    expect(names(p.exp).has('sglang:num_prefill_prealloc_queue_reqs')).toBe(false);
    const lat = fam(p.exp, 'sglang:kv_transfer_latency_ms');
    expect(lat?.type).toBe('histogram');
    const les = lat?.samples.filter((s) => s.name.endsWith('_bucket')).map((s) => s.labels.le);
    expect(les).toEqual([
      '1.0',
      '2.0',
      '5.0',
      '10.0',
      '25.0',
      '50.0',
      '100.0',
      '250.0',
      '500.0',
      '1000.0',
      '2500.0',
      '5000.0',
      '+Inf',
    ]);
    const ttft = fam(d.exp, 'sglang:time_to_first_token_seconds');
    expect(ttft?.samples.find((s) => s.name.endsWith('_bucket'))?.labels).toEqual({
      engine_type: 'decode',
      is_streaming: 'true',
      le: '0.1',
      model_name: 'Qwen/Qwen3-32B',
    });
    expect(names(d.exp).has('sglang:engine_startup_time')).toBe(false);
  });

  it('writes prometheus_client multiprocess text: sorted labels, _sum before buckets, pid on num_retracted_reqs', async () => {
    const e = await env();
    const { text, exp } = await scrape(e, 30200);
    const line = text.split('\n').find((l) => l.startsWith('sglang:num_running_reqs{'));
    expect(line).toMatch(
      /^sglang:num_running_reqs\{engine_type="decode",model_name="Qwen\/Qwen3-32B",moe_ep_rank="0",pp_rank="0",tp_rank="0"\} \d+\.0$/,
    );
    const after = text.split('# TYPE sglang:e2e_request_latency_seconds histogram\n')[1];
    expect(after.split('\n')[0]).toMatch(/^sglang:e2e_request_latency_seconds_sum\{/);
    const retracted = fam(exp, 'sglang:num_retracted_reqs')?.samples[0];
    expect(retracted?.labels.pid).toMatch(/^\d+$/);
    for (const l of text.split('\n').filter((x) => x.includes('{'))) {
      const keys = [...l.slice(l.indexOf('{') + 1, l.lastIndexOf('}')).matchAll(/([a-z_]+)="/g)].map(
        (m) => m[1],
      );
      expect(keys).toEqual([...keys].sort());
    }
    const counters = exp.families.filter((f) => f.type === 'counter').map((f) => f.name);
    expect(counters).toContain('sglang:prompt_tokens_total');
    expect(text).not.toMatch(/_created/);
  });

  it('counters and histogram counts only grow between scrapes, and _count equals the +Inf bucket', async () => {
    const e = await env();
    const a = (await scrape(e, 30200)).exp;
    e.clock.advance(60_000);
    const b = (await scrape(e, 30200)).exp;
    for (const n of [
      'sglang:generation_tokens_total',
      'sglang:num_requests_total',
      'sglang:inter_token_latency_seconds_count',
    ]) {
      expect(sampleValues(b, n)[0]).toBeGreaterThan(sampleValues(a, n)[0]);
    }
    const itl = fam(b, 'sglang:inter_token_latency_seconds');
    const inf = itl?.samples.find((s) => s.labels.le === '+Inf')?.value;
    expect(inf).toBe(sampleValues(b, 'sglang:inter_token_latency_seconds_count')[0]);
  });

  it('/server_info and /get_server_info carry max_total_num_tokens at the top level; /health is 200', async () => {
    const e = await env();
    for (const path of ['/server_info', '/get_server_info']) {
      const r = await get(e, 30200, path);
      expect(r.status).toBe(200);
      expect((JSON.parse(r.body.toString()) as { max_total_num_tokens: number }).max_total_num_tokens).toBe(
        2_580_000,
      );
    }
    const h = await get(e, 30200, '/health');
    expect(h.status).toBe(200);
    expect((await get(e, 30200, '/nope')).status).toBe(404);
  });
});

describe('era E3 (@00eef542)', () => {
  it('has full_token_usage and capacity, no kv_* gauges, the old prealloc queue name and kv_transfer_* histograms', async () => {
    const e = await env({ era: 'E3' });
    const p = await scrape(e, 30100);
    const d = await scrape(e, 30200);
    expect(names(d.exp).has('sglang:kv_used_tokens')).toBe(false);
    expect(fam(d.exp, 'sglang:full_token_usage')?.type).toBe('gauge');
    const ratio = sampleValues(d.exp, 'sglang:full_token_usage')[0];
    const usedTokens = sampleValues(d.exp, 'sglang:num_used_tokens')[0];
    expect(ratio).toBeCloseTo(usedTokens / 2_580_000, 6);
    expect(names(p.exp).has('sglang:num_prefill_prealloc_queue_reqs')).toBe(true);
    expect(names(p.exp).has('sglang:num_prefill_bootstrap_queue_reqs')).toBe(false);
    expect(fam(p.exp, 'sglang:kv_transfer_latency_ms')?.type).toBe('histogram');
    expect(fam(d.exp, 'sglang:prompt_tokens_total')?.samples[0].labels).toEqual({
      model_name: 'Qwen/Qwen3-32B',
    });
  });
});

describe('era E2 (early 2026, @44cedc2b)', () => {
  it('has the capacity gauge and five kv_transfer_* gauges but no full_token_usage', async () => {
    const e = await env({ era: 'E2' });
    const p = await scrape(e, 30100);
    const d = await scrape(e, 30200);
    expect(names(d.exp).has('sglang:full_token_usage')).toBe(false);
    expect(names(d.exp).has('sglang:kv_used_tokens')).toBe(false);
    expect(sampleValues(d.exp, 'sglang:max_total_num_tokens')).toEqual([2_580_000]);
    for (const n of ['speed_gb_s', 'latency_ms', 'bootstrap_ms', 'alloc_ms', 'total_mb'])
      expect(fam(p.exp, `sglang:kv_transfer_${n}`)?.type).toBe('gauge');
    expect(fam(d.exp, 'sglang:num_used_tokens')?.samples[0].labels).toEqual({
      engine_type: 'decode',
      model_name: 'Qwen/Qwen3-32B',
      moe_ep_rank: '0',
      pp_rank: '0',
      tp_rank: '0',
    });
    expect(names(d.exp).has('sglang:engine_startup_time')).toBe(true);
  });
});

describe('era E1 (autumn 2025, @93d04878)', () => {
  it('has only token_usage and num_used_tokens: capacity must come from /get_server_info', async () => {
    const e = await env({ era: 'E1' });
    const d = await scrape(e, 30200);
    const n = names(d.exp);
    expect(n.has('sglang:max_total_num_tokens')).toBe(false);
    expect(n.has('sglang:full_token_usage')).toBe(false);
    expect(n.has('sglang:kv_used_tokens')).toBe(false);
    const usage = sampleValues(d.exp, 'sglang:token_usage')[0];
    expect(usage).toBeCloseTo(sampleValues(d.exp, 'sglang:num_used_tokens')[0] / 2_580_000, 9);
    expect(fam(d.exp, 'sglang:num_used_tokens')?.samples[0].labels).toEqual({
      engine_type: 'unified',
      model_name: 'Qwen/Qwen3-32B',
      pp_rank: '0',
      tp_rank: '0',
    });
    expect(fam(d.exp, 'sglang:generation_tokens_total')?.samples[0].labels).toEqual({
      model_name: 'Qwen/Qwen3-32B',
    });
    expect((await get(e, 30200, '/server_info')).status).toBe(404);
    const info = await get(e, 30200, '/get_server_info');
    expect((JSON.parse(info.body.toString()) as { max_total_num_tokens: number }).max_total_num_tokens).toBe(
      2_580_000,
    );
    // Before PR #31495 the prefill server always reported 0 running requests.
    const p = await scrape(e, 30100);
    expect(sampleValues(p.exp, 'sglang:num_running_reqs')).toEqual([0]);
    expect(fam(p.exp, 'sglang:kv_transfer_latency_ms')?.type).toBe('gauge');
    expect(names(p.exp).has('sglang:kv_transfer_total_mb')).toBe(false);
  });
});

describe('data-parallel ranks and disabled metrics', () => {
  it('emits one series per dp_rank on decode; the tokens sum to the truth', async () => {
    const e = await env({ dpRanks: 4 });
    const d = await scrape(e, 30200);
    const series = fam(d.exp, 'sglang:num_used_tokens')?.samples ?? [];
    expect(series.map((s) => s.labels.dp_rank)).toEqual(['0', '1', '2', '3']);
    expect(series.reduce((a, s) => a + s.value, 0)).toBe(e.sim.snapshot().kv.decode?.used);
    expect(sampleValues(d.exp, 'sglang:max_total_num_tokens')).toEqual([645_000, 645_000, 645_000, 645_000]);
    const exec = parseShow(
      (await emulateCommand(e.sim, 'systemctl show sglang-decode -p ExecStart', 'operator')).stdout,
    )[0];
    expect(exec.ExecStart).toContain('--dp-size 4 --enable-dp-attention');
  });

  it('without --enable-metrics /metrics is 404 and ExecStart lacks the flag', async () => {
    const e = await env({ metricsDisabled: ['prefill'] });
    const r = await get(e, 30100, '/metrics');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body.toString())).toEqual({ detail: 'Not Found' });
    expect((await get(e, 30200, '/metrics')).status).toBe(200);
    const show = parseShow(
      (await emulateCommand(e.sim, 'systemctl show sglang-prefill sglang-decode -p ExecStart', 'operator'))
        .stdout,
    );
    expect(show[0].ExecStart).not.toContain('--enable-metrics');
    expect(show[1].ExecStart).toContain('--enable-metrics');
  });
});

describe('router', () => {
  it("'smg-1.5' (default): smg_* names, worker health per URL, readiness and /workers as the gateway answers", async () => {
    const e = await env();
    const { exp, text } = await scrape(e, 29001);
    expect(fam(exp, 'smg_worker_health')?.samples.map((s) => [s.labels.worker, s.value])).toEqual([
      ['http://127.0.0.1:30100', 1],
      ['http://127.0.0.1:30200', 1],
    ]);
    expect(fam(exp, 'smg_http_responses_total')?.samples.every((s) => 'path' in s.labels)).toBe(true);
    expect(fam(exp, 'smg_router_request_duration_seconds')?.type).toBe('histogram');
    expect(fam(exp, 'smg_worker_requests_active')?.type).toBe('gauge');
    expect(text).not.toMatch(/sgl_router_|smg_engine_/);
    expect((await get(e, 29001, '/other')).status).toBe(404);
    const ready = await get(e, 30001, '/readiness');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body.toString())).toEqual({
      status: 'ready',
      healthy_workers: 2,
      total_workers: 2,
    });
    for (const path of ['/health', '/liveness'])
      expect((await get(e, 30001, path)).body.toString()).toBe('OK');
    const workers = JSON.parse((await get(e, 30001, '/workers')).body.toString()) as {
      workers: Array<{ id: string; url: string; worker_type: string; is_healthy: boolean; status: string }>;
      total: number;
      stats: Record<string, number>;
    };
    expect(workers.workers.map((w) => [w.worker_type, w.is_healthy, w.status])).toEqual([
      ['prefill', true, 'ready'],
      ['decode', true, 'ready'],
    ]);
    for (const w of workers.workers)
      expect(w.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(workers.total).toBe(2);
    expect(workers.stats).toEqual({ prefill_count: 1, decode_count: 1, regular_count: 0 });
  });

  it("'smg-0.3': smg_http_responses_total counts every path together (status_code, error_code only)", async () => {
    const e = await env({ routerEra: 'smg-0.3' });
    await get(e, 30001, '/health');
    const { exp } = await scrape(e, 29001);
    const labels = fam(exp, 'smg_http_responses_total')?.samples.map((s) => Object.keys(s.labels).sort());
    expect(labels?.length).toBeGreaterThan(0);
    for (const l of labels ?? []) expect(l).toEqual(['error_code', 'status_code']);
  });

  it("'smg-engine-metrics': smg_engine_* gauges per worker and DP rank, roles on the pd gauges", async () => {
    const e = await env({ routerEra: 'smg-engine-metrics' });
    const { exp } = await scrape(e, 29001);
    expect(fam(exp, 'smg_engine_running_requests')?.samples.map((s) => s.labels)).toEqual([
      { worker: 'http://127.0.0.1:30100', model: 'Qwen/Qwen3-32B', dp_rank: '0' },
      { worker: 'http://127.0.0.1:30200', model: 'Qwen/Qwen3-32B', dp_rank: '0' },
    ]);
    expect(fam(exp, 'smg_engine_pd_prefill_queue_reqs')?.samples.map((s) => s.labels.role)).toEqual([
      'prefill',
      'decode',
    ]);
    const exec = parseShow(
      (await emulateCommand(e.sim, 'systemctl show sglang-router -p ExecStart', 'operator')).stdout,
    )[0];
    expect(exec.ExecStart).toContain('--engine-metrics');
  });

  it("'sglang-router-0.2.4': the PD router's sgl_router_pd_* names and none of the regular router's", async () => {
    const e = await env({ routerEra: 'sglang-router-0.2.4' });
    const { exp, text } = await scrape(e, 29001);
    expect(fam(exp, 'sgl_router_worker_health')?.samples).toHaveLength(2);
    expect(fam(exp, 'sgl_router_pd_requests_total')?.samples[0].labels).toEqual({
      route: '/v1/chat/completions',
    });
    expect(fam(exp, 'sgl_router_pd_request_duration_seconds')?.type).toBe('histogram');
    for (const n of [
      'sgl_router_requests_total',
      'sgl_router_request_errors_total',
      'sgl_router_running_requests',
      'sgl_router_active_workers',
      'sgl_router_request_duration_seconds',
    ])
      expect(names(exp).has(n)).toBe(false);
    expect(text).not.toMatch(/smg_/);
    expect((await get(e, 30001, '/health')).body.toString()).toBe('OK');
    const workers = JSON.parse((await get(e, 30001, '/workers')).body.toString()) as {
      workers: Array<Record<string, unknown>>;
      stats: Record<string, number>;
    };
    expect(workers.stats).toEqual({ prefill_count: 1, decode_count: 1, regular_count: 0 });
    expect(workers.workers[0]).not.toHaveProperty('status');
  });

  it('/readiness is 503 with the reason while the decode worker is out of the router', async () => {
    const e = await env();
    e.sim.stopUnit('decode');
    e.clock.advance(45_000);
    const r = await get(e, 30001, '/readiness');
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body.toString())).toEqual({
      status: 'not ready',
      reason: 'insufficient healthy workers',
    });
  });
});

describe('/metrics faults', () => {
  it('metrics-500 answers 500 on the chosen role only', async () => {
    const e = await env();
    e.sim.setFault('metrics-500', true, 'decode');
    expect((await get(e, 30200, '/metrics')).status).toBe(500);
    expect((await get(e, 30100, '/metrics')).status).toBe(200);
    e.sim.setFault('metrics-500', false);
    expect((await get(e, 30200, '/metrics')).status).toBe(200);
  });

  it('metrics-hang never answers', async () => {
    const e = await env();
    e.sim.setFault('metrics-hang', true, 'router');
    await expect(get(e, 29001, '/metrics', { timeoutMs: 300 })).rejects.toThrow(/timeout after 300 ms/);
  });

  it('metrics-trickle sends one byte per simulated second', async () => {
    const e = await env();
    e.sim.setFault('metrics-trickle', true, 'prefill');
    let got = 0;
    let status = 0;
    const req = http.get(
      { host: '127.0.0.1', port: e.ports[30100], path: '/metrics', agent: false },
      (res) => {
        status = res.statusCode ?? 0;
        res.on('data', (d: Buffer) => (got += d.length));
      },
    );
    req.on('error', () => undefined);
    await waitFor(() => status === 200 && got > 0, 3000, 'the headers and the first byte');
    const start = got;
    for (let i = 1; i <= 5; i++) {
      e.clock.advance(1000);
      await waitFor(() => got - start >= i, 3000, `byte ${i} of the trickle`);
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(got - start).toBe(5);
    req.destroy();
  });

  it('metrics-huge sends a 50 MB body', async () => {
    const e = await env();
    e.sim.setFault('metrics-huge', true, 'decode');
    const r = await get(e, 30200, '/metrics', { timeoutMs: 15_000 });
    expect(r.status).toBe(200);
    expect(r.body.length).toBeGreaterThanOrEqual(50 * 1024 * 1024);
    expect(r.body.subarray(0, 200).toString()).toMatch(/^# HELP sglang:/);
  });

  it('metrics-garbage alternates random bytes and an HTML error page', async () => {
    const e = await env();
    e.sim.setFault('metrics-garbage', true, 'decode');
    const a = await get(e, 30200, '/metrics');
    const b = await get(e, 30200, '/metrics');
    expect(() => parseExposition(a.body.toString('utf8'), 'prometheus')).toThrow();
    expect(b.type).toBe('text/html');
    expect(b.body.toString()).toMatch(/<title>502 Bad Gateway<\/title>/);
  });
});

describe('eras are all well-formed', () => {
  it.each(DEMO_ERAS.map((era, i) => [era, ROUTER_ERAS[i]] as const))(
    '%s and router %s parse on both servers and the router',
    async (era, routerEra) => {
      const e = await env({ era, routerEra });
      for (const port of [30100, 30200, 29001]) {
        const { exp } = await scrape(e, port);
        expect(exp.sampleCount).toBeGreaterThan(10);
      }
    },
  );
});

describe('listenHttp', () => {
  it('exposes the simulated ports on real loopback ports; a stopped server resets connections', async () => {
    const { startDemoHost } = await import('../../src/main/demo');
    const clock = manualClock(T0);
    const host = await startDemoHost({ clock, historyMs: 5 * 60_000, listenHttp: true });
    try {
      expect(Object.keys(host.httpPorts).map(Number).sort()).toEqual([29001, 30001, 30100, 30200]);
      expect(host.sim.httpPorts).toEqual(host.httpPorts);
      const e: Env = { sim: host.sim, clock, ports: host.httpPorts, servers: new DemoHttpServers(host.sim) };
      expect((await get(e, 30200, '/health')).status).toBe(200);
      host.sim.stopUnit('decode');
      clock.advance(10_000);
      await expect(get(e, 30200, '/health')).rejects.toThrow(/ECONNRESET|socket hang up/);
      expect((await get(e, 30100, '/health')).status).toBe(200);
    } finally {
      await host.stop();
    }
  });
});
