// What a simulated world is made of: its hosts and the units on them. The single demo host is one host
// with three units; the demo fleet is three hosts with a router, two prefill and three decode workers, one
// of which spans two hosts (see docs/demo-fleet.md).
import {
  GPU_COUNT,
  HOSTNAME,
  PORTS,
  TP_SIZE,
  buildUnits,
  routerUnit,
  serverUnit,
  type RouterSpec,
  type ServerSpec,
  type UnitDefinition,
  type UnitOptions,
} from './units';

export interface HostSpec {
  /** Id inside the simulation ("demo", "gpu-a", …). */
  id: string;
  /** What `hostname` prints. */
  hostname: string;
  /** The address the host is reached at (its SSH listener and the address in worker URLs). */
  address: string;
  gpuCount: number;
}

export interface Topology {
  hosts: HostSpec[];
  /** In start order: servers before the router that lists them. */
  units: UnitDefinition[];
  /** The router's share of requests per server unit key (normalised per role); absent = equal shares. */
  weights?: Record<string, number>;
  /** Offered load relative to the single host's. */
  rateScale?: number;
}

export const SINGLE_HOST_ID = 'demo';

export function singleHostTopology(opts: UnitOptions): Topology {
  const u = buildUnits(opts);
  return {
    hosts: [{ id: SINGLE_HOST_ID, hostname: HOSTNAME, address: '127.0.0.1', gpuCount: GPU_COUNT }],
    units: [u.prefill, u.decode, u.router],
  };
}

/** The fleet's host names; they are also the ssh aliases the written config gives them. */
export const FLEET_HOSTS = ['gpu-a', 'gpu-b', 'gpu-c'] as const;
export type FleetHostName = (typeof FLEET_HOSTS)[number];

export const FLEET_PORTS = {
  routerApi: PORTS.routerApi,
  routerMetrics: PORTS.routerMetrics,
  prefill: [30100, 30101],
  bootstrap: [8998, 8999],
  decode: [30200, 30201, 30202],
  distInit: 5757,
} as const;

/** KV pools: tp 4 as on the single host; decode-1 runs tp 2 on half the GPUs with twice the weights per GPU. */
const PREFILL_CAPACITY = 447_416;
const DECODE_TP4_CAPACITY = 2_580_000;
const DECODE_TP2_CAPACITY = 1_083_600;

export interface FleetTopologyOptions extends UnitOptions {
  /** Address of each host (127.0.0.2/.3/.4, or all 127.0.0.1 in the fallback). */
  addresses: Record<FleetHostName, string>;
}

/** Unit key of a fleet unit: "host/unit name". */
export const fleetKey = (host: FleetHostName, unit: string): string => `${host}/${unit}`;

export function fleetTopology(opts: FleetTopologyOptions): Topology {
  const a = opts.addresses;
  const metrics = (role: 'prefill' | 'decode'): boolean => !opts.metricsDisabled.has(role);
  const units: UnitDefinition[] = [];
  const server = (host: FleetHostName, n: number, spec: ServerSpec): void => {
    const name = `sglang-${spec.role}-${n}.service`;
    units.push(serverUnit(fleetKey(host, name), host, name, spec));
  };
  const prefill = (n: number): ServerSpec => ({
    role: 'prefill',
    worker: `prefill-${n}`,
    port: FLEET_PORTS.prefill[n],
    listenHost: '0.0.0.0',
    baseGpu: 4 * n,
    tp: TP_SIZE,
    dpRanks: 1,
    bootstrapPort: FLEET_PORTS.bootstrap[n],
    metrics: metrics('prefill'),
    capacity: PREFILL_CAPACITY,
  });
  server('gpu-a', 0, prefill(0));
  server('gpu-a', 1, prefill(1));
  const decode = (n: number, baseGpu: number, tp: number, capacity: number): ServerSpec => ({
    role: 'decode',
    worker: `decode-${n}`,
    port: FLEET_PORTS.decode[n],
    listenHost: '0.0.0.0',
    baseGpu,
    tp,
    dpRanks: n === 0 ? opts.dpRanks : 1,
    metrics: metrics('decode'),
    capacity,
  });
  server('gpu-b', 0, decode(0, 0, 4, DECODE_TP4_CAPACITY));
  server('gpu-b', 1, decode(1, 4, 2, DECODE_TP2_CAPACITY));
  const d2 = 'sglang-decode-2.service';
  const distInitAddr = `${a['gpu-b']}:${FLEET_PORTS.distInit}`;
  server('gpu-b', 2, {
    ...decode(2, 6, 4, DECODE_TP4_CAPACITY),
    node: { rank: 0, nnodes: 2, distInitAddr, peer: fleetKey('gpu-c', d2) },
  });
  server('gpu-c', 2, {
    ...decode(2, 0, 4, DECODE_TP4_CAPACITY),
    node: { rank: 1, nnodes: 2, distInitAddr, peer: fleetKey('gpu-b', d2) },
  });
  const router: RouterSpec = {
    apiPort: FLEET_PORTS.routerApi,
    metricsPort: FLEET_PORTS.routerMetrics,
    workers: [
      ...[0, 1].map((n) => ({
        role: 'prefill' as const,
        url: `http://${a['gpu-a']}:${FLEET_PORTS.prefill[n]}`,
        bootstrapPort: FLEET_PORTS.bootstrap[n],
        unit: fleetKey('gpu-a', `sglang-prefill-${n}.service`),
      })),
      ...[0, 1, 2].map((n) => ({
        role: 'decode' as const,
        url: `http://${a['gpu-b']}:${FLEET_PORTS.decode[n]}`,
        unit: fleetKey('gpu-b', `sglang-decode-${n}.service`),
      })),
    ],
  };
  units.push(
    routerUnit(
      fleetKey('gpu-a', 'sglang-router.service'),
      'gpu-a',
      'sglang-router.service',
      router,
      ['sglang-prefill-0.service', 'sglang-prefill-1.service'],
      opts.engineMetrics ?? false,
    ),
  );
  const w = (host: FleetHostName, unit: string, share: number): [string, number] => [
    fleetKey(host, unit),
    share,
  ];
  return {
    hosts: FLEET_HOSTS.map((id) => ({ id, hostname: id, address: a[id], gpuCount: 8 })),
    units,
    // Uneven on purpose: decode-1 (the smallest pool) gets a third of the decode traffic and runs near full.
    weights: Object.fromEntries([
      w('gpu-a', 'sglang-prefill-0.service', 0.6),
      w('gpu-a', 'sglang-prefill-1.service', 0.4),
      w('gpu-b', 'sglang-decode-0.service', 0.45),
      w('gpu-b', 'sglang-decode-1.service', 0.35),
      w('gpu-b', 'sglang-decode-2.service', 0.2),
    ]),
    rateScale: 2.0,
  };
}
