// A router's worker list as an adversary writes it: thousands of entries, one worker under several spellings,
// credentials in a URL, an answer that is not the documented shape. Over text (the hosts' units as systemd
// prints them, /workers bodies in the real smg shape); the real sockets and sshd are in
// test/cli/cli-router-list.test.ts.
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assembleFleet,
  placeHost,
  type HostScan,
  type RouterScan,
} from '../../src/main/core/discovery/fleet';
import {
  MAX_ROUTER_WORKERS,
  parseWorkersAnswer,
  routerListFindings,
  routerWorkerList,
} from '../../src/main/core/discovery/router-workers';
import * as workerUrl from '../../src/shared/worker-url';
import { discoverDeployment, matchEndpoint } from '../../src/main/core/discovery/discover';
import type { AliasAddress } from '../../src/main/core/ssh/alias-addresses';
import { alias, foundOn, listUnits, router, server, unitCat, type FakeUnit } from './fleet-units';

// Counts every time a worker URL is taken apart, wherever in discovery it happens.
vi.mock('../../src/shared/worker-url', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../src/shared/worker-url')>();
  return { ...m, parseWorkerUrl: vi.fn(m.parseWorkerUrl) };
});
const parses = vi.mocked(workerUrl.parseWorkerUrl);

const A = '10.1.0.12';
const B = '10.1.0.13';

function fleetOf(
  units: FakeUnit[],
  others: Record<string, FakeUnit[]>,
  aliases: AliasAddress[],
  api?: string,
) {
  const scans: HostScan[] = [
    { host: 'gpu-a', via: 'origin', addresses: [A], found: foundOn('gpu-a', units) },
    ...Object.entries(others).map(([host, u]): HostScan => ({
      host,
      via: 'alias',
      addresses: aliases.find((a) => a.alias === host)?.addresses ?? [],
      found: foundOn(host, u),
    })),
  ];
  const routers: RouterScan[] = (scans[0].found ?? [])
    .filter((d) => d.kind === 'router')
    .map((unit) => ({ host: 'gpu-a', unit, ...(api ? { workersApi: parseWorkersAnswer(api) } : {}) }));
  return assembleFleet({
    origin: 'gpu-a',
    scans,
    routers,
    placement: (h) => placeHost(h, scans[0], [], aliases, [], '~/.ssh/config'),
  });
}

/** A /workers body in the smg shape listing `n` decode workers on B, ports 40000 + i. */
function workersBody(n: number): string {
  const workers = Array.from({ length: n }, (_, i) => ({
    id: `w${i}`,
    url: `http://${B}:${40000 + i}`,
    worker_type: 'decode',
    is_healthy: true,
    status: 'ready',
    load: 0,
    priority: 50,
    cost: 1,
  }));
  return JSON.stringify({
    workers,
    total: n,
    stats: { prefill_count: 0, decode_count: n, regular_count: 0 },
  });
}

const ROUTER: FakeUnit = {
  unit: 'llm-gateway.service',
  execStart: router(`--prefill http://${A}:30100 8998 --decode http://${B}:30200`),
};
const GPU_A: FakeUnit[] = [ROUTER, { unit: 'qwen-p0.service', execStart: server(30100, 'prefill') }];
const GPU_B: FakeUnit[] = [{ unit: 'qwen-d0.service', execStart: server(30200, 'decode') }];
const ALIASES = [alias('gpu-a', A), alias('gpu-b', B)];

describe('a router listing thousands of workers', () => {
  beforeEach(() => {
    parses.mockClear();
  });

  it('takes each URL apart a bounded number of times, not once per pair (2,000 workers)', () => {
    const n = 2000;
    const body = workersBody(n);
    parses.mockClear();
    fleetOf(GPU_A, { 'gpu-b': GPU_B }, ALIASES, body);
    // Pairwise comparison took apart ~n² URLs (4,000,000 here); keyed, each is read a few times.
    console.log(`URL parses for ${n} listed workers: ${parses.mock.calls.length}`);
    expect(parses.mock.calls.length).toBeLessThanOrEqual(3 * (n + 2));
  });

  it(`takes the first ${MAX_ROUTER_WORKERS} workers, flags first, and says how many it left out`, () => {
    const n = 2000;
    const fleet = fleetOf(GPU_A, { 'gpu-b': GPU_B }, ALIASES, workersBody(n));
    const r = fleet.routers[0];
    expect(r.workers).toHaveLength(MAX_ROUTER_WORKERS);
    // 2 from the flags + 2,000 from the answer, all distinct.
    expect(r.workersLeftOut).toBe(n + 2 - MAX_ROUTER_WORKERS);
    expect(r.workers.slice(0, 2).map((w) => [w.url, w.sources])).toEqual([
      [`http://${A}:30100`, ['execstart']],
      [`http://${B}:30200`, ['execstart']],
    ]);
    expect(fleet.workers.length + fleet.unplaced.length).toBe(MAX_ROUTER_WORKERS);
    expect(routerListFindings(r)).toEqual([
      `lists 2,002 workers; the console takes the first 1,024 and left out 978 (check the router’s --prefill/--decode flags and its /workers for entries registered by mistake)`,
    ]);
  });

  it('a duplicate beyond the bound is not counted as left out; the bound counts distinct workers', () => {
    const list = routerWorkerList(
      { prefill: [], decode: [{ url: 'http://h:1' }, { url: 'http://h:2' }], workerUrls: [] },
      [
        { url: 'http://h:3', role: 'decode' },
        { url: 'http://H:1/', role: 'decode' },
        { url: 'http://h:3', role: 'decode' },
        { url: 'http://h:4', role: 'decode' },
      ],
      2,
    );
    expect(list.workers.map((w) => [w.url, w.sources.join('+')])).toEqual([
      ['http://h:1', 'execstart+workers-api'],
      ['http://h:2', 'execstart'],
    ]);
    expect(list.leftOut).toBe(2);
  });
});

describe('one worker under several spellings', () => {
  it('127.0.0.1, localhost, [::1] and the router host’s own address are one worker on the router’s host', () => {
    const units: FakeUnit[] = [
      {
        unit: 'r.service',
        execStart: router(
          '--prefill http://127.0.0.1:30100 8998 --decode http://127.0.0.1:30200 --decode http://localhost:30200/',
        ),
      },
      { unit: 'p.service', execStart: server(30100, 'prefill') },
      { unit: 'd.service', execStart: server(30200, 'decode') },
    ];
    const api = JSON.stringify({
      workers: [
        { url: 'http://[::1]:30200', worker_type: 'decode', is_healthy: true },
        { url: `http://${A}:30200`, worker_type: 'decode', is_healthy: true },
        { url: 'http://LOCALHOST.:30100', worker_type: 'prefill', bootstrap_port: 8998, is_healthy: true },
      ],
    });
    const fleet = fleetOf(units, {}, [], api);
    expect(fleet.workers.map((w) => [w.role, w.url, w.host, w.units.map((u) => u.unit)])).toEqual([
      ['prefill', 'http://127.0.0.1:30100', 'gpu-a', ['p.service']],
      ['decode', 'http://127.0.0.1:30200', 'gpu-a', ['d.service']],
    ]);
    expect(fleet.unplaced).toEqual([]);
    const decode = fleet.workers[1];
    expect(decode.notes).toEqual([
      `listed as http://127.0.0.1:30200, http://localhost:30200/, http://[::1]:30200, http://${A}:30200 ` +
        '(by --decode in ExecStart of r.service on gpu-a and the /workers answer of r.service on gpu-a): ' +
        'one server (same host and port), counted once',
    ]);
  });

  it('a default port is the scheme’s: http://h and http://h:80 are one worker; another port is another', () => {
    const list = routerWorkerList(
      {
        prefill: [],
        decode: [{ url: 'http://h' }, { url: 'h:80' }, { url: 'http://h:8080' }],
        workerUrls: [],
      },
      undefined,
    );
    expect(list.workers.map((w) => w.url)).toEqual(['http://h', 'http://h:8080']);
  });

  it('the fix for a bad URL names where it came from: the ExecStart flag, or the /workers answer', () => {
    const units: FakeUnit[] = [
      {
        unit: 'r.service',
        execStart: router('--prefill http://127.0.0.1:30100 8998 --decode http://[zz]:1'),
      },
      { unit: 'p.service', execStart: server(30100, 'prefill') },
    ];
    const api = JSON.stringify({
      workers: [{ url: 'http://[yy]:2', worker_type: 'decode', is_healthy: false }],
    });
    const fleet = fleetOf(units, {}, [], api);
    expect(fleet.unplaced.map((u) => [u.url, u.fix])).toEqual([
      ['http://[zz]:1', 'correct the URL in --decode in ExecStart of r.service on gpu-a'],
      [
        'http://[yy]:2',
        'correct the URL in the /workers answer of r.service on gpu-a (registered at run time, not in its ExecStart: DELETE http://127.0.0.1:30001/workers/ID removes it)',
      ],
    ]);
    const flagOnly = fleetOf(
      [
        {
          unit: 'r.service',
          execStart: router('--prefill http://127.0.0.1:30100 8998 --decode http://127.0.0.1:39999'),
        },
        { unit: 'p.service', execStart: server(30100, 'prefill') },
      ],
      {},
      [],
    );
    expect(flagOnly.unplaced.map((u) => u.fix)).toEqual([
      "SGLang units on gpu-a serve p.service :30100; point --decode in ExecStart of r.service on gpu-a at one of them or start the worker's unit",
    ]);
  });
});

const notLinux = process.platform !== 'linux';
if (notLinux)
  console.warn('[skipped] 127.0.0.5 is a loopback address that refuses 127.0.0.1’s server on Linux only');

describe('one definition of loopback, for discovery on one host and for the fleet', () => {
  let srv: net.Server;
  let port: number;
  beforeEach(async () => {
    srv = net.createServer((s) => s.end());
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    port = (srv.address() as net.AddressInfo).port;
  });
  afterEach(() => new Promise<void>((r) => srv.close(() => r())));

  const dial = (host: string): Promise<'connected' | string> =>
    new Promise((resolve) => {
      const s = net.connect({ host, port });
      s.once('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });

  it.skipIf(notLinux)(
    'a server on 127.0.0.1 is not reached at 127.0.0.5: the router URL is said to miss it, as the fleet places it elsewhere',
    async () => {
      expect(await dial('127.0.0.1')).toBe('connected');
      expect(await dial('127.0.0.5')).toBe('ECONNREFUSED');
      expect(workerUrl.isLoopbackHost('127.0.0.5')).toBe(false);
      expect(matchEndpoint(`http://127.0.0.5:${port}`, { host: '127.0.0.1', port })).toEqual({
        ok: false,
        portMatches: true,
      });
      for (const h of ['127.0.0.1', 'localhost', 'LOCALHOST.', '[::1]', '::1', '[::ffff:7f00:1]', '0.0.0.0'])
        expect([h, workerUrl.isLoopbackHost(h)]).toEqual([h, true]);
      const units: FakeUnit[] = [
        {
          unit: 'r.service',
          execStart: router(`--prefill http://127.0.0.1:30100 8998 --decode http://127.0.0.5:${port}`),
        },
        { unit: 'p.service', execStart: server(30100, 'prefill') },
        {
          unit: 'd.service',
          execStart: server(port, 'decode').replace('--host 0.0.0.0', '--host 127.0.0.1'),
        },
      ];
      const one = discoverDeployment({
        hostId: 'box',
        listUnits: listUnits(units),
        units: units.map((u) => ({ unit: u.unit, cat: unitCat(u) })),
      });
      expect(
        one.diagnostics.filter((d) => d.code === 'router-url-unreachable-host').map((d) => d.message),
      ).toEqual([
        `router's --decode http://127.0.0.5:${port} targets port ${port}, but d.service listens on 127.0.0.1 only`,
      ]);
      const fleet = fleetOf(units, {}, []);
      expect(fleet.unplaced.map((u) => [u.url, u.code])).toEqual([[`http://127.0.0.5:${port}`, 'no-alias']]);
    },
  );
});

describe('credentials in a worker URL', () => {
  const SECRET = 'PW-s3cret';
  const units: FakeUnit[] = [
    {
      unit: 'llm-gateway.service',
      execStart: router(`--prefill http://ops:${SECRET}@${A}:30100 8998 --decode http://${B}:30200`),
    },
    { unit: 'qwen-p0.service', execStart: server(30100, 'prefill') },
  ];
  const api = JSON.stringify({
    workers: [
      { url: `http://admin:${SECRET}@${B}:30200`, worker_type: 'decode', is_healthy: true },
      { url: `http://tok${SECRET}@${B}:30201@3`, worker_type: 'decode', is_healthy: true },
      { url: `http://admin:${SECRET}/x@${B}:30202`, worker_type: 'decode', is_healthy: true },
    ],
  });

  it('are dropped where the URL enters: the worker is its host and port, and nothing keeps the password', () => {
    const fleet = fleetOf(units, { 'gpu-b': GPU_B }, ALIASES, api);
    const text = JSON.stringify(fleet);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('admin');
    expect(text).not.toContain('ops:');
    expect(fleet.workers.map((w) => [w.url, w.host])).toEqual([
      [`http://${A}:30100`, 'gpu-a'],
      [`http://${B}:30200`, 'gpu-b'],
    ]);
    const r = fleet.routers[0];
    expect(r.workers.map((w) => w.url)).toEqual([
      `http://${A}:30100`,
      `http://${B}:30200`,
      `http://${B}:30201@3`,
      `http://<hidden>${B}:30202`,
    ]);
    expect(r.userinfoDropped).toEqual([
      `http://${A}:30100`,
      `http://${B}:30200`,
      `http://${B}:30201@3`,
      `http://<hidden>${B}:30202`,
    ]);
    const findings = routerListFindings(r).join('\n');
    expect(findings).toContain('lists 4 worker URLs with a user name or password in it');
    expect(findings).not.toContain(SECRET);
  });

  it('discovery on one host says so in its diagnostics, without them', () => {
    const one = discoverDeployment({
      hostId: 'gpu-a',
      listUnits: listUnits(units),
      units: units.map((u) => ({ unit: u.unit, cat: unitCat(u) })),
    });
    const text = JSON.stringify({ ...one, found: one.found.map((f) => ({ ...f, command: undefined })) });
    expect(text).not.toContain(SECRET);
    expect(one.diagnostics.filter((d) => d.code === 'flag-problem').map((d) => d.message)).toEqual([
      `llm-gateway.service: --prefill http://${A}:30100 had a user name or password in the URL; the console dropped it and shows none (the router passes it to the worker, and anyone who reads ps, the journal or the unit file sees it: give the worker's key with the router's --api-key instead)`,
    ]);
  });

  it('a DP rank after credentials stays the DP rank', () => {
    expect(workerUrl.parseWorkerUrl(`http://a:${SECRET}@10.1.0.13:30200@3`)).toEqual({
      url: 'http://10.1.0.13:30200@3',
      baseUrl: 'http://10.1.0.13:30200',
      dpRank: 3,
      host: '10.1.0.13',
      port: 30200,
      protocol: 'http:',
    });
  });
});

describe('a /workers answer that is not the documented shape', () => {
  it('says its content type and first bytes, with control characters escaped', () => {
    const html = '<html>\x1b[2J\x1b]0;pwned\x07<body>\u202egnirts</body></html>';
    let message = '';
    try {
      parseWorkersAnswer(html, 'text/html; charset=utf-8');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(
      '/workers did not answer JSON (text/html, 49 bytes, starts "<html>\\u001b[2J\\u001b]0;pwned\\u0007<body>\\u202egnirts</body></html>")',
    );
    expect(() => parseWorkersAnswer('{"error":"Method Not Allowed","code":405}', 'application/json')).toThrow(
      '/workers answered JSON without a "workers" array (application/json, an object with keys "error", "code")',
    );
    // Values are never quoted from JSON, and URL user-info never from what is not JSON.
    expect(() => parseWorkersAnswer(`{"workers":[{"uri":"http://admin:${'PW'}@h:1"}]}`)).toThrow(
      '/workers: workers[0] has no "url" string (it is an object with keys "uri")',
    );
    expect(() => parseWorkersAnswer('see http://admin:PW@h:1/ for the list')).toThrow(
      '/workers did not answer JSON (37 bytes, starts "see http://<hidden>@h:1/ for the list")',
    );
  });
});
