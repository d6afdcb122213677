// Fleet discovery's pure half on a router that lists thousands of workers: its /workers body read
// (parseWorkersAnswer) and the fleet assembled from it (assembleFleet: the router's merged, de-duplicated,
// bounded list, every worker placed and matched to a unit), at 1,000, 4,000 and 10,002 listed workers. The
// ratio is time at n ÷ time at 1,000: ≈ n/1000 is linear, ≈ (n/1000)² quadratic. Runs on any tree whose
// assembleFleet takes these inputs, so a before and an after are measured by one script.
//   npm run bench -- router-workers
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { assembleFleet, placeHost, type HostScan } from '../src/main/core/discovery/fleet';
import { parseWorkersAnswer } from '../src/main/core/discovery/router-workers';
import { alias, foundOn, router, server } from '../test/discovery/fleet-units';

const A = '10.1.0.12';
const B = '10.1.0.13';

function body(n: number): string {
  const workers = Array.from({ length: n }, (_, i) => ({
    id: `w${i}`,
    url: `http://${B}:${20_000 + i}`,
    worker_type: 'decode',
    connection_mode: 'http',
    runtime_type: 'sglang',
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

function discoverOnce(text: string): { workers: number; unplaced: number } {
  const scans: HostScan[] = [
    {
      host: 'gpu-a',
      via: 'origin',
      addresses: [A],
      found: foundOn('gpu-a', [
        {
          unit: 'llm-gateway.service',
          execStart: router(`--prefill http://${A}:30100 8998 --decode http://${B}:30200`),
        },
        { unit: 'qwen-p0.service', execStart: server(30100, 'prefill') },
      ]),
    },
    {
      host: 'gpu-b',
      via: 'alias',
      addresses: [B],
      found: foundOn('gpu-b', [{ unit: 'qwen-d0.service', execStart: server(30200, 'decode') }]),
    },
  ];
  const aliases = [alias('gpu-a', A), alias('gpu-b', B)];
  const fleet = assembleFleet({
    origin: 'gpu-a',
    scans,
    routers: (scans[0].found ?? [])
      .filter((d) => d.kind === 'router')
      .map((unit) => ({ host: 'gpu-a', unit, workersApi: parseWorkersAnswer(text) })),
    placement: (h) => placeHost(h, scans[0], [], aliases, [], '~/.ssh/config'),
  });
  return { workers: fleet.workers.length, unplaced: fleet.unplaced.length };
}

export function runRouterWorkersBench(): void {
  console.log(
    'Fleet discovery of one router listing n workers (/workers read + fleet assembled; best of 3, 1 above 4,000)',
  );
  let base = 0;
  for (const n of [1000, 4000, 10_002]) {
    const text = body(n);
    let best = Infinity;
    let got = { workers: 0, unplaced: 0 };
    for (let i = 0; i < (n > 4000 ? 1 : 3); i++) {
      const t = performance.now();
      got = discoverOnce(text);
      best = Math.min(best, performance.now() - t);
    }
    if (n === 1000) base = best;
    console.log(
      `  ${n.toLocaleString('en-US').padStart(6)} workers listed: ${best.toFixed(1).padStart(9)} ms ` +
        `(×${(best / base).toFixed(1)} of 1,000)  → ${got.workers} placed, ${got.unplaced} unplaced`,
    );
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href)
  runRouterWorkersBench();
