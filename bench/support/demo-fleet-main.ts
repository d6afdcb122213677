// The demo fleet in a process of its own (the scale benchmark measures the core without the simulation's cost):
// `--hosts H --prefill P --decode D` sets its size. Writes the ssh config, known_hosts and key an operator's
// ~/.ssh would hold under a temporary home, prints one JSON line with that home and the hosts; then answers each
// stdin line with one JSON line of per-host SSH figures ("reset" first restarts the open-at-once maximum);
// stops on SIGTERM.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startDemoFleet } from '../../src/main/demo/fleet';

export interface FleetHostCounts {
  name: string;
  /** SSH connections that logged in since the host started. */
  connections: number;
  /** Exec channels opened since the host started. */
  exec: number;
  /** direct-tcpip channels (HTTP) opened since the host started. */
  tcpip: number;
  /** Channels open at once: now, and at most since the last reset. */
  open: { now: number; max: number };
  /** The channels open now, by kind ("exec sh", "tcpip 127.0.0.2:30100"). */
  openKinds: Record<string, number>;
}

export interface FleetReady {
  home: string;
  entry: string;
  hosts: Array<{ name: string; address: string; port: number }>;
  workers: number;
  fallback: string | null;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { hosts: { type: 'string' }, prefill: { type: 'string' }, decode: { type: 'string' } },
  });
  const fleet = await startDemoFleet({
    shape: {
      hosts: Number(values.hosts ?? 3),
      prefill: Number(values.prefill ?? 2),
      decode: Number(values.decode ?? 3),
    },
  });
  const home = await mkdtemp(join(tmpdir(), 'pdc-bench-fleet-'));
  const files = await fleet.writeSshConfig(home);
  const ready: FleetReady = {
    home: files.home,
    entry: fleet.entry.name,
    hosts: fleet.hosts.map((h) => ({ name: h.name, address: h.address, port: h.port })),
    workers: fleet.groundTruth().workers.length,
    fallback: fleet.fallback,
  };
  process.stdout.write(JSON.stringify(ready) + '\n');
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'reset') for (const h of fleet.hosts) h.channels.resetOpenMax();
    const counts: FleetHostCounts[] = fleet.hosts.map((h) => ({
      name: h.name,
      connections: h.channels.connections,
      exec: h.channels.execsSince().length,
      tcpip: h.channels.tcpipChannels,
      open: h.channels.openChannels,
      openKinds: h.channels.openKinds,
    }));
    process.stdout.write(JSON.stringify(counts) + '\n');
  });
  const stop = (): void =>
    void fleet
      .stop()
      .then(() => rm(home, { recursive: true, force: true }))
      .then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
