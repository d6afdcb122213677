// `pd-console status` against a hostile router: a real OpenSSH sshd host (gpu-a, systemd answered through the
// exec bridge: test/discovery/fleet-units.ts) whose router is a real HTTP server reached through the host's own
// SSH forwarding, and whose GET /workers answers what each test sets: 200 MB, one byte a second, HTML with
// terminal escapes, credentials in worker URLs, one worker under three spellings, 10,002 workers. The worker
// servers are real too (/health, Prometheus /metrics). What the router's list did must be said — in the text
// and in --json — never silently dropped, and a password in it never shown.
import http from 'node:http';
import { Readable } from 'node:stream';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaptured, type CliRun } from './run-on-app';
import { keygen, startSshd, sshdUnavailableReason, type Sshd } from '../fixtures/sshd';
import { answerSystemctl, router, server, type FakeUnit } from '../discovery/fleet-units';
import { createApp } from '../../src/main/compose';
import type { StatusReport } from '../../src/main/cli/status-report';

/** What `status --json` prints. */
type FleetJson = StatusReport;

const skip = sshdUnavailableReason();
if (skip) console.warn(`[skipped] status against a hostile router on a real sshd host: ${skip}`);

const SECRET = 'PW-h0stile';

function metricsText(engine: string, used: number, capacity: number): string {
  const l = `model_name="qwen3-32b",engine_type="${engine}",tp_rank="0",pp_rank="0",moe_ep_rank="0"`;
  return [
    '# TYPE sglang:num_used_tokens gauge',
    `sglang:num_used_tokens{${l}} ${used}`,
    '# TYPE sglang:max_total_num_tokens gauge',
    `sglang:max_total_num_tokens{${l}} ${capacity}`,
    '',
  ].join('\n');
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function listen(handler: Handler): Promise<{ srv: http.Server; port: number }> {
  const srv = http.createServer(handler);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { srv, port: (srv.address() as AddressInfo).port };
}

const json =
  (body: unknown): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

describe.skipIf(skip)('status when the router’s worker list is hostile', () => {
  let root: string;
  let home: string;
  let sshd: Sshd;
  const servers: http.Server[] = [];
  const ports: Record<string, number> = {};
  /** What the router's GET /workers does in the current test. */
  let workers: Handler = json({ workers: [] });
  /** gpu-a's units in the current test. */
  let units: FakeUnit[] = [];
  /** Bytes the router wrote for /workers, and whether it saw the connection go. */
  const sent = { bytes: 0, closed: false };

  // Each run opens its own app, as `pd-console` does, with the test's data folder.
  const cli = (args: string[]): Promise<CliRun> =>
    cliCaptured(args, {
      sshHome: home,
      openApp: (opts) => createApp({ ...opts, dataDir: path.join(root, 'data'), record: false }),
    });
  const pair = (decodes = ['d0']): FakeUnit[] => [
    {
      unit: 'llm-gateway.service',
      execStart: router(
        `--prefill http://127.0.0.1:${ports.prefill} 8998 ${decodes.map((d) => `--decode http://127.0.0.1:${ports[d]}`).join(' ')}`,
        ports.router,
      ),
    },
    { unit: 'qwen-p0.service', execStart: server(ports.prefill, 'prefill') },
    ...decodes.map((d) => ({ unit: `qwen-${d}.service`, execStart: server(ports[d], 'decode') })),
  ];

  beforeAll(async () => {
    for (const [name, engine, used] of [
      ['prefill', 'prefill', 1000],
      ['d0', 'decode', 20_000],
      ['d1', 'decode', 30_000],
    ] as const) {
      const s = await listen((req, res) => {
        if (req.url === '/metrics') {
          res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
          return void res.end(metricsText(engine, used, 100_000));
        }
        res.writeHead(req.url === '/health' ? 200 : 404).end();
      });
      servers.push(s.srv);
      ports[name] = s.port;
    }
    const r = await listen((req, res) => {
      if (req.url === '/workers') return workers(req, res);
      res.writeHead(req.url === '/health' ? 200 : 404, { 'content-type': 'text/plain' }).end('OK');
    });
    servers.push(r.srv);
    ports.router = r.port;

    root = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-cli-router-list-'));
    const key = await keygen(path.join(root, 'user_key'));
    sshd = await startSshd({
      authorizedKeys: [key.publicLine],
      answer: async (command) => answerSystemctl(units, ['10.9.0.1'])(command),
    });
    home = path.join(root, 'home');
    await fs.mkdir(path.join(home, '.ssh'), { recursive: true, mode: 0o700 });
    await fs.writeFile(
      path.join(home, '.ssh', 'config'),
      [
        'Host gpu-a',
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        `  User ${os.userInfo().username}`,
        `  IdentityFile ${key.privateFile}`,
        '  IdentitiesOnly yes',
        '',
      ].join('\n'),
    );
    await fs.writeFile(
      path.join(home, '.ssh', 'known_hosts'),
      `[127.0.0.1]:${sshd.port} ${sshd.hostKeyLine}\n`,
    );
  }, 60_000);

  afterAll(async () => {
    await sshd?.stop();
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    if (root) await fs.rm(root, { recursive: true, force: true });
  });

  /** The router in --json and its note lines in the text, both from one setup. */
  async function both(): Promise<{ j: FleetJson; text: string; routerNotes: string[] }> {
    const [r, t] = await Promise.all([
      cli(['status', '--host', 'gpu-a', '--json']),
      cli(['status', '--host', 'gpu-a']),
    ]);
    expect(r.err).toBe('');
    const text = t.out;
    const routerNotes = text
      .split('\n')
      .filter((l) => l.startsWith('note: router: '))
      .map((l) => l.slice('note: router: '.length));
    return { j: JSON.parse(r.out), text, routerNotes };
  }

  const instead =
    '; using the workers in ExecStart of llm-gateway.service instead (1 --prefill, 1 --decode); workers registered at run time are not seen';

  it('200 MB of /workers: reading stops at the cap, the status says so and uses the ExecStart flags', async () => {
    units = pair();
    Object.assign(sent, { bytes: 0, closed: false });
    workers = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, ' ');
      let left = 200 * 1024 * 1024;
      const body = new Readable({
        read() {
          if (left <= 0) return void this.push(null);
          left -= chunk.length;
          sent.bytes += chunk.length;
          this.push(chunk);
        },
      });
      res.once('close', () => {
        sent.closed = true;
        body.destroy();
      });
      res.write('{"workers":[');
      body.pipe(res);
    };
    const { j, text, routerNotes } = await both();
    const line = `worker list: http://127.0.0.1:${ports.router}/workers: response larger than 4 MB; stopped reading${instead}`;
    expect(j.routers[0]).toMatchObject({
      workersApiFailure: 'too-large',
      workersApiError: line.slice('worker list: '.length),
    });
    expect(j.services.find((s) => s.role === 'router')?.notes).toEqual([line]);
    expect(routerNotes).toEqual([line]);
    expect(j.roles.prefill).toMatchObject({ workers: 1, healthy: 1 });
    expect(j.roles.decode).toMatchObject({ workers: 1, healthy: 1 });
    // One of each on one host reads as its roles: the decode worker the flags name is watched and serves.
    expect(text).toMatch(/^decode +qwen-d0\.service +active\/running +running, healthy {2}KV 20\.0 % /m);
    console.log(
      `/workers wrote ${(sent.bytes / 1024 / 1024).toFixed(1)} MiB of 200 before the console hung up`,
    );
    expect(sent.closed).toBe(true);
    expect(sent.bytes).toBeLessThan(200 * 1024 * 1024);
  }, 60_000);

  it('one byte a second: given up after the timeout, said, and the ExecStart flags used', async () => {
    units = pair();
    workers = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => res.write(' '), 1000);
      res.once('close', () => clearInterval(t));
      res.write('{');
    };
    const { j, routerNotes } = await both();
    const line = `worker list: http://127.0.0.1:${ports.router}/workers: no complete response within 5 s${instead}`;
    expect(j.routers[0].workersApiFailure).toBe('too-slow');
    expect(routerNotes).toEqual([line]);
    expect(j.roles.decode).toMatchObject({ workers: 1, healthy: 1 });
  }, 60_000);

  it('HTML with terminal escapes: its content type and first bytes are said, escaped', async () => {
    units = pair();
    const page = '<html>\x1b[2J\x1b]0;owned\x07<h1>502 Bad Gateway</h1></html>';
    workers = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page);
    };
    const { j, text, routerNotes } = await both();
    expect(j.routers[0].workersApiFailure).toBe('not-json');
    expect(routerNotes).toEqual([
      `worker list: http://127.0.0.1:${ports.router}/workers did not answer JSON (text/html, ${Buffer.byteLength(page)} bytes, starts "<html>\\u001b[2J\\u001b]0;owned\\u0007<h1>502 Bad Gateway</h1></html>")${instead}`,
    ]);
    for (const c of ['\x1b', '\x07']) expect(text).not.toContain(c);
  }, 60_000);

  it('credentials in the worker URLs: never shown; the worker is monitored by host and port, and it is said', async () => {
    units = pair();
    workers = json({
      workers: [
        {
          url: `http://admin:${SECRET}@127.0.0.1:${ports.prefill}`,
          worker_type: 'prefill',
          bootstrap_port: 8998,
          is_healthy: true,
        },
        { url: `http://admin:${SECRET}@127.0.0.1:${ports.d0}`, worker_type: 'decode', is_healthy: true },
      ],
    });
    const r = await cli(['status', '--host', 'gpu-a', '--json']);
    const text = (await cli(['status', '--host', 'gpu-a'])).out;
    for (const out of [r.out, r.err, text]) {
      expect(out).not.toContain(SECRET);
      expect(out).not.toContain('admin');
    }
    const j = JSON.parse(r.out);
    expect(j.routers[0].userinfoDropped).toEqual([
      `http://127.0.0.1:${ports.prefill}`,
      `http://127.0.0.1:${ports.d0}`,
    ]);
    expect(j.roles.decode).toMatchObject({ workers: 1, healthy: 1 });
    expect(j.unplaced).toEqual([]);
    expect(text).toContain(
      `note: router: lists 2 worker URLs with a user name or password in it (http://127.0.0.1:${ports.prefill}, http://127.0.0.1:${ports.d0}); the console dropped them and shows none`,
    );
  }, 60_000);

  it('one worker as 127.0.0.1, localhost and [::1]: counted once ("decode: 2/2 healthy"), its spellings said', async () => {
    units = pair(['d0', 'd1']);
    workers = json({
      workers: [
        {
          url: `http://127.0.0.1:${ports.prefill}`,
          worker_type: 'prefill',
          bootstrap_port: 8998,
          is_healthy: true,
        },
        { url: `http://localhost:${ports.d0}`, worker_type: 'decode', is_healthy: true },
        { url: `http://[::1]:${ports.d0}`, worker_type: 'decode', is_healthy: true },
        { url: `http://127.0.0.1:${ports.d1}`, worker_type: 'decode', is_healthy: true },
      ],
    });
    const { j, text } = await both();
    expect(j.roles.decode).toMatchObject({ workers: 2, healthy: 2 });
    expect(j.services.map((s) => [s.role, s.unit])).toEqual([
      ['router', 'llm-gateway.service'],
      ['prefill', 'qwen-p0.service'],
      ['decode', 'qwen-d0.service'],
      ['decode', 'qwen-d1.service'],
    ]);
    expect(text).toContain('decode: 2/2 healthy');
    expect(text).toContain(
      `note: decode-0: listed as http://127.0.0.1:${ports.d0}, http://localhost:${ports.d0}, http://[::1]:${ports.d0} ` +
        '(by --decode in ExecStart of llm-gateway.service on gpu-a and the /workers answer of llm-gateway.service on gpu-a): ' +
        'one server (same host and port), counted once',
    );
  }, 60_000);

  it('10,002 workers: the first 1,024 are taken, the 8,978 left out are said', async () => {
    units = pair();
    const n = 10_000;
    workers = json({
      workers: [
        {
          url: `http://127.0.0.1:${ports.prefill}`,
          worker_type: 'prefill',
          bootstrap_port: 8998,
          is_healthy: true,
        },
        { url: `http://127.0.0.1:${ports.d0}`, worker_type: 'decode', is_healthy: true },
        ...Array.from({ length: n }, (_, i) => ({
          url: `http://127.0.0.1:${20_000 + i}`,
          worker_type: 'decode',
          is_healthy: true,
        })),
      ],
      total: n + 2,
    });
    const { j, routerNotes } = await both();
    expect(j.routers[0].workers).toHaveLength(1024);
    expect(j.routers[0].workersLeftOut).toBe(n + 2 - 1024);
    expect(routerNotes).toEqual([
      'lists 10,002 workers; the console takes the first 1,024 and left out 8,978 (check the router’s --prefill/--decode flags and its /workers for entries registered by mistake)',
    ]);
    // The two that run here are monitored; the others are said to have no unit on their port.
    expect(j.roles.decode).toMatchObject({ workers: 1, healthy: 1 });
    expect(j.unplaced).toHaveLength(1024 - 2);
  }, 120_000);
});
