// Core CPU per deployment at 1 Hz, without the demo simulation's own cost: the demo GPU host runs in a child
// process (as a real host is another machine), the core in this one connects to it over SSH and polls it —
// metrics, systemd, health, GPUs, journals for the recorder — while this process's CPU time is measured over a
// steady minute. Prints % of one core, and the SSH channels the host saw per minute per unit.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createApp } from '../src/main/compose';
import type { CoreOptions } from '../src/main/core/core';
import type { ChannelCounts } from './support/demo-host-main';

const WARMUP_MS = 15_000;
const MEASURE_MS = Number(process.env.BENCH_CORE_CPU_MS ?? 60_000);

/** A .cpuprofile of the core over the measured window only (start-up and warm-up left out), for Chrome DevTools. */
const PROFILE_TO = process.env.BENCH_CORE_CPU_PROFILE;

export async function startProfile(): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (file) => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

type Launched = Awaited<ReturnType<NonNullable<CoreOptions['demo']>>>;

export interface RemoteDemo extends Launched {
  /** The SSH channels the host process saw so far. */
  channels(): Promise<ChannelCounts>;
}

/** The demo GPU host in a child process (as a real host is another machine), reached over SSH. */
export async function remoteDemo(): Promise<RemoteDemo> {
  const child = spawn(
    process.execPath,
    [
      join(__dirname, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      '--tsconfig',
      join(__dirname, '..', 'tsconfig.node.json'),
      join(__dirname, 'support', 'demo-host-main.ts'),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const nextLine = (): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`demo host process exited (${code})`)));
    });
  const j = JSON.parse(await nextLine()) as Omit<Launched, 'hostKeyPublic' | 'stop'> & {
    hostKeyPublic: string;
  };
  return {
    ...j,
    hostKeyPublic: Buffer.from(j.hostKeyPublic, 'base64'),
    channels: async () => {
      const answer = nextLine();
      child.stdin!.write('channels\n');
      return JSON.parse(await answer) as ChannelCounts;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export async function runCoreCpuBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-core-cpu-'));
  let demo: RemoteDemo | undefined;
  const app = createApp({
    shell: 'browser',
    dataDir: dir,
    demoLauncher: async () => (demo = await remoteDemo()),
  });
  try {
    const s = await app.core.openDemo({});
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const ch0 = await demo!.channels();
    const profiler = PROFILE_TO ? await startProfile() : undefined;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, MEASURE_MS));
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    const ch1 = await demo!.channels();
    if (profiler && PROFILE_TO) await profiler(PROFILE_TO);
    const pct = ((cpu.user + cpu.system) / 1000 / wall) * 100;
    const line = (label: string, v: string): void => void process.stdout.write(`${label.padEnd(64)}${v}\n`);
    line(
      'core CPU of one 1P1D deployment at 1 Hz (demo host in its own process)',
      `${pct.toFixed(2)} % of a core`,
    );
    line(
      '  of which user / system',
      `${((cpu.user / 1000 / wall) * 100).toFixed(2)} / ${((cpu.system / 1000 / wall) * 100).toFixed(2)} %`,
    );
    line(
      '  measured over',
      `${(wall / 1000).toFixed(0)} s after ${WARMUP_MS / 1000} s of warm-up, recording on`,
    );
    line(
      '  core process CPU time per second (user+sys)',
      `${((cpu.user + cpu.system) / wall).toFixed(1)} ms/s (load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
    );
    line('goal', '≤ 1 % of a core (issue 16; 3.7 % at e1788f1, the commit before the cut)');
    line('SSH channels opened per minute (host process counts them)', '');
    const perMin = (n: number): string => ((n * 60_000) / wall).toFixed(1);
    const keys = [...new Set([...Object.keys(ch1.exec), ...Object.keys(ch0.exec)])].sort();
    for (const k of keys) line(`  exec ${k}`, perMin((ch1.exec[k] ?? 0) - (ch0.exec[k] ?? 0)));
    line('  direct-tcpip (HTTP)', perMin(ch1.tcpip - ch0.tcpip));
    const shellKeys = [...new Set([...Object.keys(ch1.shell ?? {}), ...Object.keys(ch0.shell ?? {})])].sort();
    if (shellKeys.length) line('Commands sent to persistent shells per minute (no channel each)', '');
    for (const k of shellKeys) line(`  ${k}`, perMin((ch1.shell?.[k] ?? 0) - (ch0.shell?.[k] ?? 0)));
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
  } finally {
    await app.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) void runCoreCpuBench().then(() => process.exit(0));
