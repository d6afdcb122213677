// From a discovered fleet (core/discovery/fleet.ts) to the services of one deployment: every router and every
// prefill/decode worker becomes a ServiceConfig with its own id, the scope of its series keys. Ids follow the
// router's list: `prefill-0`, `prefill-1`, `decode-0`… in the order the (first) router names them, and routers
// `router`, `router-1`…, so the same deployment gets the same ids on every connect.
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
      id: i === 0 ? 'router' : `router-${i}`,
      hostId: r.host,
      unit: r.unit,
      apiUrl: r.apiUrl,
      ...(r.metricsUrl ? { metricsUrl: r.metricsUrl } : {}),
      healthUrl: `${r.apiUrl}/health`,
    });
  });
  const count = { prefill: 0, decode: 0 };
  for (const w of fleet.workers) {
    if (w.role === 'regular') {
      leftOut.push(`${w.url}: a regular (non-PD) worker; the console shows prefill and decode workers only`);
      continue;
    }
    const role = w.role;
    services.push(workerService(w, role, `${role}-${count[role]++}`));
  }
  return { services, leftOut };
}

function workerService(w: FleetWorker, role: 'prefill' | 'decode', id: string): ServiceConfig {
  const first = w.units[0];
  const multiNode = w.units.length > 1 || (first !== undefined && first.nnodes > 1);
  return {
    role,
    id,
    workerUrl: w.url,
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
