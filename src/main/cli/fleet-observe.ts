// `pd-console status` reads a fleet the way the app watches it: the discovered fleet opened in a Core as one
// deployment (Core.openFleet: a LiveDeployment with one monitor per host on the links discovery used, merged
// into one observation per round), and its first complete merged observation turned into the per-unit and
// per-server readings the report is made of. So the CLI and the app show one truth: the same path from links to
// observations, the same systemd, health and KV readings (extractKv, /server_info capacity) from the same code.
import type { HostConfig, Observation, ServiceConfig, ServiceObservation } from '@shared/domain';
import type { Fleet } from '@shared/fleet';
import { systemClock, type Clock } from '../core/clock';
import { Core } from '../core/core';
import type { HostLinkPool } from '../core/ssh/host-link-pool';
import type { DeploymentLink } from '../core/fleet/live-deployment';
import { fleetHostConfig, fleetServices } from '../core/fleet/fleet-config';
import { serverKey, unitKey, type FleetReading, type ServerReading } from './fleet-probe';

/** What the status needs of a core: open the fleet, hear its observations, close it. */
export type FleetCore = Pick<Core, 'openFleet' | 'closeDeployment' | 'on' | 'off'>;

export interface ObserveOptions {
  clock?: Clock;
  /** Longest wait for an observation in which every reachable service has been read (then the newest). */
  timeoutMs?: number;
  /**
   * The core to open the fleet in (a test's, or the app's); default a bare one of its own, with no recorder or
   * other service listening, so a status leaves no session behind.
   */
  core?: FleetCore;
}

export async function observeFleet(
  fleet: Fleet,
  origin: HostConfig,
  pool: HostLinkPool,
  opts: ObserveOptions = {},
): Promise<FleetReading> {
  const { services } = fleetServices(fleet);
  if (services.length === 0) return { units: new Map(), servers: new Map() };
  const links: DeploymentLink[] = [];
  for (const h of fleet.hosts) {
    const host = h.id === origin.id ? origin : fleetHostConfig(h.id);
    if (h.unreachable) links.push({ host, conn: null, unreachable: h.unreachable });
    else
      try {
        links.push({ host, conn: await pool.get(host) });
      } catch (err) {
        links.push({ host, conn: null, unreachable: (err as Error).message });
      }
  }
  const clock = opts.clock ?? systemClock;
  const core = opts.core ?? new Core({ shell: 'cli', version: 'status', clock });
  const summary = core.openFleet(origin, { name: `${origin.label} fleet`, services }, links, fleet);
  const id = summary.deployment.id;
  let onObservation: ((o: Observation) => void) | null = null;
  try {
    const obs = await new Promise<Observation>((resolve) => {
      let newest: Observation | undefined;
      const timer = clock.setTimeout(() => newest && resolve(newest), opts.timeoutMs ?? 20_000);
      let round = 0;
      onObservation = (o) => {
        if (o.deploymentId !== id) return;
        newest = o;
        if (complete(services, o, ++round)) {
          clock.clearTimeout(timer);
          resolve(o);
        }
      };
      core.on('observation', onObservation);
    });
    return readingOf(services, obs);
  } finally {
    if (onObservation) core.off('observation', onObservation);
    // Stops its monitors and the links it was given (the pool closes what is left).
    await core.closeDeployment({ deploymentId: id });
  }
}

/** Rounds after which a reading that failed is taken as the answer (a slow first read is not). */
const SETTLE_ROUNDS = 3;

/**
 * Every reachable service has its systemd state, its health and (when it has metrics) a KV figure or the reason
 * there is none. A host still being read for the first time ("not read yet") is waited for, and so is a read that
 * failed in the first rounds: on a loaded machine the first poll of a fresh link may miss its budget, where the
 * one-shot probe this replaces waited for every answer.
 */
function complete(services: readonly ServiceConfig[], o: Observation, round: number): boolean {
  const settled = round >= SETTLE_ROUNDS;
  return o.services.every((s, i) => {
    const c = services[i];
    if (c.unit === '' || s.systemdError?.startsWith('unreachable: ')) return true;
    if (!s.systemd && !settled) return false;
    if ((s.units ?? []).some((u) => !u.systemd && (!settled || u.systemdError === 'not read yet')))
      return false;
    if (!s.health) return false;
    if (!c.metricsUrl || s.kv !== undefined || s.kvMissing !== undefined) return true;
    return settled && s.metrics?.ok === false;
  });
}

function readingOf(services: readonly ServiceConfig[], o: Observation): FleetReading {
  const out: FleetReading = { units: new Map(), servers: new Map() };
  o.services.forEach((s, i) => {
    const c = services[i];
    if (c.unit === '') return;
    if (s.units)
      for (const u of s.units)
        out.units.set(unitKey(u.hostId, u.unit), { state: u.systemd, error: u.systemdError });
    else out.units.set(unitKey(c.hostId, c.unit), { state: s.systemd, error: s.systemdError });
    out.servers.set(serverKey(c.hostId, c.apiUrl), serverOf(c, s));
  });
  return out;
}

function serverOf(c: ServiceConfig, s: ServiceObservation): ServerReading {
  if (!s.systemd && s.systemdError?.startsWith('unreachable: ')) return { unreachable: s.systemdError };
  const kvError = s.kv
    ? undefined
    : (s.kvMissing?.reason ??
      (s.metrics && !s.metrics.ok
        ? s.metrics.error + (s.metrics.hint ? ` — ${s.metrics.hint}` : '')
        : c.metricsUrl
          ? undefined
          : `metrics disabled: add --enable-metrics to ExecStart of ${c.unit}`));
  return {
    ...(s.health ? { health: s.health } : {}),
    ...(s.kv ? { kv: s.kv } : {}),
    ...(kvError ? { kvError } : {}),
  };
}
