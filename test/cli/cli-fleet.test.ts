// `pd-console status --host gpu-a` on a two-host deployment reached the real way: two OpenSSH sshds (gpu-a on
// 127.0.0.1, gpu-b on its own address 127.0.0.3), an ~/.ssh/config with their aliases, systemd answered per host
// through the exec bridge (test/discovery/fleet-units.ts), and real HTTP servers for the router's /workers and
// each worker's /health and Prometheus /metrics, reached through each host's own SSH forwarding. The router
// names gpu-b's workers by address only; the CLI must find gpu-b through the alias whose HostName is that address.
import http from 'node:http';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaptured, type CliRun } from './run-on-app';
import { keygen, startSshd, sshdUnavailableReason, type Sshd } from '../fixtures/sshd';
import { answerSystemctl, router, server, type FakeUnit } from '../discovery/fleet-units';
import { createApp, type App } from '../../src/main/compose';
import type { Verdict } from '../../src/shared/contract';

const skip = sshdUnavailableReason();
if (skip) console.warn(`[skipped] fleet status against real sshd hosts: ${skip}`);

const B_ADDR = '127.0.0.3';
const C_ADDR = '127.0.0.4';
const SPAN = `--nnodes 2 --dist-init-addr ${B_ADDR}:5757 --tp-size 4`;

function metricsText(engine: string, used: number, capacity: number): string {
  const l = `model_name="qwen3-32b",engine_type="${engine}",tp_rank="0",pp_rank="0",moe_ep_rank="0"`;
  return [
    '# HELP sglang:num_used_tokens The number of used tokens.',
    '# TYPE sglang:num_used_tokens gauge',
    `sglang:num_used_tokens{${l}} ${used}`,
    '# HELP sglang:max_total_num_tokens Maximum total number of tokens in the KV cache pool.',
    '# TYPE sglang:max_total_num_tokens gauge',
    `sglang:max_total_num_tokens{${l}} ${capacity}`,
    '# HELP sglang:num_running_reqs The number of running requests.',
    '# TYPE sglang:num_running_reqs gauge',
    `sglang:num_running_reqs{${l}} 3`,
    '',
  ].join('\n');
}

async function serve(routes: Record<string, () => { status?: number; type?: string; body: string }>) {
  const srv = http.createServer((req, res) => {
    const r = routes[req.url?.split('?')[0] ?? ''];
    if (!r) return void res.writeHead(404).end('not found');
    const a = r();
    res.writeHead(a.status ?? 200, { 'content-type': a.type ?? 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(a.body);
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { srv, port: (srv.address() as AddressInfo).port };
}

describe.skipIf(skip)('pd-console status across two real sshd hosts', () => {
  let root: string;
  let home: string;
  let homeNoB: string;
  let homeNoC: string;
  let a: Sshd;
  let b: Sshd;
  let c: Sshd;
  const servers: http.Server[] = [];
  const ports: Record<string, number> = {};

  const cli = (args: string[], sshHome: string): Promise<CliRun> => cliCaptured(args, { sshHome });
  const accepted = (s: Sshd) => (s.log().match(/Accepted publickey/g) ?? []).length;

  beforeAll(async () => {
    const kv: Record<string, [string, number, number]> = {
      prefill: ['prefill', 2048, 200_000],
      d0: ['decode', 61_234, 100_000],
      d1: ['decode', 5_000, 50_000],
      d2: ['decode', 30_000, 40_000],
    };
    for (const [name, [engine, used, cap]] of Object.entries(kv)) {
      const s = await serve({
        '/health': () => ({ body: '' }),
        '/metrics': () => ({ body: metricsText(engine, used, cap) }),
      });
      servers.push(s.srv);
      ports[name] = s.port;
    }
    const decodeUrls = [ports.d0, ports.d1, ports.d2].map((p) => `http://${B_ADDR}:${p}`);
    const workersBody = JSON.stringify({
      workers: [
        {
          id: 'p',
          url: `http://127.0.0.1:${ports.prefill}`,
          worker_type: 'prefill',
          bootstrap_port: 8998,
          is_healthy: true,
          status: 'ready',
          load: 0,
          priority: 50,
          cost: 1,
        },
        ...decodeUrls.map((url, i) => ({
          id: `d${i}`,
          url,
          worker_type: 'decode',
          is_healthy: true,
          status: 'ready',
          load: 0,
          priority: 50,
          cost: 1,
        })),
      ],
      total: 4,
      stats: { prefill_count: 1, decode_count: 3, regular_count: 0 },
    });
    const r = await serve({
      '/health': () => ({ body: 'OK' }),
      '/workers': () => ({ type: 'application/json', body: workersBody }),
    });
    servers.push(r.srv);
    ports.router = r.port;

    const gpuA: FakeUnit[] = [
      {
        unit: 'llm-gateway.service',
        execStart: router(
          `--prefill http://127.0.0.1:${ports.prefill} 8998 ${decodeUrls.map((u) => `--decode ${u}`).join(' ')}`,
          ports.router,
        ),
      },
      { unit: 'qwen-p0.service', execStart: server(ports.prefill, 'prefill') },
    ];
    const gpuB: FakeUnit[] = [
      { unit: 'qwen-d0.service', execStart: server(ports.d0, 'decode') },
      { unit: 'qwen-d1.service', execStart: server(ports.d1, 'decode', '--base-gpu-id 4 --tp-size 2') },
      {
        unit: 'qwen-d2.service',
        execStart: server(ports.d2, 'decode', `${SPAN} --node-rank 0 --base-gpu-id 6`),
      },
    ];
    // Node rank 1 of decode-2: no router URL leads to gpu-c; it is found as the peer of rank 0's
    // --dist-init-addr port, or added by hand (--add-host).
    const gpuC: FakeUnit[] = [
      { unit: 'qwen-d2.service', execStart: server(ports.d2, 'decode', `${SPAN} --node-rank 1`) },
    ];

    root = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-cli-fleet-'));
    const key = await keygen(path.join(root, 'user_key'));
    const answerOf = (units: FakeUnit[], addrs: string[], peers?: Record<number, string[]>) => {
      const answer = answerSystemctl(units, addrs, peers);
      return async (command: string) => answer(command);
    };
    a = await startSshd({ authorizedKeys: [key.publicLine], answer: answerOf(gpuA, ['10.9.0.1']) });
    b = await startSshd({
      authorizedKeys: [key.publicLine],
      // decode-2's node rank 1 (gpu-c) is connected to rank 0's --dist-init-addr port.
      answer: answerOf(gpuB, ['10.9.0.2'], { 5757: [C_ADDR] }),
      extraConfig: [`ListenAddress ${B_ADDR}`],
    });
    c = await startSshd({
      authorizedKeys: [key.publicLine],
      answer: answerOf(gpuC, ['10.9.0.3']),
      extraConfig: [`ListenAddress ${C_ADDR}`],
    });
    const hostBlock = (alias: string, addr: string, port: number) => [
      `Host ${alias}`,
      `  HostName ${addr}`,
      `  Port ${port}`,
      `  User ${os.userInfo().username}`,
      `  IdentityFile ${key.privateFile}`,
      '  IdentitiesOnly yes',
      '',
    ];
    const knownHosts = [
      `[127.0.0.1]:${a.port} ${a.hostKeyLine}`,
      `[${B_ADDR}]:${b.port} ${b.hostKeyLine}`,
      `[${C_ADDR}]:${c.port} ${c.hostKeyLine}`,
      '',
    ].join('\n');
    home = path.join(root, 'home');
    homeNoB = path.join(root, 'home-no-b');
    homeNoC = path.join(root, 'home-no-c');
    for (const [h, blocks] of [
      [
        home,
        [
          ...hostBlock('gpu-a', '127.0.0.1', a.port),
          ...hostBlock('gpu-b', B_ADDR, b.port),
          ...hostBlock('gpu-c', C_ADDR, c.port),
        ],
      ],
      [homeNoB, [...hostBlock('gpu-a', '127.0.0.1', a.port), ...hostBlock('gpu-c', C_ADDR, c.port)]],
      [homeNoC, [...hostBlock('gpu-a', '127.0.0.1', a.port), ...hostBlock('gpu-b', B_ADDR, b.port)]],
    ] as const) {
      await fs.mkdir(path.join(h, '.ssh'), { recursive: true, mode: 0o700 });
      await fs.writeFile(path.join(h, '.ssh', 'config'), blocks.join('\n'));
      await fs.writeFile(path.join(h, '.ssh', 'known_hosts'), knownHosts);
    }
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await c?.stop();
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  it('--json: every worker with its host (the alias found for 127.0.0.3), unit, state, health and exact KV; one link per host', async () => {
    const beforeA = accepted(a);
    const beforeB = accepted(b);
    const beforeC = accepted(c);
    const r = await cli(['status', '--host', 'gpu-a', '--json'], home);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.simulated).toBe(false);
    expect(
      j.services.map((s: Record<string, unknown>) => [s.role, s.host, s.unit, s.activeState, s.health]),
    ).toEqual([
      ['router', 'gpu-a', 'llm-gateway.service', 'active', 'ok'],
      ['prefill', 'gpu-a', 'qwen-p0.service', 'active', 'ok'],
      ['decode', 'gpu-b', 'qwen-d0.service', 'active', 'ok'],
      ['decode', 'gpu-b', 'qwen-d1.service', 'active', 'ok'],
      ['decode', 'gpu-b', 'qwen-d2.service', 'active', 'ok'],
    ]);
    const kvOf = (url: string) => j.services.find((s: { url: string }) => s.url === url).kv;
    expect(kvOf(`http://${B_ADDR}:${ports.d0}`)).toMatchObject({
      usedTokens: 61_234,
      capacityTokens: 100_000,
    });
    expect(kvOf(`http://${B_ADDR}:${ports.d1}`)).toMatchObject({ usedTokens: 5_000, capacityTokens: 50_000 });
    expect(kvOf(`http://${B_ADDR}:${ports.d2}`)).toMatchObject({
      usedTokens: 30_000,
      capacityTokens: 40_000,
    });
    expect(kvOf(`http://127.0.0.1:${ports.prefill}`)).toMatchObject({
      usedTokens: 2048,
      capacityTokens: 200_000,
    });
    expect(j.roles.decode).toEqual({
      workers: 3,
      healthy: 3,
      kv: { usedTokens: 96_234, capacityTokens: 190_000, ratio: 96_234 / 190_000 },
      fullest: { name: 'decode-2', url: `http://${B_ADDR}:${ports.d2}`, ratio: 0.75 },
    });
    expect(j.roles.prefill).toMatchObject({ workers: 1, healthy: 1 });
    expect(j.unplaced).toEqual([]);
    expect(j.hosts.map((h: { id: string; via: string }) => [h.id, h.via])).toEqual([
      ['gpu-a', 'origin'],
      ['gpu-b', 'alias'],
      ['gpu-c', 'peer'],
    ]);
    // No router URL leads to gpu-c: rank 0's host names it as the peer on its --dist-init-addr port.
    const d2 = j.services.find((s: { unit: string }) => s.unit === 'qwen-d2.service');
    expect(d2.units).toEqual([
      { host: 'gpu-b', unit: 'qwen-d2.service', nodeRank: 0, activeState: 'active' },
      { host: 'gpu-c', unit: 'qwen-d2.service', nodeRank: 1, activeState: 'active' },
    ]);
    expect(d2.notes).toBeUndefined();
    // Discovery and the probe share one link per host.
    expect(accepted(a) - beforeA).toBe(1);
    expect(accepted(b) - beforeB).toBe(1);
    expect(accepted(c) - beforeC).toBe(1);
  });

  it('runs on the app as the desktop shell does: connected once, the fleet opened and read there, then the app shut down', async () => {
    const connects: string[] = [];
    const opened: Array<{ deploymentId: string; workers: number }> = [];
    const closed: string[] = [];
    const observedIn = new Set<string>();
    const stopped: string[] = [];
    const verdicts: Verdict[] = [];
    let app: App | undefined;
    const beforeA = accepted(a);
    const r = await cliCaptured(['status', '--json', '--host', 'gpu-a'], {
      sshHome: home,
      openApp: (opts) => {
        app = createApp({ ...opts, dataDir: path.join(root, 'data') });
        const core = app.core;
        const connect = core.connectHost.bind(core);
        core.connectHost = (args, o) => (connects.push(args.host.id), connect(args, o));
        core.hooks.on('opened', (e) =>
          opened.push({ deploymentId: e.deploymentId, workers: e.deployment.services.length }),
        );
        core.hooks.on('closed', (e) => closed.push(e.deploymentId));
        core.on('observation', (o) => observedIn.add(o.deploymentId));
        const getDashboard = app.handlers.getDashboard;
        app.handlers.getDashboard = async (args) => {
          const snapshot = await getDashboard(args);
          verdicts.push(snapshot.verdict);
          return snapshot;
        };
        // Disposers of services besides the core's: the app's shutdown runs them, the core's alone does not.
        const dashboardStop = app.dashboard.stop.bind(app.dashboard);
        app.dashboard.stop = () => (stopped.push('dashboard'), dashboardStop());
        const recordingShutdown = app.recording.shutdown.bind(app.recording);
        app.recording.shutdown = () => (stopped.push('recording'), recordingShutdown());
        return app;
      },
    });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(connects).toEqual(['gpu-a']);
    expect(accepted(a) - beforeA).toBe(1);
    expect(opened).toEqual([{ deploymentId: 'gpu-a', workers: expect.any(Number) }]);
    expect(opened[0].workers).toBeGreaterThanOrEqual(3);
    expect([...observedIn]).toEqual(['gpu-a']);
    expect(closed).toEqual(['gpu-a']);
    expect(stopped).toEqual(['dashboard', 'recording']);
    expect(await app!.core.listDeployments()).toEqual([]);
    // What it printed is the deployment the app opened: one entry per service it watched.
    expect(JSON.parse(r.out).services).toHaveLength(opened[0].workers);
    // Its verdict is the one the app's dashboard gives the window.
    expect(verdicts).toHaveLength(1);
    expect(JSON.parse(r.out).verdict).toEqual(verdicts[0]);
  });

  it('the other node connects from an address no alias resolves to: the worker names it and the lines to add', async () => {
    const r = await cli(['status', '--host', 'gpu-a', '--json'], homeNoC);
    const j = JSON.parse(r.out);
    const d2 = j.services.find((s: { unit: string }) => s.unit === 'qwen-d2.service');
    expect(d2.units).toEqual([
      { host: 'gpu-b', unit: 'qwen-d2.service', nodeRank: 0, activeState: 'active' },
    ]);
    expect(d2.notes).toEqual([
      `node rank(s) 1 of 2 (--dist-init-addr ${B_ADDR}:5757) run on no host scanned (gpu-a, gpu-b); add that host with --add-host`,
      `its other node(s) connect to ${B_ADDR}:5757 from ${C_ADDR}, which no ssh alias resolves to — add \`Host <name>\` / \`HostName ${C_ADDR}\` to ${path.join(homeNoC, '.ssh', 'config')}`,
    ]);
  });

  it('--add-host gpu-c: the decode worker spanning gpu-b and gpu-c lists both units with their node ranks', async () => {
    const beforeC = accepted(c);
    const r = await cli(['status', '--host', 'gpu-a', '--add-host', 'gpu-c', '--json'], home);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    const d2 = j.services.find((s: { unit: string }) => s.unit === 'qwen-d2.service');
    expect(d2.units).toEqual([
      { host: 'gpu-b', unit: 'qwen-d2.service', nodeRank: 0, activeState: 'active' },
      { host: 'gpu-c', unit: 'qwen-d2.service', nodeRank: 1, activeState: 'active' },
    ]);
    expect(d2.notes).toBeUndefined();
    expect(j.roles.decode.workers).toBe(3);
    expect(j.unrouted).toEqual([]);
    const model = j.hosts.map((h: { id: string; via: string }) => [h.id, h.via]);
    expect(model).toEqual([
      ['gpu-a', 'origin'],
      ['gpu-b', 'alias'],
      ['gpu-c', 'added'],
    ]);
    expect(accepted(c) - beforeC).toBe(1);
  });

  it('the human output is a table with one row per worker, its figures beneath, and the per-role totals', async () => {
    const r = await cli(['status', '--host', 'gpu-a', '--add-host', 'gpu-c'], home);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    // The origin and its link first, as for every deployment; then the hosts and what runs on them.
    expect(lines[0]).toMatch(/^gpu-a — connected since \d\d:\d\d:\d\d UTC$/);
    expect(lines[2]).toBe('3 host(s) (gpu-a, gpu-b, gpu-c): 1 router, 1 prefill, 3 decode');
    expect(lines[3]).toMatch(/^ROLE\s+WORKER\s+URL\s+HOST\s+UNIT\s+STATE\s+CONDITION$/);
    // Workers by the names the app gives them (decode-0), their URLs beside them.
    const d0 = lines.findIndex((l) => l.includes('qwen-d0.service'));
    expect(lines[d0]).toMatch(
      new RegExp(
        `^decode\\s+decode-0\\s+http://127\\.0\\.0\\.3:${ports.d0}\\s+gpu-b\\s+qwen-d0\\.service\\s+active/running\\s+running, healthy  KV 61\\.2 % \\(61,234 / 100,000 tokens, from \\S+\\)$`,
      ),
    );
    // Each worker's headline figures under its row: its server's sglang:num_running_reqs is 3.
    expect(lines[d0 + 1]).toMatch(/^ +running 3 /);
    expect(lines.find((l) => l.includes('qwen-d2.service'))).toContain('qwen-d2.service +gpu-c r1');
    expect(r.out).toContain(
      'decode: 3/3 healthy, KV 50.6 % (96,234 / 190,000 tokens), fullest decode-2 at 75.0 %',
    );
  });

  it('with no alias for 127.0.0.3 in ~/.ssh/config: the decode workers are unplaced with the lines to add', async () => {
    const r = await cli(['status', '--host', 'gpu-a', '--json'], homeNoB);
    expect(r.code).toBe(3);
    const j = JSON.parse(r.out);
    expect(j.services.map((s: { role: string }) => s.role)).toEqual(['router', 'prefill']);
    const config = path.join(homeNoB, '.ssh', 'config');
    expect(j.unplaced.map((u: { reason: string; fix: string }) => [u.reason, u.fix])).toEqual(
      [ports.d0, ports.d1, ports.d2].map((p) => [
        `decode worker http://${B_ADDR}:${p} (listed by the router): no ssh alias resolves to ${B_ADDR}`,
        `add \`Host <name>\` / \`HostName ${B_ADDR}\` (with its User and IdentityFile) to ${config}`,
      ]),
    );
  });

  it('started on gpu-b, which runs no router: all its units are shown, each listed as no router’s, with where to start (exit 3)', async () => {
    const r = await cli(['status', '--host', 'gpu-b', '--json'], home);
    expect(r.code).toBe(3);
    const j = JSON.parse(r.out);
    // Every server that runs there, none picked over another.
    expect(j.services.map((s: { name: string; unit: string }) => [s.name, s.unit])).toEqual([
      ['decode-0', 'qwen-d0.service'],
      ['decode-1', 'qwen-d1.service'],
      ['decode-2', 'qwen-d2.service'],
    ]);
    expect(j.unrouted.map((u: { unit: string; reason: string }) => [u.unit, u.reason])).toEqual(
      ['qwen-d0.service', 'qwen-d1.service', 'qwen-d2.service'].map((u) => [
        u,
        'no router found on gpu-b; start from the host that runs the router (pd-console status --host ROUTER_HOST)',
      ]),
    );
  });

  it('gpu-b down: its workers say "unreachable: reason", the router and prefill are still reported', async () => {
    await b.kill();
    try {
      const r = await cli(['status', '--host', 'gpu-a', '--json'], home);
      expect(r.code).toBe(3);
      const j = JSON.parse(r.out);
      const decode = j.services.filter((s: { role: string }) => s.role === 'decode');
      expect(decode).toHaveLength(3);
      for (const d of decode)
        expect(d.health).toMatch(/^unreachable: cannot connect to gpu-b: gpu-b refused the connection/);
      const prefill = j.services.find((s: { role: string }) => s.role === 'prefill');
      expect(prefill.kv).toMatchObject({ usedTokens: 2048, capacityTokens: 200_000 });
      expect(j.hosts.find((h: { id: string }) => h.id === 'gpu-b').unreachable).toMatch(
        /refused the connection/,
      );
    } finally {
      await b.restart();
    }
  });
});
