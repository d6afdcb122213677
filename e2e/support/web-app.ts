// Starts browser mode (`node out/main/web.js`) as a real child process and reads the URL it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface WebApp {
  url: string;
  origin: string;
  token: string;
  proc: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * For the scenarios that wait through restarts at real speed (crash loops, recovery): the demo's decode loads its
 * model in 30 s instead of 90, prefill in 20 instead of 60, with the same journal lines in the same order.
 */
export const QUICK_LOAD = ['--demo-model-load', '30'];

export async function startWebApp(
  args: string[] = ['--demo', '--no-open'],
  extraEnv: Record<string, string> = {},
  /** Node arguments that start the backend instead of the built web.js (the benchmarks' own composition). */
  entry?: string[],
): Promise<WebApp> {
  const root = join(__dirname, '..', '..');
  // PD_E2E_OUT lets a run use its own build (electron-vite build --outDir …) while others use out/.
  const outDir = process.env.PD_E2E_OUT ?? join(root, 'out');
  const proc = spawn(process.execPath, [...(entry ?? [join(outDir, 'main', 'web.js')]), ...args], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    // Recordings and exports of a test run go to a fresh folder, never the developer's own.
    env: {
      ...process.env,
      // A build outside the repo still finds the externalized dependencies.
      NODE_PATH: join(root, 'node_modules'),
      PD_CONSOLE_DATA_DIR: mkdtempSync(join(tmpdir(), 'pdc-e2e-')),
      ...extraEnv,
    },
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`browser mode printed no URL within 20 s:\n${out}`)),
      20_000,
    );
    const check = (): void => {
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', check);
    proc.on('exit', (code) => reject(new Error(`browser mode exited with ${code}:\n${out}`)));
  });
  const u = new URL(url);
  return {
    url,
    origin: u.origin,
    token: u.searchParams.get('token')!,
    proc,
    output: () => out,
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => proc.kill('SIGKILL'), 5000).unref();
      }),
  };
}
