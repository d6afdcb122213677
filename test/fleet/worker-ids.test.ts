// One numbering of a fleet's workers for everything that names them: the deployment's services, the roll (its
// plan, its messages, `restart decode@…`) and the CLI all say `decode-1` for the same worker — the router's
// order, never the unit names, which here deliberately disagree with it. A DP-aware router lists one server
// once per DP rank (`{base}@{rank}`): that server is one worker, one service, one scrape of its one endpoint.
import { expect, it } from 'vitest';
import {
  assembleFleet,
  placeHost,
  type HostScan,
  type RouterScan,
} from '../../src/main/core/discovery/fleet';
import { parseWorkersAnswer } from '../../src/main/core/discovery/router-workers';
import { fleetServices } from '../../src/main/core/deployment/fleet-config';
import { rollWorkersOfFleet } from '../../src/main/core/actions/roll-fleet';
import { findRollWorker } from '../../src/main/core/actions/roll-plan';
import { alias, foundOn, router, server, type FakeUnit } from '../discovery/fleet-units';

const A = '10.1.0.12';
const B = '10.1.0.13';

// The router lists decode :30201 before :30200, but the units are numbered the other way round.
const ROUTER: FakeUnit = {
  unit: 'sglang-router.service',
  execStart: router(`--prefill http://${A}:30100 8998 --decode http://${B}:30201 --decode http://${B}:30200`),
};
const GPU_A: FakeUnit[] = [ROUTER, { unit: 'sglang-prefill-0.service', execStart: server(30100, 'prefill') }];
const GPU_B: FakeUnit[] = [
  {
    unit: 'sglang-decode-0.service',
    execStart: server(30200, 'decode', '--dp-size 2 --enable-dp-attention'),
  },
  { unit: 'sglang-decode-1.service', execStart: server(30201, 'decode', '--base-gpu-id 4') },
];

/** The router's live list in the real smg shape: :30200 runs DP attention and is listed once per rank. */
const WORKERS = JSON.stringify({
  workers: [
    { id: 'p0', url: `http://${A}:30100`, worker_type: 'prefill', bootstrap_port: 8998, is_healthy: true },
    { id: 'd1', url: `http://${B}:30201`, worker_type: 'decode', is_healthy: true },
    ...[0, 1].map((rank) => ({
      id: `d0-${rank}`,
      url: `http://${B}:30200@${rank}`,
      worker_type: 'decode',
      dp_base_url: `http://${B}:30200`,
      dp_rank: rank,
      dp_size: 2,
      is_healthy: true,
    })),
  ],
  total: 4,
  stats: { prefill_count: 1, decode_count: 3, regular_count: 0 },
});

function fleet() {
  const scans: HostScan[] = [
    { host: 'gpu-a', via: 'origin', addresses: [A], found: foundOn('gpu-a', GPU_A) },
    { host: 'gpu-b', via: 'alias', addresses: [B], found: foundOn('gpu-b', GPU_B) },
  ];
  const routers: RouterScan[] = (scans[0].found ?? [])
    .filter((d) => d.kind === 'router')
    .map((unit) => ({ host: 'gpu-a', unit, workersApi: parseWorkersAnswer(WORKERS) }));
  const aliases = [alias('gpu-a', A), alias('gpu-b', B)];
  return assembleFleet({
    origin: 'gpu-a',
    scans,
    routers,
    placement: (h) => placeHost(h, scans[0], [], aliases, [], '~/.ssh/config'),
  });
}

it('a DP-aware server listed as @0 and @1 is one service, scraped once at its one endpoint', () => {
  const f = fleet();
  expect(f.workers.filter((w) => w.baseUrl === `http://${B}:30200`).map((w) => w.url)).toEqual([
    `http://${B}:30200@0`,
    `http://${B}:30200@1`,
  ]);
  const { services } = fleetServices(f);
  const decode = services.filter((s) => s.role === 'decode');
  expect(decode.map((s) => [s.id, s.workerUrl, s.unit])).toEqual([
    ['decode-0', `http://${B}:30201`, 'sglang-decode-1.service'],
    ['decode-1', `http://${B}:30200`, 'sglang-decode-0.service'],
  ]);
  // The monitor scrapes each service's endpoints: no endpoint twice.
  const endpoints = services.flatMap((s) => [s.apiUrl, ...(s.metricsUrl ? [s.metricsUrl] : [])]);
  expect(new Set(endpoints).size).toBe(endpoints.length);
});

it("the roll names every worker by the deployment's id (router order), not by its unit's name", () => {
  const f = fleet();
  const ids = fleetServices(f).services.map((s) => s.id);
  const { workers, left } = rollWorkersOfFleet(f);
  expect(left).toEqual([]);
  expect(workers.map((w) => w.name)).toEqual(ids);
  expect(workers.map((w) => `${w.name} ${w.units.map((u) => u.unit).join(',')}`)).toEqual([
    'router sglang-router.service',
    'prefill-0 sglang-prefill-0.service',
    'decode-0 sglang-decode-1.service',
    'decode-1 sglang-decode-0.service',
  ]);
  // `restart decode@decode-1` is the worker the screens call decode-1, and its DP ranks are one worker.
  const d1 = findRollWorker(workers, 'decode-1');
  expect(d1?.units[0].unit).toBe('sglang-decode-0.service');
  expect(d1?.routerUrls).toEqual([`http://${B}:30200@0`, `http://${B}:30200@1`]);
  expect(findRollWorker(workers, `http://${B}:30200`)?.name).toBe('decode-1');
});
