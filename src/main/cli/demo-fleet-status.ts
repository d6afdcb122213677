// `pd-console status --host demo-fleet`: starts the simulated three-host fleet (src/main/demo/fleet.ts) in this
// process, writes the ssh config an operator would have for it into a temporary home, and runs the fleet status
// from gpu-a, where its router runs — through the real SSH client, like any other fleet. Nothing is assumed
// from the simulation: the other hosts are found the way a real deployment's are.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HostConfig } from '@shared/domain';
import { launchDemoFleet } from '../demo';
import { fleetStatus, type FleetIo } from './fleet-status';

export const DEMO_FLEET_HOST = 'demo-fleet';

export async function demoFleetStatus(
  opts: { addHosts: HostConfig[]; json: boolean },
  io: FleetIo & { stderr: (s: string) => void },
): Promise<number> {
  const fleet = await launchDemoFleet({ speed: 1 });
  const home = await mkdtemp(path.join(os.tmpdir(), 'pd-demo-fleet-'));
  try {
    const files = await fleet.writeSshConfig(home);
    // Said on stderr so that --json stays one document.
    if (fleet.fallback) io.stderr(`demo fleet: ${fleet.fallback}\n`);
    io.stderr(
      `demo fleet: ssh config for ${files.aliases.join(', ')} in ${files.configFile} (removed on exit)\n`,
    );
    const origin: HostConfig = {
      id: fleet.entry.name,
      label: fleet.entry.name,
      kind: 'ssh',
      alias: fleet.entry.name,
    };
    const r = await fleetStatus(
      { origin, addHosts: opts.addHosts, json: opts.json, sshHome: files.home },
      io,
    );
    // The fleet is never the single-host pair; should it ever be, there is no classic view to hand over to.
    return r === 'single-host' ? 1 : r;
  } finally {
    await fleet.stop();
    await rm(home, { recursive: true, force: true });
  }
}
