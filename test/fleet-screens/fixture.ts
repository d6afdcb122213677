// Fleet summaries, observations and dashboard values as the core sends them, for the screens' logic: the demo
// fleet's shape (router + 2 prefill on gpu-a, 3 decode on gpu-b, decode-2 spanning gpu-b and gpu-c) and an
// NpMd fleet spread over hosts for the 8P8D layout.
import type { DashboardSnapshot } from '../../src/shared/contract';
import type {
  ConnectionStatus,
  DeploymentSummary,
  HostConfig,
  Observation,
  ServiceConfig,
  ServiceObservation,
} from '../../src/shared/domain';
import type { Fleet, FleetWorker } from '../../src/shared/fleet';

const host = (id: string): HostConfig => ({ id, label: id, kind: 'ssh', alias: id });
const connected: ConnectionStatus = { state: 'connected', since: 1 };

export interface WorkerSpec {
  id: string;
  role: 'prefill' | 'decode';
  host: string;
  port: number;
  kv?: [used: number, capacity: number];
  active?: string;
  /** Its last /health answer; null: none since it started. */
  health?: boolean | null;
  /** When its process started (systemd's ActiveEnterTimestamp). */
  startedAt?: number;
  running?: number;
  queued?: number;
  /** PD stage queues by signal name (`prefill_bootstrap_queue`, …); absent ones are not reported. */
  stage?: Record<string, number>;
  /** Extra node-rank ≥ 1 units on other hosts. */
  peers?: { host: string; gpus: number[] }[];
  gpus?: number[];
}

export function fleetFixture(
  workers: WorkerSpec[],
  opts: { hosts: string[]; links?: Record<string, ConnectionStatus>; fleet?: Partial<Fleet> } = { hosts: [] },
): { summary: DeploymentSummary; latest: Observation; dashboard: DashboardSnapshot } {
  const origin = opts.hosts[0];
  const services: ServiceConfig[] = [
    {
      role: 'router',
      id: 'router',
      hostId: origin,
      unit: 'sglang-router.service',
      apiUrl: 'http://127.0.0.1:30001',
    },
    ...workers.map((w): ServiceConfig => {
      const url = `http://${w.host}:${w.port}`;
      const unit = `sglang-${w.id}.service`;
      return {
        role: w.role,
        id: w.id,
        workerUrl: url,
        hostId: w.host,
        unit,
        apiUrl: url,
        gpus: w.gpus,
        units: [
          { hostId: w.host, unit, nodeRank: 0 },
          ...(w.peers ?? []).map((p, i) => ({ hostId: p.host, unit, nodeRank: i + 1 })),
        ],
      };
    }),
  ];
  const fleetWorkers: FleetWorker[] = workers.map((w) => ({
    url: `http://${w.host}:${w.port}`,
    role: w.role,
    baseUrl: `http://${w.host}:${w.port}`,
    host: w.host,
    apiUrl: `http://${w.host}:${w.port}`,
    units: [
      {
        host: w.host,
        unit: `sglang-${w.id}.service`,
        nodeRank: 0,
        nnodes: 1 + (w.peers?.length ?? 0),
        gpus: w.gpus,
      },
      ...(w.peers ?? []).map((p, i) => ({
        host: p.host,
        unit: `sglang-${w.id}.service`,
        nodeRank: i + 1,
        nnodes: 1 + (w.peers?.length ?? 0),
        gpus: p.gpus,
      })),
    ],
    listedBy: ['gpu-a/sglang-router.service'],
    notes: [],
  }));
  const fleet: Fleet = {
    origin,
    hosts: opts.hosts.map((h, i) => ({ id: h, via: i === 0 ? 'origin' : 'alias', addresses: [] })),
    routers: [
      {
        id: `${origin}/sglang-router.service`,
        host: origin,
        unit: 'sglang-router.service',
        apiUrl: 'http://127.0.0.1:30001',
        workers: workers.map((w) => ({
          url: `http://${w.host}:${w.port}`,
          role: w.role,
          sources: ['execstart'],
        })),
      },
    ],
    workers: fleetWorkers,
    unplaced: [],
    unrouted: [],
    ...opts.fleet,
  };
  const obs = (w: WorkerSpec): ServiceObservation => ({
    role: w.role,
    id: w.id,
    hostId: w.host,
    unit: `sglang-${w.id}.service`,
    systemd: {
      unit: `sglang-${w.id}.service`,
      loadState: 'loaded',
      activeState: w.active ?? 'active',
      subState: w.active === 'failed' ? 'failed' : 'running',
      mainPid: 100,
      nRestarts: 0,
      activeEnterTimestamp: w.startedAt ?? 1,
      result: 'success',
    },
    ...(w.health === null
      ? {}
      : {
          health: {
            ok: w.health ?? true,
            detail: w.health === false ? '503 Service Unavailable' : '200 OK',
            checkedAt: w.startedAt ?? 1,
          },
        }),
    ...(w.kv
      ? {
          kv: {
            usedTokens: w.kv[0],
            capacityTokens: w.kv[1],
            ratio: w.kv[0] / w.kv[1],
            source: 'kv_tokens' as const,
            sourceMetrics: [],
          },
        }
      : {}),
  });
  const values: Record<string, number | null> = {};
  for (const w of workers) {
    values[`${w.role}.running@${w.id}`] = w.running ?? 0;
    values[`${w.role}.queued@${w.id}`] = w.queued ?? 0;
    for (const [q, n] of Object.entries(w.stage ?? {})) values[`${w.role}.${q}@${w.id}`] = n;
  }
  const summary: DeploymentSummary = {
    deployment: { id: `fleet:${origin}`, name: 'fleet', services },
    host: host(origin),
    connection: opts.links?.[origin] ?? connected,
    hosts: opts.hosts.map((h) => ({ host: host(h), connection: opts.links?.[h] ?? connected })),
    fleet,
  };
  const latest: Observation = {
    deploymentId: summary.deployment.id,
    hostId: origin,
    ts: 2,
    services: [
      {
        role: 'router',
        id: 'router',
        hostId: origin,
        unit: 'sglang-router.service',
      },
      ...workers.map(obs),
    ],
  };
  const dashboard = {
    deploymentId: summary.deployment.id,
    ts: 2,
    values,
    kv: [],
    verdict: { kind: 'healthy', headline: '', evidence: [], nextStep: 'nothing to do' },
    gpu: {},
    alerts: [],
    notExposed: {},
  } satisfies DashboardSnapshot;
  return { summary, latest, dashboard };
}

/** The demo fleet (docs/demo-fleet.md) with decode-1, the smallest pool, near full. */
export function demoFleet(links?: Record<string, ConnectionStatus>) {
  return fleetFixture(
    [
      {
        id: 'prefill-0',
        role: 'prefill',
        host: 'gpu-a',
        port: 30100,
        kv: [200_000, 2_000_000],
        gpus: [0, 1, 2, 3],
      },
      {
        id: 'prefill-1',
        role: 'prefill',
        host: 'gpu-a',
        port: 30101,
        kv: [100_000, 2_000_000],
        gpus: [4, 5, 6, 7],
      },
      {
        id: 'decode-0',
        role: 'decode',
        host: 'gpu-b',
        port: 30200,
        kv: [1_100_000, 2_167_200],
        running: 20,
        queued: 1,
        gpus: [0, 1, 2, 3],
      },
      {
        id: 'decode-1',
        role: 'decode',
        host: 'gpu-b',
        port: 30201,
        kv: [1_051_092, 1_083_600],
        running: 30,
        queued: 4,
        gpus: [4, 5],
      },
      {
        id: 'decode-2',
        role: 'decode',
        host: 'gpu-b',
        port: 30202,
        kv: [900_000, 2_167_200],
        running: 10,
        gpus: [6, 7],
        peers: [{ host: 'gpu-c', gpus: [0, 1] }],
      },
    ],
    { hosts: ['gpu-a', 'gpu-b', 'gpu-c'], links },
  );
}
