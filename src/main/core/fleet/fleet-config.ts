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
