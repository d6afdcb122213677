// The terminal of `pd-console restart` in tests: output captured, no TTY (so --yes is needed), no Ctrl-C.
import type { RestartCliIo } from '../../src/main/cli/restart-command';

export function captureRestartIo(
  extra: Partial<RestartCliIo> = {},
): RestartCliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    isTTY: false,
    onInterrupt: () => () => undefined,
    out: () => out,
    err: () => err,
    ...extra,
  };
}
