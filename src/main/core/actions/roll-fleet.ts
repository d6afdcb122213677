// The workers of a deployment as a roll sees them: from its discovered fleet (multi-node and DP-aware workers as
// one each), a prefill's bootstrap port read from its ExecStart where the router's list does not say it.
import type { RollWorker } from '@shared/contract';
import type { Fleet } from '@shared/fleet';
import type { SshConnection } from '../ssh/connection';
import { readUnits } from '../discovery/read-units';
import { MENTIONS_SGLANG } from '../discovery/run-discovery';
import { findSglang, parseEvidence, resolveUnitCommand } from '../discovery/unit-command';
import { parseServerFlags } from '../discovery/sglang-flags';
import { fleetWorkerGroups, routerServiceId } from '../deployment/fleet-config';
import { rankZero } from './roll-plan';

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

/**
 * The workers with each prefill's bootstrap port where the router's list and discovery left it unsaid: read from
 * the ExecStart of its rank-0 unit over that host's link, as discovery reads a unit.
 */
export async function withBootstrapPorts(
  workers: readonly RollWorker[],
  links: ReadonlyMap<string, SshConnection>,
): Promise<RollWorker[]> {
  return Promise.all(
    workers.map(async (w) => {
      if (w.role !== 'prefill' || w.bootstrapPort !== undefined) return w;
      const u = rankZero(w);
      const conn = links.get(u.hostId);
      const bootstrapPort = conn ? await bootstrapPortOf(conn, u.unit, u.hostLabel) : undefined;
      return bootstrapPort === undefined ? w : { ...w, bootstrapPort };
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
