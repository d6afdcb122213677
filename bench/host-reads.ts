// The client-side cost of the monitor's periodic host reads, old way against new way, side by side in one run
// (alternating blocks, so a noisy machine hits both alike), against the demo host in its own process:
//   commands   `systemctl show` of three units: one exec channel each, or one line to the link's persistent shell
//   journals   three units followed for the recorder: each polled with --after-cursor every 2 s, or one
//              `journalctl --follow` for all of them
// Prints this process's CPU time (user+sys) per command and per second of following, and the ratios.
import { loadavg } from 'node:os';
import { systemClock } from '../src/main/core/clock';
import { HostJournalFollow } from '../src/main/core/journal/host-follow';
import { UnitJournalTail } from '../src/main/core/journal/unit-tail';
import { systemctlShowCommand } from '../src/main/core/probes/systemd';
import { SshConnection } from '../src/main/core/ssh/connection';
import { remoteDemo } from './core-cpu';

const UNITS = ['sglang-prefill.service', 'sglang-decode.service', 'sglang-router.service'];
const COMMANDS_PER_BLOCK = Number(process.env.BENCH_HOST_READS_COMMANDS ?? 150);
const FOLLOW_BLOCK_MS = Number(process.env.BENCH_HOST_READS_FOLLOW_MS ?? 15_000);
const BLOCKS = 3;

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

export async function runHostReadsBench(): Promise<void> {
  const demo = await remoteDemo();
  const conn = new SshConnection({
    label: 'demo',
    configure: async () => ({
      host: demo.host,
      port: demo.port,
      username: demo.username,
      privateKey: demo.clientPrivateKey,
      hostVerifier: (key: Buffer) => key.equals(demo.hostKeyPublic),
    }),
  });
  try {
    await conn.start();
    await conn.waitConnected(15_000);
    const command = systemctlShowCommand(UNITS);
    const ways = {
      exec: () => conn.exec(command, { timeoutMs: 10_000 }),
      shell: () => conn.execInShell(command, { timeoutMs: 10_000 }),
    };
    // Warm both paths (JIT, the shell's channel).
    for (let i = 0; i < 20; i++) await Promise.all([ways.exec(), ways.shell()]);
    const perCommand = { exec: 0, shell: 0 };
    for (let b = 0; b < BLOCKS; b++)
      for (const way of ['exec', 'shell'] as const) {
        const t0 = process.cpuUsage();
        for (let i = 0; i < COMMANDS_PER_BLOCK; i++) await ways[way]();
        perCommand[way] += cpuMs(t0) / (COMMANDS_PER_BLOCK * BLOCKS);
      }

    const follow = async (way: 'poll' | 'follow'): Promise<number> => {
      const feed =
        way === 'follow'
          ? new HostJournalFollow({
              label: 'demo',
              exec: (c, o) => conn.exec(c, o),
              open: (c, h) => conn.openStream(c, h),
              isConnected: () => conn.isConnected,
              clock: systemClock,
            })
          : undefined;
      const tails = UNITS.map(
        (unit) =>
          new UnitJournalTail({
            unit,
            exec: (c, o) => conn.exec(c, o),
            isConnected: () => conn.isConnected,
            clock: systemClock,
            feed,
          }),
      );
      let lines = 0;
      const subs = tails.map((t) =>
        t.subscribe({ onLines: (l) => (lines += l.length) }, { intervalMs: 2000 }),
      );
      await Promise.all(subs.map((s) => s.backlog));
      const t0 = process.cpuUsage();
      const w0 = performance.now();
      await new Promise((r) => setTimeout(r, FOLLOW_BLOCK_MS));
      const ms = cpuMs(t0) / ((performance.now() - w0) / 1000);
      for (const s of subs) s.dispose();
      for (const t of tails) t.close();
      feed?.close();
      if (lines === 0)
        throw new Error(`the ${way} tails heard no journal line in ${FOLLOW_BLOCK_MS / 1000} s`);
      return ms;
    };
    const perSecond = { poll: 0, follow: 0 };
    for (let b = 0; b < BLOCKS; b++)
      for (const way of ['poll', 'follow'] as const) perSecond[way] += (await follow(way)) / BLOCKS;

    const line = (label: string, v: string): void => void process.stdout.write(`${label.padEnd(64)}${v}\n`);
    line(
      'systemctl show of 3 units, client CPU per command: exec channel',
      `${(perCommand.exec * 1000).toFixed(0)} µs`,
    );
    line('  through the persistent shell', `${(perCommand.shell * 1000).toFixed(0)} µs`);
    line('  shell / exec', `${(perCommand.shell / perCommand.exec).toFixed(2)}`);
    line('3 journals followed, client CPU: polled every 2 s', `${perSecond.poll.toFixed(2)} ms/s`);
    line('  one journalctl --follow', `${perSecond.follow.toFixed(2)} ms/s`);
    line('  follow / poll', `${(perSecond.follow / perSecond.poll).toFixed(2)}`);
    line(
      'load average',
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' '),
    );
  } finally {
    await conn.stop();
    await demo.stop();
  }
}

if (require.main === module) void runHostReadsBench().then(() => process.exit(0));
