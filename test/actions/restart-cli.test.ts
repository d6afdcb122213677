// `pd-console restart`: in process against the demo host (to set faults and answer prompts), and once as a
// real process through the CLI entry, the composition root and the demo host's own accelerated clock.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { restartCommand } from '../../src/main/cli/restart-command';
import { captureRestartIo } from '../support/restart-io';
import { openFixture, type Fixture } from './demo-fixture';

let f: Fixture | undefined;
afterEach(async () => {
  await f?.stop();
  f = undefined;
});

const capture = captureRestartIo;

async function app() {
  f = await openFixture();
  const fx = f;
  return {
    core: fx.core,
    handlers: { ...fx.core.handlers(), ...fx.restart.handlers(), ...fx.roll.handlers() },
    // The fixture is stopped by afterEach; the command must not close what the test still inspects.
    shutdown: async () => undefined,
  };
}

describe('pd-console restart (in process, demo host)', () => {
  it('prints the plan and refuses without --yes when stdin is not a terminal; nothing restarts', async () => {
    const a = await app();
    const pid = f!.demo.sim.snapshot().units.decode.mainPid;
    const io = capture();
    expect(await restartCommand(['decode'], io, { app: a })).toBe(2);
    expect(io.out()).toMatch(
      /^Restart plan: decode \(sglang-decode\.service\) on demo GPU host \(simulated\) as operator$/m,
    );
    expect(io.out()).toMatch(
      /^ {4}command: {8}sudo -n systemctl --no-block restart sglang-decode\.service$/m,
    );
    expect(io.out()).toMatch(
      /^ {4}last restart: {3}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ min \d+ s ago\)$/m,
    );
    expect(io.out()).toMatch(/^ {4}running: {8}\d+ request\(s\) on the worker, \d+ queued$/m);
    expect(io.out()).toMatch(/drain not supported by this router version/);
    expect(io.err()).toMatch(
      /refusing to restart without confirmation: stdin is not a terminal\. Pass --yes/,
    );
    expect(f!.demo.sim.snapshot().units.decode.mainPid).toBe(pid);
  });

  it('asks y/N on a terminal and does nothing on "n"', async () => {
    const a = await app();
    const asked: string[] = [];
    const io = capture({ isTTY: true, ask: async (q) => (asked.push(q), 'n') });
    expect(await restartCommand(['router'], io, { app: a })).toBe(4);
    expect(asked).toEqual(['Restart router (sglang-router.service) on demo GPU host (simulated)? [y/N] ']);
    expect(io.out()).toMatch(/Not restarted\.\n$/);
  });

  it('--yes walks every step of a decode restart, with journal lines and load progress as they arrive', async () => {
    const a = await app();
    const io = capture();
    expect(await restartCommand(['decode', '--yes'], io, { app: a })).toBe(0);
    const out = io.out();
    const order = [
      /decode {2}Send the restart command: running/,
      /decode {2}Send the restart command: succeeded — sudo -n systemctl --no-block restart sglang-decode\.service → exit 0/,
      /decode {2}systemd reports the unit active: running/,
      // Type=simple: active as soon as the process runs; the model loads while /health is awaited.
      /decode {2}systemd reports the unit active: succeeded — active\/running, main PID \d+/,
      /decode {2}loading weights: shard \d+\/17/,
      /decode {2}capturing CUDA graphs/,
      /decode {2}Server answers \/health with 200: succeeded/,
      /decode {2}Router reports the worker healthy: succeeded/,
      /✔ decode restarted in \d+ min \d+ s/,
    ];
    let at = 0;
    for (const re of order) {
      const m = re.exec(out.slice(at));
      expect(m, `${re} after offset ${at}`).not.toBeNull();
      at += m!.index + m![0].length;
    }
    expect(out).toMatch(/^ {4}decode {2}│ .*Loading safetensors checkpoint shards/m);
    expect(out).toMatch(/^ {4}decode {2}│ .*The server is fired up and ready to roll!/m);
  });

  it('a failure ends with the step, the hint and the sudoers line, exit 1', async () => {
    const a = await app();
    f!.demo.sim.setFault('sudo-password', true);
    const io = capture();
    expect(await restartCommand(['prefill', '--yes'], io, { app: a })).toBe(1);
    expect(io.out()).toMatch(
      /✖ prefill restart failed after .*sudo on demo GPU host \(simulated\) asks for a password/,
    );
    expect(io.out()).toMatch(/ {2}failed step: prefill command\n/);
    expect(io.out()).toMatch(
      / {2}sudoers line:\n {4}operator ALL=\(root\) NOPASSWD: \/usr\/bin\/systemctl --no-block restart sglang-prefill\.service/,
    );
  });

  it('Ctrl-C asks to cancel, and the restart stops before acting again (exit 4)', async () => {
    const a = await app();
    let interrupt: () => void = () => undefined;
    const io = capture({ onInterrupt: (fn) => ((interrupt = fn), () => undefined) });
    const pid = f!.demo.sim.snapshot().units.router.mainPid;
    const run = restartCommand(['stack', '--yes'], io, { app: a });
    await new Promise<void>((resolve) => {
      const on = (op: {
        services: Array<{ role: string; steps: Array<{ kind: string; state: string }> }>;
      }): void => {
        const s = op.services.find((x) => x.role === 'decode')?.steps.find((x) => x.kind === 'active');
        if (s?.state !== 'running') return;
        f!.core.off('restartProgress', on);
        resolve();
      };
      f!.core.on('restartProgress', on);
    });
    interrupt();
    expect(await run).toBe(4);
    expect(io.out()).toMatch(/Cancel requested: stopping before the next step/);
    expect(io.out()).toMatch(/■ PD stack restart cancelled after/);
    expect(f!.demo.sim.snapshot().units.router.mainPid).toBe(pid);
  });
});

describe('pd-console restart (real process)', () => {
  const root = join(__dirname, '..', '..');
  const cli = (args: string[]): Promise<{ code: number | null; out: string; err: string }> =>
    new Promise((resolve) => {
      const p = spawn(
        process.execPath,
        [
          join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
          '--tsconfig',
          'tsconfig.node.json',
          'src/main/cli/main.ts',
          ...args,
        ],
        { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.stderr.on('data', (d: Buffer) => (err += d.toString()));
      p.on('exit', (code) => resolve({ code, out, err }));
    });

  it('restarts decode on the demo host at --demo-speed, timing it on the demo clock', async () => {
    const r = await cli(['restart', 'decode', '--yes', '--demo-speed', '60', '--json']);
    expect(r.code, r.err).toBe(0);
    const [planLine, opLine] = r.out.trim().split('\n');
    expect(JSON.parse(planLine).plan.services[0].command).toBe(
      'sudo -n systemctl --no-block restart sglang-decode.service',
    );
    const op = JSON.parse(opLine).operation;
    expect(op.state).toBe('succeeded');
    // A decode load takes ~90 simulated seconds: the demo clock, not the ~2 real seconds, timed it.
    expect(op.elapsedMs).toBeGreaterThan(90_000);
    expect(r.err).toMatch(/decode {2}Router reports the worker healthy: succeeded/);
  }, 60_000);
});
