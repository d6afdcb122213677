// The demo GPU host in a process of its own (benchmarks measure the core without the simulation's cost):
// prints one JSON line with how to reach it; then answers each line read on stdin with one JSON line of the SSH
// channels it was asked to open since it started (exec command lines by program and unit, direct-tcpip count);
// stops on SIGTERM.
import { createInterface } from 'node:readline';
import { startDemoHost } from '../../src/main/demo';

export interface ChannelCounts {
  /** Exec channels by "program unit" (`journalctl sglang-decode.service`, `systemctl`, `nvidia-smi`). */
  exec: Record<string, number>;
  tcpip: number;
}

function execKey(command: string): string {
  const program = /^\S+/.exec(command)?.[0] ?? '?';
  const unit = / -u (\S+)/.exec(command)?.[1];
  return unit ? `${program} ${unit.replace(/^'|'$/g, '')}` : program;
}

void startDemoHost({}).then((demo) => {
  process.stdout.write(
    JSON.stringify({
      host: demo.host,
      port: demo.port,
      username: demo.username,
      clientPrivateKey: demo.clientPrivateKey,
      hostKeyPublic: demo.hostKeyPublic.toString('base64'),
      deployment: demo.deployment,
      era: demo.sim.era,
      router: demo.sim.routerEra,
    }) + '\n',
  );
  createInterface({ input: process.stdin }).on('line', () => {
    const exec: Record<string, number> = {};
    for (const e of demo.channels.execsSince())
      exec[execKey(e.command)] = (exec[execKey(e.command)] ?? 0) + 1;
    const counts: ChannelCounts = { exec, tcpip: demo.channels.tcpipChannels };
    process.stdout.write(JSON.stringify(counts) + '\n');
  });
  const stop = (): void => void demo.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
