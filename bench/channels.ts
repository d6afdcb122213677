// SSH channels the app opens on a host, per minute, counted by the demo host's SSH server (every exec channel
// with its command line, and the direct-tcpip channels that carry HTTP). Three phases of one live session, at the
// cadences of a real host (the monitor polls every second, a restart every second of wall time):
//   recording   the recorder alone follows the journals (every session is recorded)
//   + view      an operator also has the decode journal open
//   + restart   …and restarts decode (measured for the restart's duration)
// Figures are per unit for journalctl (the unit restarted and one that is not) and per host for the rest.
// Run: npx tsx --tsconfig tsconfig.node.json bench/channels.ts [--seconds 20]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceleratedClock, systemClock } from '../src/main/core/clock';
import { Core } from '../src/main/core/core';
import { DashboardService } from '../src/main/core/services/dashboard';
import { RecordingService } from '../src/main/core/services/recording';
import { RestartService } from '../src/main/core/services/restart';
import { startDemoHost, type DemoHost } from '../src/main/demo';
import { standardDeployment } from '../src/main/compose';

/** The demo's model loading runs this much faster than real time, so a restart takes seconds. */
const SPEED = 20;
const UNITS = { decode: 'sglang-decode.service', prefill: 'sglang-prefill.service' };

export interface PhaseFigures {
  phase: string;
  seconds: number;
  /** Per minute. */
  journalDecode: number;
  journalPrefill: number;
  systemctl: number;
  nvidiaSmi: number;
  exec: number;
  tcpip: number;
}

function measure(demo: DemoHost, phase: string, since: number, tcpip0: number): PhaseFigures {
  const seconds = (Date.now() - since) / 1000;
  const cmds = demo.channels.execsSince(since).map((e) => e.command);
  const perMin = (n: number): number => (n * 60) / seconds;
  const journal = (unit: string): number =>
    perMin(cmds.filter((c) => /^journalctl\b/.test(c) && c.includes(`-u ${unit}`)).length);
  return {
    phase,
    seconds,
    journalDecode: journal(UNITS.decode),
    journalPrefill: journal(UNITS.prefill),
    systemctl: perMin(cmds.filter((c) => /\bsystemctl\b/.test(c)).length),
    nvidiaSmi: perMin(cmds.filter((c) => /^nvidia-smi\b/.test(c)).length),
    exec: perMin(cmds.length),
    tcpip: perMin(demo.channels.tcpipChannels - tcpip0),
  };
}

export async function runChannelsBench(opts: { seconds?: number } = {}): Promise<PhaseFigures[]> {
  const seconds = opts.seconds ?? 20;
  const clock = acceleratedClock(SPEED);
  const demo = await startDemoHost({ clock, seed: 3 });
  const dir = mkdtempSync(join(tmpdir(), 'pdc-bench-channels-'));
  const core = new Core({
    shell: 'cli',
    version: 'bench',
    clock: systemClock,
    demo: async () => ({
      ...demo,
      deployment: standardDeployment({ id: 'demo', label: 'demo', kind: 'demo' }),
    }),
  });
  const dashboard = new DashboardService(core);
  const recording = new RecordingService(core, {
    dir: join(dir, 'recordings'),
    exportDir: join(dir, 'exports'),
    appVersion: 'bench',
    clockFor: () => clock,
  });
  // The restart runs on the demo's clock (its deadlines are the host's), polling once per second of wall time.
  const restart = new RestartService(core, {
    clockFor: () => clock,
    pollMs: 1000 * SPEED,
    userName: () => 'bench',
  });
  const out: PhaseFigures[] = [];
  try {
    const { deployment } = await core.openDemo({});
    const id = deployment.id;
    const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    // Let the first polls, the recording and its journal backlogs settle.
    await wait(3000);
    let since = Date.now();
    let tcpip0 = demo.channels.tcpipChannels;
    await wait(seconds * 1000);
    out.push(measure(demo, 'recording', since, tcpip0));

    const { followId } = await dashboard
      .handlers()
      .followJournal({ deploymentId: id, role: 'decode', lines: 300 });
    since = Date.now();
    tcpip0 = demo.channels.tcpipChannels;
    await wait(seconds * 1000);
    out.push(measure(demo, '+ view', since, tcpip0));

    since = Date.now();
    tcpip0 = demo.channels.tcpipChannels;
    const { operation } = await restart.startRestart({ deploymentId: id, target: 'decode' });
    const end = await restart.whenDone(operation.id);
    out.push(measure(demo, `+ restart (${end.state})`, since, tcpip0));
    await dashboard.handlers().unfollowJournal({ followId });
  } finally {
    restart.dispose();
    await core.shutdown();
    dashboard.stop();
    await recording.shutdown();
    await demo.stop();
  }
  print(out);
  return out;
}

function print(rows: PhaseFigures[]): void {
  const f = (x: number): string => x.toFixed(1).padStart(9);
  console.log('');
  console.log('SSH channels opened per minute on one host (demo, 3 units), counted by its SSH server');
  console.log(
    `${'phase'.padEnd(26)} ${'seconds'.padStart(8)} ${'journalctl'.padStart(9)} ${'journalctl'.padStart(9)} ${'systemctl'.padStart(9)} ${'nvidia-smi'.padStart(9)} ${'all exec'.padStart(9)} ${'tcpip'.padStart(9)}`,
  );
  console.log(
    `${''.padEnd(26)} ${''.padStart(8)} ${'decode'.padStart(9)} ${'prefill'.padStart(9)} ${'host'.padStart(9)} ${'host'.padStart(9)} ${'host'.padStart(9)} ${'host'.padStart(9)}`,
  );
  for (const r of rows)
    console.log(
      `${r.phase.padEnd(26)} ${r.seconds.toFixed(0).padStart(8)} ${f(r.journalDecode)} ${f(r.journalPrefill)} ${f(r.systemctl)} ${f(r.nvidiaSmi)} ${f(r.exec)} ${f(r.tcpip)}`,
    );
}

const isMain = process.argv[1] !== undefined && /bench[\\/]channels\.ts$/.test(process.argv[1]);
if (isMain) {
  const i = process.argv.indexOf('--seconds');
  runChannelsBench({ seconds: i > 0 ? Number(process.argv[i + 1]) : undefined }).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
