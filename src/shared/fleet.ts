// A PD deployment as production runs it: one or more routers, any number of prefill, decode and regular
// workers, on one or several hosts. Plain JSON-safe data: discovery (core/discovery/fleet.ts) builds it, the
// CLI's `status` and the screens read it. A one-host 1P1D deployment is one host, one router, two workers.

/** What a router lists a worker as: `--prefill`, `--decode`, or a plain (non-PD) `--worker-urls` worker. */
export type WorkerRole = 'prefill' | 'decode' | 'regular';

/** One SSH link: every router and worker unit on it shares it. */
export interface FleetHost {
  /** The alias or user@host[:port] the link was opened with; the key every unit's `host` refers to. */
  id: string;
  /**
   * How the console came to this host: where it started, the alias a worker URL's address led to, the alias a
   * multi-node worker's other node connects from (see node-peers.ts), or added by hand.
   */
  via: 'origin' | 'alias' | 'peer' | 'added';
  /** The addresses worker URLs may name this host by (its HostName, what that resolves to, loopback for the origin). */
  addresses: string[];
  /** Why the host could not be read (connect or discovery failure); its workers then say "unreachable: …". */
  unreachable?: string;
}

/** One systemd unit of a worker: a multi-node worker has one per node, node rank 0 serves HTTP. */
export interface FleetUnit {
  host: string;
  unit: string;
  nodeRank: number;
  nnodes: number;
  /** Physical GPU indices on that host, when discovery could tell. */
  gpus?: number[];
  activeState?: string;
}

/**
 * One SGLang server, identified by its host and port (every spelling of one is one worker: see
 * core/discovery/worker-url.ts) and shown by its URL as the router first lists it, DP-aware `{base}@{rank}`
 * included, user-info never.
 */
export interface FleetWorker {
  url: string;
  role: WorkerRole;
  /** The URL without the DP-rank suffix; equal to `url` for a worker that is not DP-aware. */
  baseUrl: string;
  /** The data-parallel rank of a DP-aware worker URL (`…@3`). */
  dpRank?: number;
  /** The host of node rank 0 (the one serving HTTP); absent only while unplaced. */
  host: string;
  /** API base as reached from `host` through its SSH link. */
  apiUrl: string;
  /** Absent when the unit runs without --enable-metrics. */
  metricsUrl?: string;
  /** Units sorted by node rank; empty when the host could not be read. */
  units: FleetUnit[];
  /** --dist-init-addr of a multi-node worker: the key its units are paired by. */
  distInitAddr?: string;
  /** Node ranks the worker has (--nnodes) that no scanned host runs, e.g. [1]. */
  missingRanks?: number[];
  /** Prefill bootstrap port as the router names it (null: "none"), else as the unit listens. */
  bootstrapPort?: number | null;
  /** Router ids listing it. */
  listedBy: string[];
  /** "unreachable: reason" when the worker's host is known but could not be read. */
  unreachable?: string;
  /** Disagreements worth saying (role in the router vs the unit's --disaggregation-mode, missing ranks…). */
  notes: string[];
}

/** Where a router got a worker from: its ExecStart flags, its live /workers answer, or both. */
export type WorkerSource = 'execstart' | 'workers-api';

/**
 * Why a router's /workers answer was not used: none served (404: a router older than the list), another HTTP
 * status than 200, no connection, larger than the console reads, slower than it waits, not JSON, JSON of another
 * shape, or an encoding it cannot read.
 */
export type WorkersApiFailure =
  | 'no-worker-list'
  | 'http-status'
  | 'unreachable'
  | 'too-large'
  | 'too-slow'
  | 'not-json'
  | 'wrong-shape'
  | 'unreadable';

export interface FleetRouter {
  /** `host/unit`. */
  id: string;
  host: string;
  unit: string;
  apiUrl: string;
  metricsUrl?: string;
  activeState?: string;
  /** This router's own list: a second router over the same workers has its own. */
  workers: {
    url: string;
    role: WorkerRole;
    sources: WorkerSource[];
    bootstrapPort?: number | null;
    /** Other spellings the router lists the same worker by (`localhost` for `127.0.0.1`…). */
    alsoListedAs?: string[];
  }[];
  /**
   * Why /workers gave nothing (old router, not reachable, too large, too slow, not JSON…) and what was used
   * instead (the ExecStart list alone).
   */
  workersApiError?: string;
  workersApiFailure?: WorkersApiFailure;
  /** Distinct workers the router lists beyond the most one router contributes, left out of the fleet. */
  workersLeftOut?: number;
  /** Worker URLs (as shown: without it) that the router gave with a user name or password, dropped. */
  userinfoDropped?: string[];
}

/** A worker a router lists that the console could not find a unit for, with what to change. */
export interface UnplacedWorker {
  url: string;
  role: WorkerRole;
  listedBy: string[];
  code: 'bad-url' | 'no-alias' | 'no-unit' | 'unit-listens-elsewhere';
  /** The host reached, for `no-unit`. */
  host?: string;
  /** The full sentence, e.g. "decode worker http://10.1.0.13:30000 (listed by the router): no ssh alias resolves to 10.1.0.13". */
  reason: string;
  /** e.g. "add `Host gpu-b` / `HostName 10.1.0.13` to ~/.ssh/config". */
  fix: string;
}

/** A unit that runs SGLang but that no router lists (or a node rank ≥ 1 whose rank 0 is not found). */
export interface UnroutedUnit {
  host: string;
  unit: string;
  /** --disaggregation-mode, or regular for a unified server. */
  role: WorkerRole;
  /** The URL it serves, as seen from its host. */
  apiUrl: string;
  reason: string;
}

export interface Fleet {
  /** The host discovery started from. */
  origin: string;
  hosts: FleetHost[];
  routers: FleetRouter[];
  workers: FleetWorker[];
  unplaced: UnplacedWorker[];
  unrouted: UnroutedUnit[];
}

/**
 * True when a deployment has more than one of what the screens and restarts group by: several workers of a role,
 * several hosts, or a worker spanning nodes. Such a deployment restarts by rolling its workers one at a time, so
 * the router keeps a healthy worker of each role; one router, one prefill and one decode on one host read as three
 * services, not as groups of one, and restart in place (an operator of one box does not pay for fleets).
 */
export function hasWorkerGroups(
  // The fields of a ServiceConfig it reads, spelled out: domain.ts imports this module's types.
  services: readonly { role: string; hostId: string; units?: readonly { hostId: string }[] }[],
): boolean {
  const roles = services.map((s) => s.role);
  const hosts = new Set(services.flatMap((s) => (s.units ?? [s]).map((u) => u.hostId)));
  return (
    new Set(roles).size < roles.length || hosts.size > 1 || services.some((s) => (s.units?.length ?? 0) > 1)
  );
}
