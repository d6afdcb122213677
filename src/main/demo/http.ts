// A simulated host's HTTP endpoints: its SGLang servers (the single host: prefill 30100, decode 30200) and
// its router's API (30001) and Prometheus listener (29001). One in-process http.Server per port of the
// host; connections arrive as forwarded SSH channels (`server.emit('connection', channel)`) or, with
// listenHttp, on real loopback ports. /metrics faults (500, hang, trickle, huge, garbage) are applied here.
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { RouterProcess, ServerProcess } from './processes';
import { renderRouterMetrics } from './router-metrics';
import { renderServerMetrics } from './sglang-metrics';
import { isSmgEra, type DemoEra } from './eras';
import type { DemoSimulation, UnitRuntime } from './simulation';
import { asMachine, type DemoMachine } from './machine';
import { MODEL_NAME, MODEL_PATH, PORTS, type DemoRole, type ServerSpec } from './units';
import { Rng } from './rng';

export const DEMO_HTTP_PORTS = [PORTS.prefill, PORTS.decode, PORTS.routerApi, PORTS.routerMetrics] as const;
export type DemoHttpPort = (typeof DEMO_HTTP_PORTS)[number];

const PROM_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const HUGE_BYTES = 50 * 1024 * 1024;
/** The sglang version string /get_server_info reports per era. */
const SERVER_VERSION: Record<DemoEra, string> = { E1: '0.5.3', E2: '0.5.8', E3: '0.5.10', E4: '0.5.12' };

function roleOfPort(port: number): DemoRole | null {
  if (port === PORTS.prefill) return 'prefill';
  if (port === PORTS.decode) return 'decode';
  if (port === PORTS.routerApi || port === PORTS.routerMetrics) return 'router';
  return null;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function text(
  res: http.ServerResponse,
  status: number,
  body: string,
  type = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Answers one HTTP request to a simulated port. The caller has already checked `sim.portOpen(port)`;
 * a request to a port nothing listens on has its connection reset.
 */
export function handleHttp(
  target: DemoSimulation | DemoMachine,
  port: number,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const sim = asMachine(target);
  sim.advance();
  const u = sim.listenerOf(port);
  if (!u || !sim.portOpen(port)) {
    req.socket.destroy();
    return;
  }
  const path = (req.url ?? '/').split('?')[0];
  const method = req.method ?? 'GET';
  if (u.def.router) {
    const r = u.router;
    if (!r) return void res.destroy();
    if (u.def.router.metricsPort === port) return routerMetricsPort(sim, u, r, { path, method, res });
    return routerApi(sim, u, r, { path, method, res });
  }
  const p = u.server;
  if (!p || !u.def.server) {
    req.socket.destroy();
    return;
  }
  serverApi(sim, u, p, path, method, req, res);
}

function serverApi(
  sim: DemoMachine,
  u: UnitRuntime,
  p: ServerProcess,
  path: string,
  method: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const key = u.def.key;
  const spec = u.def.server as ServerSpec;
  // E1 (autumn 2025) had only the get_-prefixed routes.
  const newer = sim.era !== 'E1';
  const logged = (status: number): void => sim.logHttpRequest(key, method, req.url ?? path, status);
  const get = method === 'GET' || method === 'HEAD';
  if (path === '/metrics' || path === '/metrics/') {
    if (!spec.metrics) {
      logged(404);
      return json(res, 404, { detail: 'Not Found' });
    }
    if (!get) {
      logged(405);
      return json(res, 405, { detail: 'Method Not Allowed' });
    }
    return serveMetrics(sim, key, () => renderServerMetrics(p, sim.era, p.dpRanks), res, logged, {
      acceptEncoding: String(req.headers['accept-encoding'] ?? ''),
    });
  }
  if (path === '/health' || path === '/health_generate') {
    const h = sim.serverHealth(key);
    const status = h === 'ok' ? 200 : 503;
    logged(status);
    res.writeHead(status, { 'content-length': 0 });
    res.end();
    return;
  }
  if (path === '/get_server_info' || (path === '/server_info' && newer)) {
    logged(200);
    return json(res, 200, serverInfo(sim, spec, p));
  }
  if (path === '/get_model_info' || (path === '/model_info' && newer)) {
    logged(200);
    return json(res, 200, {
      model_path: MODEL_PATH,
      tokenizer_path: MODEL_PATH,
      is_generation: true,
      preferred_sampling_params: null,
      weight_version: 'default',
      has_image_understanding: false,
      has_audio_understanding: false,
      model_type: 'qwen3',
      architectures: ['Qwen3ForCausalLM'],
    });
  }
  if (path === '/v1/models') {
    logged(200);
    return json(res, 200, {
      object: 'list',
      data: [
        {
          id: MODEL_NAME,
          object: 'model',
          created: Math.floor(p.startedAt / 1000),
          owned_by: 'sglang',
          root: MODEL_NAME,
          max_model_len: 524_288,
        },
      ],
    });
  }
  if (path === '/v1/loads' && sim.era === 'E4') {
    logged(200);
    return json(res, 200, loads(sim, spec, p));
  }
  if (path === '/get_load') {
    logged(200);
    return json(
      res,
      200,
      p.ranks.map((r, i) => ({
        dp_rank: i,
        num_reqs: r.running + r.queue,
        num_waiting_reqs: r.queue,
        num_tokens: r.usedTokens,
        num_pending_tokens: 0,
        ts_tic: sim.now / 1000,
      })),
    );
  }
  if (path === '/generate' || path.startsWith('/v1/')) {
    logged(503);
    return json(res, 503, {
      object: 'error',
      message: 'This demo host simulates load; it does not generate text.',
      type: 'ServiceUnavailable',
      code: 503,
    });
  }
  logged(404);
  json(res, 404, { detail: 'Not Found' });
}

function serverInfo(sim: DemoMachine, spec: ServerSpec, p: ServerProcess): Record<string, unknown> {
  const role = spec.role;
  // Like SGLang: ServerArgs fields merged with scheduler_info at the top level, plus internal_states.
  return {
    model_path: MODEL_PATH,
    tokenizer_path: MODEL_PATH,
    served_model_name: MODEL_NAME,
    host: spec.listenHost,
    port: spec.port,
    tp_size: spec.tp,
    dp_size: p.dpRanks,
    enable_dp_attention: p.dpRanks > 1,
    base_gpu_id: spec.baseGpu,
    ...(spec.node
      ? { nnodes: spec.node.nnodes, node_rank: spec.node.rank, dist_init_addr: spec.node.distInitAddr }
      : {}),
    mem_fraction_static: 0.88,
    chunked_prefill_size: 8192,
    max_prefill_tokens: 16384,
    context_length: null,
    page_size: 1,
    enable_metrics: spec.metrics,
    decode_log_interval: 40,
    disaggregation_mode: role,
    disaggregation_transfer_backend: 'mooncake',
    disaggregation_bootstrap_port: spec.bootstrapPort ?? PORTS.bootstrap,
    disaggregation_ib_device: 'mlx5_0',
    max_total_num_tokens: spec.capacity,
    max_req_input_len: 524_282,
    max_running_requests: role === 'decode' ? 256 : 32,
    internal_states: p.ranks.map(() => ({
      last_gen_throughput: Math.round((p.genThroughput / p.dpRanks) * 100) / 100,
      memory_usage: {
        weight: 15.66,
        kvcache: role === 'decode' ? 52.68 : 9.14,
        token_capacity: Math.floor(p.capacity / p.dpRanks),
        graph: role === 'decode' ? 1.52 : 0,
      },
      effective_max_running_requests_per_dp: role === 'decode' ? Math.floor(256 / p.dpRanks) : 32,
    })),
    version: SERVER_VERSION[sim.era],
  };
}

function loads(sim: DemoMachine, spec: ServerSpec, p: ServerProcess): Record<string, unknown> {
  return {
    timestamp: sim.now / 1000,
    version: '0.5.12',
    accelerator: 'cuda',
    num_accelerators: spec.tp,
    loads: p.ranks.map((r, i) => ({
      dp_rank: i,
      num_running_reqs: r.running,
      num_waiting_reqs: r.queue,
      num_used_tokens: r.usedTokens,
      num_total_tokens: r.capacity,
      max_total_num_tokens: r.capacity,
      token_usage: Math.round((r.usedTokens / r.capacity) * 100) / 100,
      gen_throughput: Math.round((p.genThroughput / p.dpRanks) * 100) / 100,
      cache_hit_rate: p.role === 'prefill' ? Math.round(p.cacheHitRate * 1000) / 1000 : 0,
      utilization: Math.round((r.usedTokens / r.capacity) * 1000) / 1000,
      max_running_requests: p.role === 'decode' ? Math.floor(256 / p.dpRanks) : 32,
    })),
  };
}

interface RouterRequest {
  path: string;
  method: string;
  res: http.ServerResponse;
}

function routerApi(sim: DemoMachine, u: UnitRuntime, r: RouterProcess, req: RouterRequest): void {
  const { path, method, res } = req;
  const smg = isSmgEra(sim.routerEra);
  r.countRequest(method, path);
  const reply = (status: number, body: unknown, errorCode = ''): void => {
    r.countResponse(path, status, errorCode);
    r.observeHttp(method, path, 0.0004);
    if (typeof body === 'string') text(res, status, body);
    else json(res, status, body);
  };
  const healthy = r.workers.filter((w) => w.health === 'healthy').length;
  switch (path) {
    // Both router generations answer the liveness probes with plain text.
    case '/health':
    case '/liveness':
      return reply(200, 'OK');
    case '/readiness':
      if (r.ready)
        return reply(200, { status: 'ready', healthy_workers: healthy, total_workers: r.workers.length });
      return reply(503, { status: 'not ready', reason: 'insufficient healthy workers' });
    case '/workers':
      if (method !== 'GET')
        return reply(
          405,
          smg ? { error: 'Method Not Allowed', code: 'METHOD_NOT_ALLOWED' } : 'Method Not Allowed',
        );
      // sglang-router 0.2.0 … smg HEAD: {workers, total, stats:{prefill_count, decode_count, regular_count}}.
      return reply(200, {
        workers: r.workers.map((w) => ({
          id: w.id,
          model_id: MODEL_NAME,
          url: w.url,
          worker_type: w.role,
          connection_mode: 'http',
          runtime_type: 'sglang',
          priority: 50,
          cost: 1.0,
          ...(bootstrapOf(u, w.url) !== undefined ? { bootstrap_port: bootstrapOf(u, w.url) } : {}),
          is_healthy: w.health === 'healthy',
          // The lifecycle status is an smg addition, served next to is_healthy.
          ...(smg
            ? { status: w.health === 'healthy' ? 'ready' : w.health === 'pending' ? 'pending' : 'not_ready' }
            : {}),
          load: w.active,
        })),
        total: r.workers.length,
        stats: {
          prefill_count: r.workers.filter((w) => w.role === 'prefill').length,
          decode_count: r.workers.filter((w) => w.role === 'decode').length,
          regular_count: 0,
        },
      });
    case '/v1/models':
      return reply(200, {
        object: 'list',
        data: [
          { id: MODEL_NAME, object: 'model', created: Math.floor(r.startedAt / 1000), owned_by: 'sglang' },
        ],
      });
    case '/get_server_info':
    case '/server_info': {
      // The router forwards to a decode worker it holds healthy (the first that answers).
      for (const w of r.workers) {
        if (w.role !== 'decode') continue;
        const d = sim.world.unitOf(w.unit);
        if (!d.server || !d.def.server || sim.serverHealth(w.unit) === 'refused') continue;
        return reply(200, serverInfo(sim, d.def.server, d.server));
      }
      return reply(503, { error: 'No available workers', code: 'no_workers' }, 'no_workers');
    }
    default:
      return reply(404, smg ? { error: 'Not Found', code: 'NOT_FOUND' } : 'Not Found');
  }
}

/** The bootstrap port the router's ExecStart gives a prefill worker. */
function bootstrapOf(u: UnitRuntime, url: string): number | undefined {
  return u.def.router?.workers.find((w) => w.url === url)?.bootstrapPort;
}

function routerMetricsPort(sim: DemoMachine, u: UnitRuntime, r: RouterProcess, req: RouterRequest): void {
  const { path, method, res } = req;
  // smg HEAD serves only GET /metrics on this listener (metrics_server.rs); when that began is not in the
  // inventory, so only the ≥ 1.5 eras do it. sglang-router's exporter answered any path.
  if (
    sim.routerEra !== 'sglang-router-0.2.4' &&
    sim.routerEra !== 'smg-0.3' &&
    (path !== '/metrics' || method !== 'GET')
  ) {
    res.writeHead(404, { 'content-length': 0 });
    res.end();
    return;
  }
  serveMetrics(
    sim,
    u.def.key,
    () => renderRouterMetrics(r, sim.routerEra, (w) => sim.world.unitOf(w.unit).server),
    res,
    () => undefined,
  );
}

/**
 * Writes a /metrics body, or misbehaves the way the active fault for this role says. `gzip` is given for an
 * SGLang server: prometheus_client's ASGI app (which SGLang mounts at /metrics) compresses its answer when the
 * request accepts gzip; the router's exporter never does.
 */
function serveMetrics(
  sim: DemoMachine,
  unitKey: string,
  render: () => string,
  res: http.ServerResponse,
  logged: (status: number) => void,
  gzip?: { acceptEncoding: string },
): void {
  if (sim.isFaultOn('metrics-hang', unitKey)) return; // headers never come; the connection stays open
  if (sim.isFaultOn('metrics-trickle', unitKey)) {
    logged(200);
    res.writeHead(200, { 'content-type': PROM_CONTENT_TYPE });
    res.flushHeaders();
    trickle(sim, Buffer.from(render(), 'utf8'), res);
    return;
  }
  if (sim.isFaultOn('metrics-huge', unitKey)) {
    logged(200);
    res.writeHead(200, { 'content-type': PROM_CONTENT_TYPE });
    huge(render(), res);
    return;
  }
  if (sim.isFaultOn('metrics-500', unitKey)) {
    logged(500);
    return text(res, 500, 'Internal Server Error');
  }
  if (sim.isFaultOn('metrics-garbage', unitKey)) {
    logged(200);
    const n = sim.world.garbageCounter++;
    if (n % 2 === 0) {
      const rng = new Rng(sim.seed ^ n);
      const bytes = Buffer.alloc(64 * 1024);
      for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(0, 255);
      res.writeHead(200, { 'content-type': PROM_CONTENT_TYPE, 'content-length': bytes.length });
      res.end(bytes);
    } else {
      text(
        res,
        200,
        '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n',
        'text/html',
      );
    }
    return;
  }
  logged(200);
  if (gzip && gzipAccepted(gzip.acceptEncoding)) {
    // Python's gzip.compress uses level 9; level 1 keeps the simulation cheap and decodes the same.
    const body = gzipSync(render(), { level: 1 });
    res.writeHead(200, {
      'content-type': PROM_CONTENT_TYPE,
      'content-encoding': 'gzip',
      'content-length': body.length,
    });
    res.end(body);
    return;
  }
  text(res, 200, render(), PROM_CONTENT_TYPE);
}

/** prometheus_client's rule: one of the comma-separated codings, parameters after ";" dropped, is gzip. */
export function gzipAccepted(header: string): boolean {
  return header.split(',').some((coding) => coding.split(';')[0].trim().toLowerCase() === 'gzip');
}

/** One byte per simulated second, until the body ends or the client goes away. */
function trickle(sim: DemoMachine, body: Buffer, res: http.ServerResponse): void {
  let i = 0;
  const tick = (): void => {
    if (res.destroyed || res.writableEnded) return;
    if (i >= body.length) {
      res.end();
      return;
    }
    res.write(body.subarray(i, i + 1));
    i++;
    sim.clock.setTimeout(tick, 1000);
  };
  tick();
}

/** A valid-looking exposition padded to 50 MB, written with backpressure. */
function huge(head: string, res: http.ServerResponse): void {
  let written = 0;
  let idx = 0;
  const first = Buffer.from(
    `${head}# HELP sglang:demo_padding Padding series.\n# TYPE sglang:demo_padding gauge\n`,
    'utf8',
  );
  const pump = (): void => {
    if (written === 0) {
      written += first.length;
      if (!res.write(first)) return void res.once('drain', pump);
    }
    while (written < HUGE_BYTES) {
      if (res.destroyed) return;
      let chunk = '';
      while (chunk.length < 64 * 1024)
        chunk += `sglang:demo_padding{idx="${idx++}",model_name="${MODEL_NAME}"} 1.0\n`;
      written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

/** In-process HTTP servers for the simulated ports, fed by forwarded SSH channels or real loopback sockets. */
export class DemoHttpServers {
  private readonly servers = new Map<number, http.Server>();
  private readonly real = new Map<number, net.Server>();
  private readonly sockets = new Set<Duplex>();

  private readonly sim: DemoMachine;

  constructor(target: DemoSimulation | DemoMachine) {
    const sim = (this.sim = asMachine(target));
    for (const port of sim.httpPorts()) {
      const srv = http.createServer((req, res) => handleHttp(sim, port, req, res));
      // Forwarded channels are not net.Sockets; without a keep-alive timer they stay open until the client
      // closes them, which is what a polling client over one SSH connection wants.
      srv.keepAliveTimeout = 0;
      this.servers.set(port, srv);
    }
  }

  /** Does a process of this host listen on the port right now? */
  isOpen(port: number): boolean {
    return this.servers.has(port) && this.sim.portOpen(port);
  }

  /** Hands a connection (a forwarded channel) to the simulated port's server. False if nothing listens there. */
  connect(port: number, stream: Duplex): boolean {
    const srv = this.servers.get(port);
    if (!srv || !this.sim.portOpen(port)) return false;
    this.track(stream);
    srv.emit('connection', stream);
    return true;
  }

  private track(stream: Duplex): void {
    this.sockets.add(stream);
    stream.once('close', () => this.sockets.delete(stream));
  }

  /** Listens every simulated port on a real ephemeral port of `address`; returns simulated → real. */
  async listen(address = '127.0.0.1'): Promise<Record<number, number>> {
    const map: Record<number, number> = {};
    for (const port of this.servers.keys()) {
      const srv = this.servers.get(port);
      if (!srv) continue;
      const listener = net.createServer((sock) => {
        // Like a real closed port as closely as a bound socket allows: the connection is reset at once.
        if (!this.sim.portOpen(port)) return void sock.resetAndDestroy();
        this.track(sock);
        srv.emit('connection', sock);
      });
      await new Promise<void>((resolve, reject) => {
        listener.once('error', reject);
        listener.listen(0, address, () => resolve());
      });
      const addr = listener.address();
      if (!addr || typeof addr === 'string')
        throw new Error(`demo host: could not read the address of the listener for port ${port}`);
      map[port] = addr.port;
      this.real.set(port, listener);
    }
    return map;
  }

  /** Cuts every HTTP connection (used when the host reboots). */
  destroyAll(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    this.destroyAll();
    await Promise.all(
      [...this.real.values()].map((l) => new Promise<void>((resolve) => l.close(() => resolve()))),
    );
    for (const srv of this.servers.values()) srv.closeAllConnections();
  }
}

export { roleOfPort };
