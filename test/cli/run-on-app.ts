// Runs the CLI in process on an app the test owns (and so can reach its demo simulation), capturing output.
import type { App } from '../../src/main/compose';
import { runCli } from '../../src/main/cli/main';

export async function cliOnApp(
  app: App,
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(
    argv,
    { stdout: (s) => (out += s), stderr: (s) => (err += s), readStdin: async () => '' },
    { app },
  );
  return { code, out, err };
}
