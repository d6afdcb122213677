// Follows the router from a connected origin to every worker's host (core/discovery/run-fleet-discovery.ts)
// and turns what it found into what Core opens: the deployment's services (fleet-config.ts), one link per host
// from the link pool (the origin's own link adopted, not opened twice), and timeline notes for every worker the
// console could not place or leaves out. Answers null when the host runs a one-host 1P1D pair (or nothing a
// fleet could be made of): the classic deployment fits, exactly as before fleets existed.
import type { ConnectConfig } from 'ssh2';
import type { DeploymentConfig, HostConfig } from '@shared/domain';
import { isSingleHostPair, type Fleet } from '@shared/fleet';
import { HostLinkPool } from '../ssh/host-link-pool';
import type { SshConnection } from '../ssh/connection';
import { discoverFleet, type FleetDiscoveryDeps } from '../discovery/run-fleet-discovery';
import type { DiscoveredUnit } from '../discovery/discover';
import { isLoopbackHost, parseWorkerUrl } from '../discovery/worker-url';
import { routerListFindings } from '../discovery/router-workers';
import { fleetHostConfig, fleetServices } from './fleet-config';
import type { DeploymentLink } from './live-deployment';

/** Where fleet discovery reads ssh aliases and how it reaches hosts (the operator's ~/.ssh, or the demo's). */
export interface FleetEnvironment {
  resolve: (host: HostConfig) => Promise<ConnectConfig>;
  discovery: Omit<FleetDiscoveryDeps, 'pool'>;
  /** Builds each link (Core passes its clock); default a plain SshConnection. */
  connect?: (host: HostConfig, configure: () => Promise<ConnectConfig>) => SshConnection;
  connectTimeoutMs?: number;
}

export interface OpenedFleet {
  fleet: Fleet;
  template: Omit<DeploymentConfig, 'id'>;
  /** Every host of the fleet, origin first; a host that could not be reached has no link and says why. */
  links: DeploymentLink[];
  /** What a router's worker list did, unplaced and left-out workers, unrouted units: said on the timeline. */
  notes: { title: string; detail?: string }[];
}

/**
 * True when the units one host runs hint at more than a one-host pair: several servers of a role, or a router
 * listing more than one worker of a role or a worker by a non-loopback address. Only then is the fleet
 * followed, so a plain 1P1D host costs no command more than it did.
 */
export function looksLikeFleet(found: readonly DiscoveredUnit[]): boolean {
  const perRole = new Map<string, number>();
  for (const u of found)
    if (u.kind === 'server' && u.role) perRole.set(u.role, (perRole.get(u.role) ?? 0) + 1);
  if ([...perRole.values()].some((n) => n > 1)) return true;
  for (const u of found) {
    const r = u.router;
    if (u.kind !== 'router' || !r) continue;
    if ((r.prefill?.length ?? 0) > 1 || (r.decode?.length ?? 0) > 1 || (r.workerUrls?.length ?? 0) > 1)
      return true;
    for (const url of [
      ...(r.prefill ?? []).map((x) => x.url),
      ...(r.decode ?? []).map((x) => x.url),
      ...(r.workerUrls ?? []),
    ]) {
      const ep = parseWorkerUrl(url);
      if (!('error' in ep) && !isLoopbackHost(ep.host)) return true;
    }
  }
  return false;
}

/**
 * Discovers the fleet from `origin` (whose link `originLink` is already up, when given) and opens a link to
 * each of its hosts; `addHosts` are scanned too (a multi-node worker's other node no router URL leads to). On
 * null (a one-host pair, and no host added by hand) every link it opened besides the origin's is closed again.
 */
export async function openFleet(
  origin: HostConfig,
  env: FleetEnvironment,
  originLink?: SshConnection,
  name?: string,
  opts: { addHosts?: HostConfig[] } = {},
): Promise<OpenedFleet | null> {
  const pool = new HostLinkPool({
    resolve: env.resolve,
    connect: env.connect,
    connectTimeoutMs: env.connectTimeoutMs,
  });
  if (originLink) pool.adopt(origin, originLink);
  const closeOthers = async (keep: Set<string>): Promise<void> => {
    await pool.closeExcept(keep);
  };
  let found;
  try {
    found = await discoverFleet(origin, { ...env.discovery, pool }, { addHosts: opts.addHosts });
  } catch (err) {
    await closeOthers(new Set([origin.id]));
    throw err;
  }
  const { fleet } = found;
  const { services, leftOut } = fleetServices(fleet);
  const added = (opts.addHosts?.length ?? 0) > 0;
  if ((!added && isSingleHostPair(fleet)) || !services.some((s) => s.role !== 'router')) {
    await closeOthers(new Set([origin.id]));
    return null;
  }
  const links: DeploymentLink[] = [];
  for (const h of fleet.hosts) {
    const host = h.id === origin.id ? origin : fleetHostConfig(h.id);
    if (h.unreachable) {
      links.push({ host, conn: null, unreachable: h.unreachable });
      continue;
    }
    try {
      links.push({ host, conn: await pool.get(host) });
    } catch (err) {
      links.push({ host, conn: null, unreachable: (err as Error).message });
    }
  }
  await closeOthers(new Set(links.filter((l) => l.conn).map((l) => l.host.id)));
  const roles = (r: string): number => services.filter((s) => s.role === r).length;
  const notes: OpenedFleet['notes'] = [
    ...fleet.routers.flatMap((r) => routerListFindings(r).map((t) => ({ title: `router ${r.id}: ${t}` }))),
    ...fleet.unplaced.map((u) => ({ title: `unplaced: ${u.reason}`, detail: u.fix })),
    ...leftOut.map((t) => ({ title: `left out: ${t}` })),
    ...fleet.unrouted.map((u) => ({
      title: `not in the router's worker list: ${u.host} ${u.unit} (${u.role}, ${u.apiUrl})`,
      detail: u.reason,
    })),
  ];
  return {
    fleet,
    template: {
      name:
        name ??
        `${origin.label} fleet: ${roles('prefill')} prefill, ${roles('decode')} decode on ${fleet.hosts.length} hosts`,
      services,
    },
    links,
    notes,
  };
}
