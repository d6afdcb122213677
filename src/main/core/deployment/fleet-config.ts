// From a discovered fleet (core/discovery/fleet.ts) to the services of one deployment: every router and every
// prefill/decode worker becomes a ServiceConfig with its own id, the scope of its series keys. Ids follow the
// router's list: `prefill-0`, `prefill-1`, `decode-0`… in the order the (first) router names them, and routers
// `router`, `router-1`…, so the same deployment gets the same ids on every connect. The DP ranks of one
// DP-aware server (`{base}@{rank}`, one HTTP endpoint) are one service, scraped once, under one id.
import type { HostConfig, ServiceConfig } from '@shared/domain';
import type { Fleet, FleetWorker } from '@shared/fleet';
import { parseHostSpec } from '@shared/host-spec';

export interface FleetServices {
  services: ServiceConfig[];
  /** Workers left out of the deployment, each with why (a regular worker has no PD role to show it under). */
  leftOut: string[];
}

export function fleetServices(fleet: Fleet): FleetServices {
  const services: ServiceConfig[] = [];
  const leftOut: string[] = [];
  fleet.routers.forEach((r, i) => {
    services.push({
      role: 'router',
      id: routerServiceId(i),
      hostId: r.host,
      unit: r.unit,
      apiUrl: r.apiUrl,
      ...(r.metricsUrl ? { metricsUrl: r.metricsUrl } : {}),
      healthUrl: `${r.apiUrl}/health`,
    });
  });
  for (const w of fleet.workers)
    if (w.role === 'regular')
      leftOut.push(`${w.url}: a regular (non-PD) worker; the console shows prefill and decode workers only`);
  for (const g of fleetWorkerGroups(fleet)) services.push(workerService(g));
  return { services, leftOut };
}

/** The id of the deployment's i-th router (in discovery order). */
export const routerServiceId = (i: number): string => (i === 0 ? 'router' : `router-${i}`);

/** One worker of the deployment: the router's entries that are one server (its DP ranks), and its id. */
export interface FleetWorkerGroup {
  id: string;
  role: 'prefill' | 'decode';
  /** The URL the service and a roll name it by: the router's own, or the base URL of a DP-aware server. */
  url: string;
  /** The router's entries, rank order as listed; one for a worker that is not DP-aware. */
  entries: FleetWorker[];
}

/**
 * The deployment's prefill and decode workers in router order, DP ranks of one base URL folded into one, each
 * with its id (`prefill-0`, `decode-3`…): the one numbering the services, the roll and the CLI all use.
 */
export function fleetWorkerGroups(fleet: Fleet): FleetWorkerGroup[] {
  const groups: FleetWorkerGroup[] = [];
  const byBase = new Map<string, FleetWorkerGroup>();
  const count = { prefill: 0, decode: 0 };
  for (const w of fleet.workers) {
    if (w.role === 'regular') continue;
    const key = `${w.role} ${w.baseUrl}`;
    const g = byBase.get(key);
    if (g && w.dpRank !== undefined) {
      g.entries.push(w);
      g.url = w.baseUrl;
      continue;
    }
    const role = w.role;
    const fresh: FleetWorkerGroup = { id: `${role}-${count[role]++}`, role, url: w.url, entries: [w] };
    if (w.dpRank !== undefined) byBase.set(key, fresh);
    groups.push(fresh);
  }
  return groups;
}

function workerService(g: FleetWorkerGroup): ServiceConfig {
  const w = g.entries[0];
  const { role, id } = g;
  const first = w.units[0];
  const multiNode = w.units.length > 1 || (first !== undefined && first.nnodes > 1);
  return {
    role,
    id,
    workerUrl: g.url,
    hostId: w.host,
    // An unreachable worker's unit is unknown: its host is never polled, and its observation says why.
    unit: first?.unit ?? '',
    apiUrl: w.apiUrl,
    ...(w.metricsUrl ? { metricsUrl: w.metricsUrl } : {}),
    ...(first?.gpus ? { gpus: first.gpus } : {}),
    ...(multiNode
      ? { units: w.units.map((u) => ({ hostId: u.host, unit: u.unit, nodeRank: u.nodeRank })) }
      : {}),
  };
}

/** The HostConfig of a fleet host id (an alias, or user@host:port). */
export function fleetHostConfig(id: string): HostConfig {
  return parseHostSpec(id) ?? { id, label: id, kind: 'ssh', alias: id };
}

/**
 * A deployment known by its services rather than by a router's list — the demo host's declared units, the
 * configured default when discovery failed, the servers of a host no router lists — in the same fleet model:
 * each prefill/decode service a worker on the host it names, each router a router, ids by the rules above.
 */
export function fleetOfServices(
  origin: string,
  given: readonly ServiceConfig[],
): { fleet: Fleet; services: ServiceConfig[] } {
  const count = { prefill: 0, decode: 0, router: 0 };
  const services = given.map((s): ServiceConfig => {
    const id = s.role === 'router' ? routerServiceId(count.router++) : `${s.role}-${count[s.role]++}`;
    return s.role === 'router' ? { ...s, id } : { ...s, id, workerUrl: s.workerUrl ?? s.apiUrl };
  });
  const hostOf = (s: ServiceConfig): string => s.hostId || origin;
  const routerIds = services.filter((s) => s.role === 'router').map((s) => `${hostOf(s)}/${s.unit}`);
  const workers: FleetWorker[] = [];
  for (const s of services) {
    if (s.role === 'router') continue;
    const url = s.workerUrl ?? s.apiUrl;
    workers.push({
      url,
      role: s.role,
      baseUrl: url,
      host: hostOf(s),
      apiUrl: s.apiUrl,
      ...(s.metricsUrl ? { metricsUrl: s.metricsUrl } : {}),
      units: (s.units ?? [{ hostId: hostOf(s), unit: s.unit, nodeRank: 0 }]).map((u) => ({
        host: u.hostId,
        unit: u.unit,
        nodeRank: u.nodeRank,
        nnodes: s.units?.length ?? 1,
        ...(u.nodeRank === 0 && s.gpus ? { gpus: s.gpus } : {}),
      })),
      listedBy: routerIds,
      notes: [],
    });
  }
  const hosts = [...new Set([origin, ...services.map(hostOf)])];
  const fleet: Fleet = {
    origin,
    hosts: hosts.map((id) => ({ id, via: id === origin ? 'origin' : 'added', addresses: [] })),
    routers: services
      .filter((s) => s.role === 'router')
      .map((s) => ({
        id: `${hostOf(s)}/${s.unit}`,
        host: hostOf(s),
        unit: s.unit,
        apiUrl: s.apiUrl,
        ...(s.metricsUrl ? { metricsUrl: s.metricsUrl } : {}),
        // What the router itself lists was not read: the workers are the services given, their source unknown.
        workers: workers.map((w) => ({ url: w.url, role: w.role, sources: [] })),
      })),
    workers,
    unplaced: [],
    unrouted: [],
  };
  return { fleet, services };
}
