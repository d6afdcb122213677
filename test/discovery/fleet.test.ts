// Fleet discovery from the router outward, over text: ExecStart variants, /workers in the real smg shape, ssh
// aliases with and without the worker's address, two routers, multi-node pairing and DP-aware URLs.
import { describe, expect, it } from 'vitest';
import {
  assembleFleet,
  placeHost,
  type HostScan,
  type RouterScan,
} from '../../src/main/core/discovery/fleet';
import { parseWorkersAnswer, routerWorkerList } from '../../src/main/core/discovery/router-workers';
import { parseWorkerUrl } from '../../src/shared/worker-url';
import { distInitPort, nodePeersCommand, parseSsPeers } from '../../src/main/core/discovery/node-peers';
import type { AliasAddress } from '../../src/main/core/ssh/alias-addresses';
import { alias, foundOn, router, server, type FakeUnit } from './fleet-units';

const A = '10.1.0.12';
const B = '10.1.0.13';
const C = '10.1.0.14';
const CONFIG = '~/.ssh/config';

const ROUTER_1P2D: FakeUnit = {
  unit: 'llm-gateway.service',
  execStart: router(`--prefill http://${A}:30100 8998 --decode http://${B}:30200 --decode http://${B}:30201`),
};
const GPU_A: FakeUnit[] = [ROUTER_1P2D, { unit: 'qwen-p0.service', execStart: server(30100, 'prefill') }];
const GPU_B: FakeUnit[] = [
  { unit: 'qwen-d0.service', execStart: server(30200, 'decode') },
  { unit: 'qwen-d1.service', execStart: server(30201, 'decode', '--base-gpu-id 4') },
];

/** What run-fleet-discovery does around assembleFleet, with the hosts' texts given. */
function fleetOf(
  hosts: Record<string, { addresses: string[]; units?: FakeUnit[]; error?: string }>,
  aliases: AliasAddress[],
  api: Record<string, string> = {},
) {
  const [origin, ...others] = Object.keys(hosts);
  const scans: HostScan[] = Object.entries(hosts).map(([host, h]) => ({
    host,
    via: host === origin ? 'origin' : 'alias',
    addresses: h.addresses,
    ...(h.units ? { found: foundOn(host, h.units) } : { error: h.error }),
  }));
  const routers: RouterScan[] = (scans[0].found ?? [])
    .filter((d) => d.kind === 'router')
    .map((unit) => ({
      host: origin,
      unit,
      ...(api[unit.unit] ? { workersApi: parseWorkersAnswer(api[unit.unit]) } : {}),
    }));
  return assembleFleet({
    origin,
    scans,
    routers,
    placement: (h) =>
      placeHost(
        h,
        scans[0],
        scans.filter(
          (s) => others.includes(s.host) && !aliases.some((a) => a.alias === s.host) && s.via === 'added',
        ),
        aliases,
        [],
        CONFIG,
      ),
  });
}

describe('fleet discovery — 1 router, 1 prefill on its host, 2 decode on another', () => {
  const fleet = fleetOf(
    { 'gpu-a': { addresses: [A], units: GPU_A }, 'gpu-b': { addresses: [B], units: GPU_B } },
    [alias('gpu-a', A), alias('gpu-b', B)],
  );

  it('places every worker the router lists on its host and unit, by ExecStart port', () => {
    expect(fleet.workers.map((w) => [w.role, w.url, w.host, w.units.map((u) => u.unit)])).toEqual([
      ['prefill', `http://${A}:30100`, 'gpu-a', ['qwen-p0.service']],
      ['decode', `http://${B}:30200`, 'gpu-b', ['qwen-d0.service']],
      ['decode', `http://${B}:30201`, 'gpu-b', ['qwen-d1.service']],
    ]);
    expect(fleet.unplaced).toEqual([]);
    expect(fleet.unrouted).toEqual([]);
  });

  it('scrapes each worker at the address its own host dials, with GPUs per host and the bootstrap port', () => {
    const [p, , d1] = fleet.workers;
    expect(p.apiUrl).toBe('http://127.0.0.1:30100');
    expect(p.metricsUrl).toBe('http://127.0.0.1:30100/metrics');
    expect(p.bootstrapPort).toBe(8998);
    expect(d1.units[0]).toMatchObject({ host: 'gpu-b', nodeRank: 0, nnodes: 1, gpus: [4, 5, 6, 7] });
    expect(fleet.routers).toHaveLength(1);
    expect(fleet.routers[0]).toMatchObject({
      id: 'gpu-a/llm-gateway.service',
      apiUrl: 'http://127.0.0.1:30001',
    });
  });
});

describe('fleet discovery — a worker the console cannot place says why and what to add', () => {
  it('no ssh alias resolves to the decode workers’ address: each is unplaced with the Host/HostName lines', () => {
    const fleet = fleetOf({ 'gpu-a': { addresses: [A], units: GPU_A } }, [alias('gpu-a', A)]);
    expect(fleet.workers.map((w) => w.url)).toEqual([`http://${A}:30100`]);
    expect(fleet.unplaced.map((u) => [u.code, u.reason, u.fix])).toEqual([
      [
        'no-alias',
        `decode worker http://${B}:30200 (listed by the router): no ssh alias resolves to ${B}`,
        `add \`Host <name>\` / \`HostName ${B}\` (with its User and IdentityFile) to ~/.ssh/config`,
      ],
      [
        'no-alias',
        `decode worker http://${B}:30201 (listed by the router): no ssh alias resolves to ${B}`,
        `add \`Host <name>\` / \`HostName ${B}\` (with its User and IdentityFile) to ~/.ssh/config`,
      ],
    ]);
  });

  it('the alias is there but no unit serves the port: "reached gpu-b, but no unit there runs sglang on port …"', () => {
    const fleet = fleetOf(
      { 'gpu-a': { addresses: [A], units: GPU_A }, 'gpu-b': { addresses: [B], units: [GPU_B[0]] } },
      [alias('gpu-a', A), alias('gpu-b', B)],
    );
    expect(fleet.unplaced).toHaveLength(1);
    expect(fleet.unplaced[0]).toMatchObject({
      code: 'no-unit',
      host: 'gpu-b',
      reason: `decode worker http://${B}:30201 (listed by the router): reached gpu-b, but no unit there runs sglang on port 30201`,
    });
    expect(fleet.unplaced[0].fix).toContain('qwen-d0.service :30200');
  });

  it('a unit on the port that listens on 127.0.0.1 only is named, with --host 0.0.0.0 as the fix', () => {
    const local: FakeUnit = {
      unit: 'qwen-d1.service',
      execStart: server(30201, 'decode').replace('--host 0.0.0.0', '--host 127.0.0.1'),
    };
    const fleet = fleetOf(
      { 'gpu-a': { addresses: [A], units: GPU_A }, 'gpu-b': { addresses: [B], units: [GPU_B[0], local] } },
      [alias('gpu-a', A), alias('gpu-b', B)],
    );
    expect(fleet.unplaced[0]).toMatchObject({
      code: 'unit-listens-elsewhere',
      fix: 'start qwen-d1.service with --host 0.0.0.0 (or --host 10.1.0.13)',
    });
  });

  it('a host that cannot be reached: its workers say "unreachable: reason", the others are placed', () => {
    const fleet = fleetOf(
      {
        'gpu-a': { addresses: [A], units: GPU_A },
        'gpu-b': { addresses: [B], error: 'cannot connect to gpu-b: connect ECONNREFUSED 10.1.0.13:22' },
      },
      [alias('gpu-a', A), alias('gpu-b', B)],
    );
    expect(fleet.workers.map((w) => [w.url, w.unreachable ?? 'ok'])).toEqual([
      [`http://${A}:30100`, 'ok'],
      [`http://${B}:30200`, 'unreachable: cannot connect to gpu-b: connect ECONNREFUSED 10.1.0.13:22'],
      [`http://${B}:30201`, 'unreachable: cannot connect to gpu-b: connect ECONNREFUSED 10.1.0.13:22'],
    ]);
    expect(fleet.hosts.find((h) => h.id === 'gpu-b')?.unreachable).toMatch(/ECONNREFUSED/);
  });

  it('an SGLang unit no router lists is reported as such', () => {
    const extra: FakeUnit = { unit: 'qwen-d9.service', execStart: server(30209, 'decode') };
    const fleet = fleetOf(
      { 'gpu-a': { addresses: [A], units: GPU_A }, 'gpu-b': { addresses: [B], units: [...GPU_B, extra] } },
      [alias('gpu-a', A), alias('gpu-b', B)],
    );
    expect(fleet.unrouted).toEqual([
      {
        host: 'gpu-b',
        unit: 'qwen-d9.service',
        role: 'decode',
        apiUrl: 'http://127.0.0.1:30209',
        reason: "not in the router's worker list",
      },
    ]);
  });
});

describe('fleet discovery — the router’s list', () => {
  it('reads --prefill URL PORT, --prefill=URL, --decode and --worker-urls from ExecStart', () => {
    const { workers: list } = routerWorkerList(
      {
        prefill: [{ url: 'http://a:1', bootstrapPort: 8998 }, { url: 'http://a:2' }],
        decode: [{ url: 'http://b:3' }],
        workerUrls: ['http://c:4'],
      },
      undefined,
    );
    expect(list).toEqual([
      { url: 'http://a:1', role: 'prefill', sources: ['execstart'], bootstrapPort: 8998 },
      { url: 'http://a:2', role: 'prefill', sources: ['execstart'] },
      { url: 'http://b:3', role: 'decode', sources: ['execstart'] },
      { url: 'http://c:4', role: 'regular', sources: ['execstart'] },
    ]);
  });

  // The real smg shape (sglang-real-shapes.txt §4): WorkerInfo flattens WorkerSpec; DP-aware entries carry
  // dp_base_url/dp_rank/dp_size and a `{base}@{rank}` url.
  const WORKERS = JSON.stringify({
    workers: [
      {
        id: 'http://10.1.0.12:30100',
        url: `http://${A}:30100`,
        model_id: 'qwen3-32b',
        worker_type: 'prefill',
        connection_mode: 'http',
        runtime_type: 'sglang',
        provider: null,
        priority: 50,
        cost: 1.0,
        bootstrap_port: 8998,
        is_healthy: true,
        status: 'ready',
        load: 3,
        job_status: null,
      },
      {
        id: 'w2',
        url: `http://${B}:30200@0`,
        worker_type: 'decode',
        dp_base_url: `http://${B}:30200`,
        dp_rank: 0,
        dp_size: 2,
        is_healthy: true,
        status: 'ready',
        load: 1,
        priority: 50,
        cost: 1.0,
      },
      {
        id: 'w3',
        url: `http://${B}:30200@1`,
        worker_type: 'decode',
        dp_base_url: `http://${B}:30200`,
        dp_rank: 1,
        dp_size: 2,
        is_healthy: true,
        status: 'ready',
        load: 0,
        priority: 50,
        cost: 1.0,
      },
      {
        id: 'w4',
        url: `http://${B}:30201`,
        worker_type: 'decode',
        is_healthy: false,
        status: 'not_ready',
        load: 0,
        priority: 50,
        cost: 1.0,
      },
      { id: 'w5', url: `http://${C}:30300`, worker_type: 'encode', is_healthy: true, load: 0 },
    ],
    total: 5,
    stats: { prefill_count: 1, decode_count: 3, regular_count: 0 },
  });

  it('/workers adds workers registered at run time; DP-aware {base}@{rank} entries replace their flag', () => {
    const fleet = fleetOf(
      { 'gpu-a': { addresses: [A], units: GPU_A }, 'gpu-b': { addresses: [B], units: GPU_B } },
      [alias('gpu-a', A), alias('gpu-b', B)],
      { 'llm-gateway.service': WORKERS },
    );
    expect(fleet.routers[0].workers.map((w) => [w.url, w.sources.join('+')])).toEqual([
      [`http://${A}:30100`, 'execstart+workers-api'],
      [`http://${B}:30201`, 'execstart+workers-api'],
      [`http://${B}:30200@0`, 'execstart+workers-api'],
      [`http://${B}:30200@1`, 'execstart+workers-api'],
    ]);
    const dp = fleet.workers.filter((w) => w.dpRank !== undefined);
    expect(dp.map((w) => [w.url, w.baseUrl, w.dpRank, w.units[0].unit])).toEqual([
      [`http://${B}:30200@0`, `http://${B}:30200`, 0, 'qwen-d0.service'],
      [`http://${B}:30200@1`, `http://${B}:30200`, 1, 'qwen-d0.service'],
    ]);
  });

  it('parses a DP-aware URL without reading `host:port@rank` as user:password@host', () => {
    expect(parseWorkerUrl('http://10.1.0.13:30200@3')).toEqual({
      url: 'http://10.1.0.13:30200@3',
      baseUrl: 'http://10.1.0.13:30200',
      dpRank: 3,
      host: '10.1.0.13',
      port: 30200,
      protocol: 'http:',
    });
    expect(parseWorkerUrl('10.1.0.13:30200')).toMatchObject({ host: '10.1.0.13', port: 30200 });
    expect(parseWorkerUrl('grpc://10.1.0.13:30200')).toEqual({
      error: '"grpc://10.1.0.13:30200" is not an http(s) URL (grpc)',
    });
  });

  it('says what in a /workers answer is not the documented shape', () => {
    expect(() => parseWorkersAnswer('<html>')).toThrow(
      '/workers did not answer JSON (6 bytes, starts "<html>")',
    );
    expect(() => parseWorkersAnswer('{"workers":[{"id":1}]}')).toThrow(
      '/workers: workers[0] has no "url" string',
    );
    expect(() => parseWorkersAnswer('{"total":0}')).toThrow(
      '/workers answered JSON without a "workers" array',
    );
  });

  it('two routers over the same workers: both shown, each with its own list', () => {
    const second: FakeUnit = {
      unit: 'llm-gateway-canary.service',
      execStart: router(`--prefill http://${A}:30100 8998 --decode http://${B}:30201`, 30002).replace(
        '29001',
        '29002',
      ),
    };
    const fleet = fleetOf(
      { 'gpu-a': { addresses: [A], units: [...GPU_A, second] }, 'gpu-b': { addresses: [B], units: GPU_B } },
      [alias('gpu-a', A), alias('gpu-b', B)],
    );
    expect(fleet.routers.map((r) => [r.id, r.workers.length])).toEqual([
      ['gpu-a/llm-gateway.service', 3],
      ['gpu-a/llm-gateway-canary.service', 2],
    ]);
    expect(fleet.workers.map((w) => [w.url, w.listedBy.length])).toEqual([
      [`http://${A}:30100`, 2],
      [`http://${B}:30200`, 1],
      [`http://${B}:30201`, 2],
    ]);
  });
});

describe('fleet discovery — a worker spanning two nodes', () => {
  const dist = `--nnodes 2 --dist-init-addr ${B}:5757`;
  const rank0: FakeUnit = {
    unit: 'qwen-d2.service',
    execStart: server(30202, 'decode', `${dist} --node-rank 0 --base-gpu-id 6`),
  };
  const rank1: FakeUnit = {
    unit: 'qwen-d2.service',
    execStart: server(30202, 'decode', `${dist} --node-rank 1`),
  };
  const routerUnit: FakeUnit = {
    unit: 'llm-gateway.service',
    execStart: router(`--prefill http://${A}:30100 8998 --decode http://${B}:30202`),
  };
  const hosts = {
    'gpu-a': { addresses: [A], units: [routerUnit, GPU_A[1]] },
    'gpu-b': { addresses: [B], units: [rank0] },
  };

  it('pairs node ranks by --dist-init-addr and --nnodes across hosts: one worker, units sorted by rank', () => {
    const scans: HostScan[] = [
      { host: 'gpu-a', via: 'origin', addresses: [A], found: foundOn('gpu-a', hosts['gpu-a'].units) },
      { host: 'gpu-b', via: 'alias', addresses: [B], found: foundOn('gpu-b', [rank0]) },
      { host: 'gpu-c', via: 'added', addresses: [C], found: foundOn('gpu-c', [rank1]) },
    ];
    const fleet = assembleFleet({
      origin: 'gpu-a',
      scans,
      routers: scans[0].found!.filter((d) => d.kind === 'router').map((unit) => ({ host: 'gpu-a', unit })),
      placement: (h) => placeHost(h, scans[0], scans.slice(1), [alias('gpu-b', B)], [], CONFIG),
    });
    const d = fleet.workers.find((w) => w.role === 'decode')!;
    expect(d.units.map((u) => [u.host, u.unit, u.nodeRank, u.nnodes, u.gpus])).toEqual([
      ['gpu-b', 'qwen-d2.service', 0, 2, [6, 7]],
      ['gpu-c', 'qwen-d2.service', 1, 2, [0, 1]],
    ]);
    expect(d.missingRanks).toBeUndefined();
    expect(fleet.unrouted).toEqual([]);
  });

  it('without the other node’s host: the worker says which rank is missing and how to add it', () => {
    const fleet = fleetOf(hosts, [alias('gpu-a', A), alias('gpu-b', B)]);
    const d = fleet.workers.find((w) => w.role === 'decode')!;
    expect(d.units).toHaveLength(1);
    expect(d.missingRanks).toEqual([1]);
    expect(d.notes[0]).toBe(
      `node rank(s) 1 of 2 (--dist-init-addr ${B}:5757) run on no host scanned (gpu-a, gpu-b); add that host with --add-host`,
    );
  });
});

describe('fleet discovery — one host, 1P1D, stays the simple case', () => {
  it('loopback URLs are the router’s own host; nothing else is scanned', () => {
    const units: FakeUnit[] = [
      {
        unit: 'r.service',
        execStart: router('--prefill http://127.0.0.1:30100 8998 --decode http://localhost:30200'),
      },
      { unit: 'p.service', execStart: server(30100, 'prefill') },
      { unit: 'd.service', execStart: server(30200, 'decode') },
    ];
    const fleet = fleetOf({ box: { addresses: ['192.168.1.5'], units } }, []);
    expect(fleet.workers.map((w) => [w.role, w.host])).toEqual([
      ['prefill', 'box'],
      ['decode', 'box'],
    ]);
  });
});

describe('a multi-node worker’s other nodes, from rank 0’s --dist-init-addr peers', () => {
  it('reads the peer addresses of `ss -Htn` lines: IPv4, IPv4-mapped IPv6, bracketed IPv6 with a zone', () => {
    const text = [
      '0      0      10.1.0.13:5757      10.1.0.14:41872',
      '0      0      10.1.0.13:5757      10.1.0.14:41874',
      '0      0      [::ffff:10.1.0.13]:5757      [::ffff:10.1.0.15]:39000',
      '0      0      [fe80::1%eth0]:5757      [fe80::2%eth0]:39002',
      'garbage',
      '',
    ].join('\n');
    expect(parseSsPeers(text)).toEqual(['10.1.0.14', '10.1.0.15', 'fe80::2']);
    expect(nodePeersCommand(5757)).toBe("ss -Htn state established '( sport = :5757 )'");
    expect(() => nodePeersCommand(70000)).toThrow('not a port: 70000');
    expect(distInitPort('10.1.0.13:5757')).toBe(5757);
    expect(distInitPort('[fd00::1]:5757')).toBe(5757);
    expect(distInitPort('10.1.0.13')).toBeUndefined();
  });
});

describe('fleet discovery — started on a worker host with no router', () => {
  it('its SGLang units are reported as no router’s, with where to start instead', () => {
    const fleet = fleetOf({ 'gpu-b': { addresses: [B], units: GPU_B } }, []);
    expect(fleet.workers).toEqual([]);
    expect(fleet.unrouted.map((u) => [u.unit, u.reason])).toEqual([
      [
        'qwen-d0.service',
        'no router found on gpu-b; start from the host that runs the router (pd-console status --host ROUTER_HOST)',
      ],
      [
        'qwen-d1.service',
        'no router found on gpu-b; start from the host that runs the router (pd-console status --host ROUTER_HOST)',
      ],
    ]);
  });
});
