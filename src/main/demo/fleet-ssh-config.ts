// Writes what an operator's ~/.ssh would hold for the demo fleet, under DIR/.ssh: a client config with one
// Host alias per fleet host (gpu-a, gpu-b, gpu-c), the known_hosts lines of their host keys and the client
// key. `ssh -F DIR/.ssh/config gpu-b` uses it directly; the console reads it with PD_CONSOLE_SSH_HOME=DIR
// (its resolver reads HOME/.ssh/config). Leaving a host out gives "a worker whose host has no ssh alias".
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FleetHostName } from './topology';

export interface FleetSshFiles {
  /** Use as PD_CONSOLE_SSH_HOME. */
  home: string;
  configFile: string;
  knownHostsFile: string;
  identityFile: string;
  /** The aliases written (hosts not left out). */
  aliases: FleetHostName[];
}

interface FleetForConfig {
  hosts: Array<{ name: FleetHostName; address: string; port: number; knownHostsLine: string }>;
  username: string;
  clientPrivateKey: string;
  clientPublicKeyLine: string;
}

/** OpenSSH config values with spaces must be quoted; paths from mkdtemp normally have none. */
function quote(p: string): string {
  return /\s/.test(p) ? `"${p.replace(/"/g, '\\"')}"` : p;
}

export function fleetSshConfigText(
  fleet: FleetForConfig,
  files: { identityFile: string; knownHostsFile: string },
  omit: ReadonlyArray<FleetHostName> = [],
): string {
  const blocks = fleet.hosts
    .filter((h) => !omit.includes(h.name))
    .map((h) =>
      [
        `Host ${h.name}`,
        `  HostName ${h.address}`,
        `  Port ${h.port}`,
        `  User ${fleet.username}`,
        `  IdentityFile ${quote(files.identityFile)}`,
        `  UserKnownHostsFile ${quote(files.knownHostsFile)}`,
        `  IdentitiesOnly yes`,
      ].join('\n'),
    );
  return `# PD Console demo fleet (written by pd-console; the ports change every run)\n\n${blocks.join('\n\n')}\n`;
}

export async function writeFleetSshFiles(
  dir: string,
  fleet: FleetForConfig,
  opts: { omit?: FleetHostName[] } = {},
): Promise<FleetSshFiles> {
  const home = path.resolve(dir);
  const sshDir = path.join(home, '.ssh');
  await mkdir(sshDir, { recursive: true, mode: 0o700 });
  const identityFile = path.join(sshDir, 'demo_fleet_ed25519');
  const knownHostsFile = path.join(sshDir, 'known_hosts');
  const configFile = path.join(sshDir, 'config');
  const omit = opts.omit ?? [];
  // OpenSSH refuses a private key others can read.
  await writeFile(identityFile, fleet.clientPrivateKey, { mode: 0o600 });
  await writeFile(`${identityFile}.pub`, `${fleet.clientPublicKeyLine}\n`, { mode: 0o644 });
  // Every host's key is known, aliased or not: a host added by hand is then trusted as well.
  await writeFile(knownHostsFile, fleet.hosts.map((h) => h.knownHostsLine).join('\n') + '\n', {
    mode: 0o600,
  });
  await writeFile(configFile, fleetSshConfigText(fleet, { identityFile, knownHostsFile }, omit), {
    mode: 0o600,
  });
  return {
    home,
    configFile,
    knownHostsFile,
    identityFile,
    aliases: fleet.hosts.map((h) => h.name).filter((n) => !omit.includes(n)),
  };
}
