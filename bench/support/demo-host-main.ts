// The demo GPU host in a process of its own (benchmarks measure the core without the simulation's cost):
// prints one JSON line with how to reach it; then answers each line read on stdin with one JSON line of the SSH
// channels it was asked to open since it started (exec command lines by program and unit, direct-tcpip count);
// stops on SIGTERM.
import { createInterface } from 'node:readline';
import { startDemoHost } from '../../src/main/demo';

export interface ChannelCounts {
  /**
   * Exec channels by "program units" (`journalctl sglang-decode.service`, `journalctl --follow A B C`,
   * `systemctl`, `nvidia-smi`, `sh` for a persistent shell).
   */
  exec: Record<string, number>;
  /** Commands written to persistent shells, by program: they open no channel. */
  shell?: Record<string, number>;
  tcpip: number;
}

function execKey(command: string): string {
  const program = /^\S+/.exec(command)?.[0] ?? '?';
  const units = [...command.matchAll(/ -u (\S+)/g)].map((m) => m[1].replace(/^'|'$/g, ''));
  const follow = / (-f|--follow)( |$)/.test(command) ? ' --follow' : '';
  return units.length ? `${program}${follow} ${units.join(' ')}` : program;
}

/** The program of a command line a persistent shell was given (`"$SHELL" -c '<command>' </dev/null; echo …`). */
function shellKey(line: string): string {
  return / -c '?([^\s']+)/.exec(line)?.[1] ?? (/^\S+/.exec(line)?.[0] || '?');
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
    const shell: Record<string, number> = {};
    for (const e of demo.channels.stdinLinesSince())
      shell[shellKey(e.command)] = (shell[shellKey(e.command)] ?? 0) + 1;
    const counts: ChannelCounts = { exec, shell, tcpip: demo.channels.tcpipChannels };
    process.stdout.write(JSON.stringify(counts) + '\n');
  });
  const stop = (): void => void demo.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
