// `pd-console status --host demo-fleet`: the fleet status of the simulated three-host fleet, from gpu-a.
import type { HostConfig } from '@shared/domain';
import { demoFleetLine, withDemoFleet } from './demo-fleet';
import { fleetStatus, type FleetIo } from './fleet-status';

export async function demoFleetStatus(
  opts: { addHosts: HostConfig[]; json: boolean },
  io: FleetIo & { stderr: (s: string) => void },
): Promise<number> {
  return withDemoFleet(1, io, async ({ origin, sshHome, hosts }) => {
    if (!opts.json) io.stdout(`${demoFleetLine(hosts)}\n`);
    const r = await fleetStatus(
      { origin, addHosts: opts.addHosts, json: opts.json, sshHome, simulated: true },
      io,
    );
    // The fleet is never the single-host pair; should it ever be, there is no classic view to hand over to.
    return r === 'single-host' ? 1 : r;
  });
}
