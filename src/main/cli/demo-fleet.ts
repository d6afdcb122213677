// `--host demo-fleet` for the CLI verbs that follow a fleet (status, restart): starts the simulated three-host
// fleet (src/main/demo/fleet.ts) in this process, writes the ssh config an operator would have for it into a
// temporary home, and hands the verb gpu-a, where its router runs — reached through the real SSH client, like any
// other fleet. Nothing is assumed from the simulation: the other hosts are found the way a real deployment's are.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HostConfig } from '@shared/domain';
import { launchDemoFleet } from '../demo';

export const DEMO_FLEET_HOST = 'demo-fleet';

export interface DemoFleetRun {
  /** gpu-a, as an ssh alias of the written config. */
  origin: HostConfig;
  /** The temporary home whose .ssh/config names gpu-a, gpu-b and gpu-c. */
  sshHome: string;
  /** The fleet's hosts, as ssh aliases of the written config. */
  hosts: string[];
}

/** The first line a verb prints about the simulated fleet, so that its output is never taken for a real one's. */
export function demoFleetLine(hosts: string[]): string {
  return `simulated demo fleet (--host ${DEMO_FLEET_HOST}) on ${hosts.join(', ')}`;
}

/** Runs `verb` against a freshly started demo fleet, and stops the fleet and removes its home afterwards. */
export async function withDemoFleet<T>(
  speed: number,
  io: { stderr: (s: string) => void },
  verb: (run: DemoFleetRun) => Promise<T>,
): Promise<T> {
  const fleet = await launchDemoFleet({ speed });
  const home = await mkdtemp(path.join(os.tmpdir(), 'pd-demo-fleet-'));
  try {
    const files = await fleet.writeSshConfig(home);
    // Said on stderr so that --json stays one document.
    if (fleet.fallback) io.stderr(`demo fleet: ${fleet.fallback}\n`);
    io.stderr(
      `demo fleet: ssh config for ${files.aliases.join(', ')} in ${files.configFile} (removed on exit)\n`,
    );
    const name = fleet.entry.name;
    return await verb({
      origin: { id: name, label: name, kind: 'ssh', alias: name },
      sshHome: files.home,
      hosts: files.aliases,
    });
  } finally {
    await fleet.stop();
    await rm(home, { recursive: true, force: true });
  }
}
