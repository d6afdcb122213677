// What `status --json` makes of a fleet and one reading of it: a DP-aware worker (`{base}@{rank}`) is one rank of
// its server's pool, so it gets that rank's tokens and the role total counts the server once; a multi-node
// worker lists its units with their node ranks; an unreachable worker says why and the others keep figures.
import { describe, expect, it } from 'vitest';
import type { KvUsage } from '@shared/domain';
import type { Fleet, FleetWorker } from '@shared/fleet';
import { fleetReport } from '../../src/main/cli/status-report';
import { serverKey, unitKey, type FleetReading } from '../../src/main/cli/fleet-reading';

const worker = (
  w: Partial<FleetWorker> & Pick<FleetWorker, 'url' | 'role' | 'host' | 'apiUrl'>,
): FleetWorker => ({
  baseUrl: w.url.replace(/@\d+$/, ''),
  units: [{ host: w.host, unit: 'u.service', nodeRank: 0, nnodes: 1 }],
  listedBy: ['gpu-a/r.service'],
  notes: [],
  ...w,
});

const kv = (used: number, capacity: number, ranks?: KvUsage['ranks']): KvUsage => ({
  usedTokens: used,
  capacityTokens: capacity,
  ratio: used / capacity,
  source: 'kv_tokens',
  sourceMetrics: [],
  ...(ranks ? { ranks } : {}),
});

const active = {
  state: {
    unit: 'u.service',
    loadState: 'loaded',
    activeState: 'active',
    subState: 'running',
    mainPid: 1,
    nRestarts: 0,
    activeEnterTimestamp: null,
    result: 'success',
  },
};
const healthy = { ok: true, status: 200, detail: '200 OK', checkedAt: 0 };

describe('fleetReport', () => {
  const fleet: Fleet = {
    origin: 'gpu-a',
    hosts: [
      { id: 'gpu-a', via: 'origin', addresses: [] },
      { id: 'gpu-b', via: 'alias', addresses: [] },
    ],
    routers: [],
    workers: [
      worker({ url: 'http://b:1@0', dpRank: 0, role: 'decode', host: 'gpu-b', apiUrl: 'http://127.0.0.1:1' }),
      worker({ url: 'http://b:1@1', dpRank: 1, role: 'decode', host: 'gpu-b', apiUrl: 'http://127.0.0.1:1' }),
      worker({
        url: 'http://b:2',
        role: 'decode',
        host: 'gpu-b',
        apiUrl: 'http://127.0.0.1:2',
        units: [
          { host: 'gpu-b', unit: 'u.service', nodeRank: 0, nnodes: 2 },
          { host: 'gpu-c', unit: 'u.service', nodeRank: 1, nnodes: 2 },
        ],
      }),
      worker({
        url: 'http://a:3',
        role: 'prefill',
        host: 'gpu-a',
        apiUrl: 'http://127.0.0.1:3',
        unreachable: 'unreachable: gpu-a: timed out',
      }),
    ],
    unplaced: [],
    unrouted: [],
  };
  const reading: FleetReading = {
    units: new Map([
      [unitKey('gpu-b', 'u.service'), active],
      [unitKey('gpu-c', 'u.service'), active],
    ]),
    servers: new Map([
      [
        serverKey('gpu-b', 'http://127.0.0.1:1'),
        {
          health: healthy,
          kv: kv(900, 2000, [
            { rank: '0', used: 800, capacity: 1000, ratio: 0.8 },
            { rank: '1', used: 100, capacity: 1000, ratio: 0.1 },
          ]),
        },
      ],
      [serverKey('gpu-b', 'http://127.0.0.1:2'), { health: healthy, kv: kv(50, 1000) }],
    ]),
  };
  const r = fleetReport(fleet, reading);

  it('a DP-aware worker gets its rank’s tokens; the role total counts the shared server once', () => {
    expect(r.services.slice(0, 2).map((s) => [s.url, s.kv?.usedTokens, s.kv?.capacityTokens])).toEqual([
      ['http://b:1@0', 800, 1000],
      ['http://b:1@1', 100, 1000],
    ]);
    expect(r.roles.decode).toEqual({
      workers: 3,
      healthy: 3,
      kv: { usedTokens: 950, capacityTokens: 3000, ratio: 950 / 3000 },
      fullest: { name: 'decode-0 dp rank 0', url: 'http://b:1@0', ratio: 0.8 },
    });
  });

  it('names each worker as the app does (decode-1), one rank of a DP-aware server by its rank', () => {
    expect(r.services.map((s) => s.name)).toEqual([
      'decode-0 dp rank 0',
      'decode-0 dp rank 1',
      'decode-1',
      'prefill-0',
    ]);
  });

  it('a multi-node worker lists every unit with its node rank and state', () => {
    expect(r.services[2].units).toEqual([
      { host: 'gpu-b', unit: 'u.service', nodeRank: 0, activeState: 'active' },
      { host: 'gpu-c', unit: 'u.service', nodeRank: 1, activeState: 'active' },
    ]);
  });

  it('an unreachable worker says why, with no figures', () => {
    expect(r.services[3]).toMatchObject({
      url: 'http://a:3',
      health: 'unreachable: gpu-a: timed out',
      error: 'unreachable: gpu-a: timed out',
      activeState: null,
    });
    expect(r.services[3].kv).toBeUndefined();
    expect(r.roles.prefill).toEqual({
      workers: 1,
      healthy: 0,
      kv: { usedTokens: 0, capacityTokens: 0, ratio: null },
    });
  });
});
