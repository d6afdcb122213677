// `pd-console recording resave FILE`: rewrites a recording in the current format (format.ts), whose overview lets
// a review open it at once, its services named as the app names them now. Values, states, events and journal are
// kept exactly; the file is replaced atomically. A file whose data is not complete (cut short, damaged) is
// refused, as a re-saved copy would hide what was lost; one whose overview or index alone is damaged or missing
// is re-saved, which rebuilds them from the data.
import { resaveRecording } from '../core/recording/resave';
import { REVIEW_OVERVIEW } from '../core/review/overview-table';
import { FORMAT_MINOR_VERSION } from '../core/recording/format';
import type { CliIo } from './cli-io';
import { defineCommand, parseCommandLine, usageText, UsageError } from './cli-args';

export const RECORDING_USAGE = 'usage: pd-console recording resave FILE.pdrec.jsonl.gz';

export const RECORDING_COMMAND = defineCommand({ name: 'recording', usage: RECORDING_USAGE, options: {} });

export async function recordingCommand(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(RECORDING_COMMAND, argv);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message);
    throw err;
  }
  if (parsed.help) {
    io.stdout(
      `${RECORDING_USAGE}\nRewrites the recording in the current format (1.${FORMAT_MINOR_VERSION}), so that a review opens it at once from its overview.\n`,
    );
    return 0;
  }
  const [sub, ...rest] = parsed.positionals;
  if (sub !== 'resave')
    return usage(io, sub ? `unknown subcommand ${JSON.stringify(sub)}` : 'which subcommand?');
  if (rest.length !== 1)
    return usage(io, rest.length ? 'one file at a time' : 'which recording? give its path');
  try {
    const r = await resaveRecording(rest[0], { overview: REVIEW_OVERVIEW });
    const mib = (b: number): string => `${(b / 1048576).toFixed(1)} MiB`;
    io.stdout(
      `${r.path}: re-saved from format 1.${r.fromMinorVersion} to 1.${FORMAT_MINOR_VERSION} (${r.scrapes} scrapes; ${mib(r.bytesBefore)} → ${mib(r.bytesAfter)}${r.named ? `; its services named ${r.named.join(', ')}, as the app names them now` : ''}); a review now opens it at once\n`,
    );
    for (const d of r.rebuilt) io.stdout(`the recording's ${d.what}: rebuilt from the data\n`);
    return 0;
  } catch (err) {
    io.stderr(`pd-console recording resave: ${(err as Error).message}\n`);
    return 1;
  }
}

function usage(io: CliIo, why: string): number {
  io.stderr(usageText(RECORDING_COMMAND, why));
  return 2;
}
