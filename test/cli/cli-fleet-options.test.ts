// `status --add-host` is checked before anything connects: it names what is wrong and what it takes, over the
// usage of `status`.
import { describe, expect, it } from 'vitest';
import { runCli, STATUS_COMMAND } from '../../src/main/cli/main';
import { usageText } from '../../src/main/cli/cli-args';

async function cli(args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await runCli(args, { stdout: () => {}, stderr: (s) => (err += s), readStdin: async () => '' });
  return { code, err };
}

describe('status --add-host', () => {
  it('is refused with the demo host, which is one host', async () => {
    expect(await cli(['status', '--add-host', 'gpu-c'])).toEqual({
      code: 2,
      err: usageText(STATUS_COMMAND, '--add-host applies to real hosts only: the demo host is one host'),
    });
  });

  it('needs hosts, and each must be an alias or user@host[:port]', async () => {
    expect(await cli(['status', '--host', 'gpu-a', '--add-host'])).toEqual({
      code: 2,
      err: usageText(
        STATUS_COMMAND,
        '--add-host needs hosts, comma-separated (an ssh alias from ~/.ssh/config (e.g. gpu-box) or user@host[:port])',
      ),
    });
    expect((await cli(['status', '--host', 'gpu-a', '--add-host', 'gpu-c,bad host'])).err).toBe(
      usageText(
        STATUS_COMMAND,
        'cannot read host "bad host": expected an ssh alias from ~/.ssh/config (e.g. gpu-box) or user@host[:port]',
      ),
    );
  });
});
