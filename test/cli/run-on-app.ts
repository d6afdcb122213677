// Runs the CLI in process, capturing its output: on an app the test owns (and so can reach its demo
// simulation), or with any other of the CLI's dependencies (an ssh home, …).
import type { App } from '../../src/main/compose';
import { runCli, type CliDeps } from '../../src/main/cli/main';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export async function cliCaptured(argv: string[], deps: CliDeps = {}): Promise<CliRun> {
  let out = '';
  let err = '';
  const code = await runCli(
    argv,
    { stdout: (s) => (out += s), stderr: (s) => (err += s), readStdin: async () => '' },
    deps,
  );
  return { code, out, err };
}

export function cliOnApp(app: App, argv: string[]): Promise<CliRun> {
  return cliCaptured(argv, { app });
}
