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

/** The default fleet's host names; they are also the ssh aliases the written config gives them. */
export const FLEET_HOSTS = ['gpu-a', 'gpu-b', 'gpu-c'] as const;
/** "gpu-a", "gpu-b", …: a scaled fleet has more than the default three. */
export type FleetHostName = string;

/** How many hosts and workers a demo fleet has. The default is the hand-laid 3 hosts, 2 prefill, 3 decode. */
export interface FleetShape {
  hosts: number;
  prefill: number;
  decode: number;
}

export const DEFAULT_FLEET_SHAPE: FleetShape = { hosts: 3, prefill: 2, decode: 3 };

/** A host has 8 GPUs and a worker at least one of them; ports 30100+n / 30200+n leave room for 100 per role. */
const MAX_FLEET_HOSTS = 26;
const MAX_WORKERS_PER_HOST = 8;
const MAX_WORKERS_PER_ROLE = 100;

export const isDefaultFleetShape = (s: FleetShape): boolean =>
  s.hosts === DEFAULT_FLEET_SHAPE.hosts &&
  s.prefill === DEFAULT_FLEET_SHAPE.prefill &&
  s.decode === DEFAULT_FLEET_SHAPE.decode;

/** Says what is wrong with a shape and what would work, or null when it can be built. */
export function fleetShapeProblem(s: FleetShape): string | null {
  const whole = (n: number): boolean => Number.isInteger(n) && n >= 1;
  if (!whole(s.hosts) || s.hosts > MAX_FLEET_HOSTS)
    return `hosts ${s.hosts}: give a whole number from 1 to ${MAX_FLEET_HOSTS} (gpu-a … gpu-z)`;
  if (
    !whole(s.prefill) ||
    !whole(s.decode) ||
    s.prefill > MAX_WORKERS_PER_ROLE ||
    s.decode > MAX_WORKERS_PER_ROLE
  )
    return `prefill ${s.prefill}, decode ${s.decode}: give whole numbers from 1 to ${MAX_WORKERS_PER_ROLE} each`;
  const perHost = Math.ceil((s.prefill + s.decode) / s.hosts);
  if (perHost > MAX_WORKERS_PER_HOST)
    return (
      `${s.prefill + s.decode} workers on ${s.hosts} hosts is ${perHost} on a host, but a host has ` +
      `${MAX_WORKERS_PER_HOST} GPUs: use at least ${Math.ceil((s.prefill + s.decode) / MAX_WORKERS_PER_HOST)} hosts`
    );
  return null;
}

/** Host names of a fleet of `n` hosts: gpu-a, gpu-b, … */
export function fleetHostNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `gpu-${String.fromCharCode(97 + i)}`);
}

/** The address each host wants: 127.0.0.2, .3, … in order. */
export function fleetAddresses(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((n, i) => [n, `127.0.0.${2 + i}`]));
}

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
  /** Default DEFAULT_FLEET_SHAPE, laid out by hand; any other is laid out by scaledFleetTopology. */
  shape?: FleetShape;
}

/** Unit key of a fleet unit: "host/unit name". */
export const fleetKey = (host: FleetHostName, unit: string): string => `${host}/${unit}`;

export function fleetTopology(opts: FleetTopologyOptions): Topology {
  if (opts.shape && !isDefaultFleetShape(opts.shape)) return scaledFleetTopology(opts, opts.shape);
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

/** Largest power of two ≤ n (tensor-parallel sizes are powers of two). */
const pow2 = (n: number): number => 2 ** Math.floor(Math.log2(Math.max(1, n)));

/**
 * A fleet of any shape, for the scale benchmark: the router on the first host; the workers (prefill first, then
 * decode) laid over the hosts in order, as evenly as they go, each host's 8 GPUs split between its workers
 * (tp a power of two); one-node workers only. Shares are uneven (the first of each role gets the most), so
 * some workers run fuller than others. The default shape keeps the hand-laid layout above.
 */
export function scaledFleetTopology(opts: FleetTopologyOptions, shape: FleetShape): Topology {
  const problem = fleetShapeProblem(shape);
  if (problem) throw new RangeError(`demo fleet: ${problem}`);
  const names = fleetHostNames(shape.hosts);
  const a = opts.addresses;
  for (const n of names)
    if (!a[n])
      throw new RangeError(`demo fleet: no address for host ${n}; give one per host (${names.join(', ')})`);
  const roles: Array<{ role: 'prefill' | 'decode'; n: number }> = [
    ...Array.from({ length: shape.prefill }, (_, n) => ({ role: 'prefill' as const, n })),
    ...Array.from({ length: shape.decode }, (_, n) => ({ role: 'decode' as const, n })),
  ];
  const total = roles.length;
  const hostOf = (i: number): string => names[Math.floor((i * shape.hosts) / total)];
  const onHost = new Map<string, number>();
  for (let i = 0; i < total; i++) onHost.set(hostOf(i), (onHost.get(hostOf(i)) ?? 0) + 1);
  const nextGpu = new Map<string, number>();
  const units: UnitDefinition[] = [];
  const workers: RouterSpec['workers'] = [];
  const weights: Record<string, number> = {};
  roles.forEach(({ role, n }, i) => {
    const host = hostOf(i);
    const tp = pow2(Math.floor(8 / (onHost.get(host) ?? 1)));
    const baseGpu = nextGpu.get(host) ?? 0;
    nextGpu.set(host, baseGpu + tp);
    const port = (role === 'prefill' ? 30100 : 30200) + n;
    const bootstrapPort = role === 'prefill' ? 8998 + n : undefined;
    const name = `sglang-${role}-${n}.service`;
    const key = fleetKey(host, name);
    units.push(
      serverUnit(key, host, name, {
        role,
        worker: `${role}-${n}`,
        port,
        listenHost: '0.0.0.0',
        baseGpu,
        tp,
        dpRanks: 1,
        ...(bootstrapPort !== undefined ? { bootstrapPort } : {}),
        metrics: !opts.metricsDisabled.has(role),
        capacity:
          role === 'prefill'
            ? Math.round((PREFILL_CAPACITY * tp) / 4)
            : tp >= 4
              ? Math.round((DECODE_TP4_CAPACITY * tp) / 4)
              : Math.round((DECODE_TP2_CAPACITY * tp) / 2),
      }),
    );
    workers.push({
      role,
      url: `http://${a[host]}:${port}`,
      ...(bootstrapPort ? { bootstrapPort } : {}),
      unit: key,
    });
    weights[key] = 1 / (1 + 0.15 * n);
  });
  const routerHost = names[0];
  units.push(
    routerUnit(
      fleetKey(routerHost, 'sglang-router.service'),
      routerHost,
      'sglang-router.service',
      { apiPort: FLEET_PORTS.routerApi, metricsPort: FLEET_PORTS.routerMetrics, workers },
      units.filter((u) => u.host === routerHost).map((u) => u.name),
      opts.engineMetrics ?? false,
    ),
  );
  return {
    hosts: names.map((id) => ({ id, hostname: id, address: a[id], gpuCount: 8 })),
    units,
    weights,
    // The default fleet's offered load per worker (2.0 over 5 workers), kept as the fleet grows.
    rateScale: (2.0 * total) / 5,
  };
}
