// Runs discovery over an SSH connection: read the host's units, processes and listeners (read-units.ts) and hand
// them to the pure discoverDeployment().
import { discoverDeployment, type DiscoveryInput, type DiscoveryResult } from './discover';
import { readUnits, type Exec } from './read-units';

export type { Exec } from './read-units';

/** What may run SGLang: its modules and binaries, the router, the mini load balancer. */
export const MENTIONS_SGLANG = /sglang|smg|mini_lb/i;

export async function runDiscovery(
  conn: Exec,
  hostId: string,
  hostLabel: string,
  chosen?: DiscoveryInput['chosen'],
): Promise<DiscoveryResult> {
  const host = await readUnits(conn, hostLabel, MENTIONS_SGLANG, { listeners: true });
  return discoverDeployment({
    hostId,
    listUnits: host.listUnits,
    units: host.units,
    ...(host.listeners ? { listeners: host.listeners } : {}),
    ...(host.processesError ? { processesError: host.processesError } : {}),
    ...(chosen ? { chosen } : {}),
  });
}
