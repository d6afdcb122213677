// Core CPU per deployment at 1 Hz, without the demo simulation's own cost: the demo GPU host runs in a child
// process (as a real host is another machine), the core in this one connects to it over SSH and polls it —
// metrics, systemd, health, GPUs, journals for the recorder — while this process's CPU time is measured over a
// steady minute. Prints % of one core, and the SSH channels the host saw per minute per unit.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createApp } from '../src/main/compose';
import type { CoreOptions } from '../src/main/core/core';

const WARMUP_MS = 15_000;
const MEASURE_MS = Number(process.env.BENCH_CORE_CPU_MS ?? 60_000);

type Launched = Awaited<ReturnType<NonNullable<CoreOptions['demo']>>>;

async function remoteDemo(): Promise<Launched> {
  const child = spawn(
    process.execPath,
    [
      join(__dirname, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs'),
      '--tsconfig',
      join(__dirname, '..', 'tsconfig.node.json'),
      join(__dirname, 'support', 'demo-host-main.ts'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`demo host process exited (${code}) before it listened`)));
  });
  const j = JSON.parse(line) as Omit<Launched, 'hostKeyPublic' | 'stop'> & { hostKeyPublic: string };
  return {
    ...j,
    hostKeyPublic: Buffer.from(j.hostKeyPublic, 'base64'),
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export async function runCoreCpuBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-core-cpu-'));
  const app = createApp({ shell: 'browser', dataDir: dir, demoLauncher: () => remoteDemo() });
  try {
    const s = await app.core.openDemo({});
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, MEASURE_MS));
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    const pct = ((cpu.user + cpu.system) / 1000 / wall) * 100;
    const line = (label: string, v: string): void => void process.stdout.write(`${label.padEnd(58)}${v}\n`);
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
    line('goal', '≤ 1 % of a core (issue 16; 1.7–2.5 % before, the simulation included)');
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
  } finally {
    await app.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) void runCoreCpuBench().then(() => process.exit(0));
