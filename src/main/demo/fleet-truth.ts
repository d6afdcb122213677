// What is really true in a simulated fleet right now, per worker, for tests to compare the console against:
// its units and their states, the exact KV tokens of its pool, what its /health answers and what the router
// thinks of it. Read straight from the simulation, never through SSH or HTTP.
import type { ActiveState, DemoSimulation, SubState } from './simulation';
import type { ServerRole } from './units';

export interface FleetUnitTruth {
  host: string;
  unit: string;
  /** Node rank of a multi-node worker's unit; null for a one-node worker. */
  nodeRank: number | null;
  activeState: ActiveState;
  subState: SubState;
  mainPid: number;
  gpus: number[];
}

export interface FleetWorkerTruth {
  /** "prefill-0", "decode-2", … */
  name: string;
  role: ServerRole;
  /** The URL as the router's ExecStart and /workers list it. */
  url: string;
  /** Node rank 0 first. */
  units: FleetUnitTruth[];
  /** Exact pool of the serving process (summed over DP ranks); null while it is down. */
  kv: { usedTokens: number; capacityTokens: number; ratio: number } | null;
  /** What the worker's /health answers: 200, 503, or the port refuses. */
  health: 'ok' | 'starting' | 'refused';
  /** The router's health state for it; null while the router is down. */
  routerHealth: 'pending' | 'healthy' | 'unhealthy' | null;
}

export interface FleetTruth {
  at: number;
  router: { host: string; unit: string; activeState: ActiveState; listening: boolean } | null;
  workers: FleetWorkerTruth[];
}

export function fleetTruth(sim: DemoSimulation): FleetTruth {
  const units = sim.allUnits();
  const routerUnit = units.find((u) => u.def.router);
  const unitTruth = (key: string): FleetUnitTruth => {
    const u = sim.unitOf(key);
    return {
      host: u.def.host,
      unit: u.def.name,
      nodeRank: u.def.server?.node?.rank ?? null,
      activeState: u.activeState,
      subState: u.subState,
      mainPid: u.mainPid,
      gpus: u.def.gpus,
    };
  };
  const workers = (routerUnit?.def.router?.workers ?? []).map((w): FleetWorkerTruth => {
    const serving = sim.unitOf(w.unit);
    const peer = serving.def.server?.node?.peer;
    const kv = sim.kvTruth(w.unit);
    const inRouter = routerUnit?.router?.workers.find((x) => x.unit === w.unit);
    return {
      name: serving.def.server?.worker ?? serving.def.name,
      role: w.role,
      url: w.url,
      units: [unitTruth(w.unit), ...(peer ? [unitTruth(peer)] : [])],
      kv: kv ? { usedTokens: kv.used, capacityTokens: kv.capacity, ratio: kv.ratio } : null,
      health: sim.serverHealth(w.unit),
      routerHealth: inRouter?.health ?? null,
    };
  });
  return {
    at: sim.now,
    router: routerUnit
      ? {
          host: routerUnit.def.host,
          unit: routerUnit.def.name,
          activeState: routerUnit.activeState,
          listening: !!routerUnit.router?.listening,
        }
      : null,
    workers,
  };
}
