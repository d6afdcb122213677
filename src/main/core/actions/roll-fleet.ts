// The workers of a deployment as a roll sees them: from a discovered fleet (several hosts, multi-node and
// DP-aware workers), or from an open one-host deployment (one service per role: each service one worker with
// one unit, node rank 0; a prefill's bootstrap port read from its ExecStart).
import type { RollWorker } from '@shared/contract';
import type { Fleet } from '@shared/fleet';
import type { DeploymentConfig, HostConfig } from '@shared/domain';
import type { SshConnection } from '../ssh/connection';
import { readUnits } from '../discovery/read-units';
import { MENTIONS_SGLANG } from '../discovery/run-discovery';
import { findSglang, parseEvidence, resolveUnitCommand } from '../discovery/unit-command';
import { parseServerFlags } from '../discovery/sglang-flags';
import { fleetWorkerGroups, routerServiceId } from '../fleet/fleet-config';

/** A prefill's bootstrap port, from the command it runs (or would run): read as discovery reads a unit. */
async function bootstrapPortOf(
  conn: SshConnection,
  unit: string,
  label: string,
): Promise<number | undefined> {
  try {
    const [reading] = (await readUnits(conn, label, MENTIONS_SGLANG, { only: [unit] })).units;
    const command = reading ? resolveUnitCommand(parseEvidence(reading), findSglang).command : undefined;
    if (command?.kind !== 'server') return undefined;
    const flags = parseServerFlags(command.args);
    return flags.mode === 'prefill' && !flags.unknown.includes('--disaggregation-bootstrap-port')
      ? flags.bootstrapPort
      : undefined;
  } catch {
    // Without it the roll checks the HTTP port only; the plan shows which ports it checks.
    return undefined;
  }
}

export async function rollWorkersOf(
  deployment: DeploymentConfig,
  host: HostConfig,
  conn: SshConnection,
): Promise<RollWorker[]> {
  return Promise.all(
    deployment.services.map(async (s): Promise<RollWorker> => {
      const bootstrapPort =
        s.role === 'prefill' ? await bootstrapPortOf(conn, s.unit, host.label) : undefined;
      return {
        id: s.apiUrl,
        name: s.role,
        role: s.role,
        apiUrl: s.apiUrl,
        ...(s.healthUrl && s.role !== 'router' ? { healthUrl: s.healthUrl } : {}),
        ...(s.metricsUrl ? { metricsUrl: s.metricsUrl } : {}),
        ...(bootstrapPort !== undefined ? { bootstrapPort } : {}),
        units: [{ hostId: s.hostId, hostLabel: host.label, unit: s.unit, nodeRank: 0, gpus: s.gpus ?? [] }],
      };
    }),
  );
}

/**
 * The workers of a discovered fleet as a roll sees them, named by the deployment's own ids (`prefill-0`,
 * `decode-3`, `router`… in the router's order, fleetWorkerGroups), never by unit names, which need not follow
 * it. The DP ranks of one server (`{base}@{rank}`, the same units) are one worker; workers the console could not
 * reach or place are left out with the reason, since nothing can be stopped or started there.
 */
export function rollWorkersOfFleet(fleet: Fleet): { workers: RollWorker[]; left: string[] } {
  const workers: RollWorker[] = [];
  const left: string[] = [];
  fleet.routers.forEach((r, i) =>
    workers.push({
      id: r.id,
      name: routerServiceId(i),
      role: 'router',
      apiUrl: r.apiUrl,
      ...(r.metricsUrl ? { metricsUrl: r.metricsUrl } : {}),
      units: [{ hostId: r.host, hostLabel: r.host, unit: r.unit, nodeRank: 0, gpus: [] }],
    }),
  );
  const cannot = (w: Fleet['workers'][number]): boolean => !!w.unreachable || !w.units.length;
  for (const w of fleet.workers)
    if (w.role === 'regular')
      left.push(`${w.url}: a regular (non-PD) worker; rolls cover prefill and decode workers`);
    else if (cannot(w)) left.push(`${w.url}: ${w.unreachable ?? 'no unit found for it'}`);
  for (const g of fleetWorkerGroups(fleet)) {
    const w = g.entries[0];
    if (cannot(w)) continue;
    const dp = g.entries.length > 1;
    workers.push({
      id: dp ? w.baseUrl : w.url,
      ...(dp ? { routerUrls: g.entries.map((x) => x.url) } : {}),
      name: g.id,
      role: g.role,
      apiUrl: w.apiUrl,
      ...(w.metricsUrl ? { metricsUrl: w.metricsUrl } : {}),
      ...(typeof w.bootstrapPort === 'number' ? { bootstrapPort: w.bootstrapPort } : {}),
      units: w.units.map((u) => ({
        hostId: u.host,
        hostLabel: u.host,
        unit: u.unit,
        nodeRank: u.nodeRank,
        gpus: u.gpus ?? [],
      })),
    });
  }
  return { workers, left };
}
