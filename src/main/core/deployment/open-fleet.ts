// Follows the router from a connected origin to every worker's host (core/discovery/run-fleet-discovery.ts)
// and turns what it found into what Core opens: the deployment's services (fleet-config.ts), one link per host
// from the link pool (the origin's own link adopted, not opened twice), and timeline notes for what discovery
// said and every worker the console could not place or leaves out. A one-host 1P1D pair is a fleet of one
// router and two workers; a host whose servers no router lists (or whose router names none) opens with the
// servers discovery found there, in the same model.
import type { ConnectConfig } from 'ssh2';
import type { DeploymentConfig, HostConfig } from '@shared/domain';
import type { Fleet } from '@shared/fleet';
import type { Role } from '@shared/domain';
import { HostLinkPool } from '../ssh/host-link-pool';
import type { SshConnection } from '../ssh/connection';
import { discoverFleet, type FleetDiscoveryDeps } from '../discovery/run-fleet-discovery';
import type { DiscoveryResult } from '../discovery/discover';
import { routerListFindings } from '../discovery/router-workers';
import { fleetHostConfig, fleetOfServices, fleetServices } from './fleet-config';
import { ApiError } from '../api-error';
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
  /** What discovery said, what a router's worker list did, unplaced, left-out and unrouted: for the timeline. */
  notes: FleetNote[];
}

export interface FleetNote {
  title: string;
  detail?: string;
  /** Warning unless said. */
  severity?: 'info' | 'warning' | 'error';
  role?: Role;
}

/**
 * Discovers the fleet from `origin` (whose link `originLink` is already up, when given) and opens a link to
 * each of its hosts; `addHosts` are scanned too (a multi-node worker's other node no router URL leads to).
 * Throws ApiError 'no-deployment' (every link it opened besides the origin's closed again) when no host runs
 * anything SGLang; `chosen` are the units the operator picked per host and role (the settings file).
 */
export async function openFleet(
  origin: HostConfig,
  env: FleetEnvironment,
  originLink?: SshConnection,
  name?: string,
  opts: { addHosts?: HostConfig[]; chosen?: (hostId: string) => Partial<Record<Role, string>> } = {},
): Promise<OpenedFleet> {
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
    found = await discoverFleet(
      origin,
      { ...env.discovery, pool },
      { addHosts: opts.addHosts, chosen: opts.chosen },
    );
  } catch (err) {
    await closeOthers(new Set([origin.id]));
    throw err;
  }
  const originFound = found.perHost.get(origin.id);
  let { fleet } = found;
  let { services, leftOut } = fleetServices(fleet);
  const discoveryNotes = originFound ? notesOf(originFound, origin) : [];
  if (!services.some((s) => s.role !== 'router')) {
    // No router lists a worker: every server the origin runs is the deployment — all of them, not one picked per
    // role — and each stays among the unrouted, whose notes say why and where to start.
    const given = originFound?.deployment.services ?? [];
    const others = (originFound?.found ?? []).flatMap((u) =>
      u.kind === 'server' && u.service && !given.some((g) => g.unit === u.service!.unit) ? [u.service] : [],
    );
    const proposed = fleetOfServices(origin.id, [...given, ...others]);
    if (proposed.services.length === 0) {
      await closeOthers(new Set([origin.id]));
      throw new ApiError(
        'no-deployment',
        `no SGLang prefill/decode/router units found on ${origin.label}`,
        discoveryNotes.map((n) => n.title + (n.detail ? ` — ${n.detail}` : '')).join('\n') || undefined,
      );
    }
    services = proposed.services;
    fleet = { ...fleet, workers: proposed.fleet.workers };
    leftOut = [];
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
  const notes: FleetNote[] = [
    ...discoveryNotes,
    ...found.fleet.routers.flatMap((r) =>
      routerListFindings(r).map((t) => ({ title: `router ${r.id}: ${t}` })),
    ),
    ...found.fleet.unplaced.map((u) => ({ title: `unplaced: ${u.reason}`, detail: u.fix })),
    ...leftOut.map((t) => ({ title: `left out: ${t}` })),
    ...found.fleet.unrouted.map((u) => ({
      title: `${found.fleet.routers.length === 0 ? 'no router lists' : "not in the router's worker list"}: ${u.host} ${u.unit} (${u.role}, ${u.apiUrl})`,
      detail: u.reason,
    })),
  ];
  return {
    fleet,
    template: {
      name:
        name ??
        (fleet.hosts.length === 1 && originFound
          ? originFound.deployment.name
          : `${origin.label} fleet: ${roles('prefill')} prefill, ${roles('decode')} decode on ${fleet.hosts.length} hosts`),
      services,
    },
    links,
    notes,
  };
}

/** What discovery on one host said (its diagnostics, and units the operator may want to choose between). */
function notesOf(result: DiscoveryResult, host: HostConfig): FleetNote[] {
  const notes: FleetNote[] = result.diagnostics.map((d) => ({
    severity: d.severity,
    ...(d.role ? { role: d.role } : {}),
    title: `discovery: ${d.message}`,
    ...(d.fix ? { detail: d.fix } : {}),
  }));
  for (const c of result.needsOperatorChoice)
    notes.push({
      role: c.role,
      title: `discovery: several units look like the ${c.role} (${c.units.join(', ')}); using ${c.chosen}`,
      detail:
        `Check that this is the right one. To use another from the next connect on, run ` +
        `\`pd-console settings choose ${host.id} ${c.role} UNIT\` (saved in the settings file).`,
    });
  return notes;
}
