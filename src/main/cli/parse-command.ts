// `pd-console parse --format prometheus|openmetrics [--json]`: checks an exposition read on stdin with the same
// parser the app scrapes with, so an operator can test what an endpoint serves (curl … | pd-console parse …).

import { expositionToJson } from '../core/probes/exposition/json';
import { ExpositionParseError, parseExposition } from '../core/probes/exposition/parser';
import type { ExpositionFormat } from '../core/probes/exposition/types';
import { defineCommand, parseCommandLine, usageText, UsageError } from './cli-args';

export const PARSE_USAGE =
  'usage: pd-console parse --format prometheus|openmetrics [--json] < exposition.txt';

export const PARSE_COMMAND = defineCommand({
  name: 'parse',
  usage: PARSE_USAGE,
  options: { format: { type: 'string' }, json: { type: 'boolean' } },
});

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const FORMAT_TITLE: Record<ExpositionFormat, string> = {
  prometheus: 'Prometheus text format 0.0.4',
  openmetrics: 'OpenMetrics 1.0 text',
};

/** Longest piece of the offending line shown under an error; scrapes can have very long lines. */
const EXCERPT_CHARS = 120;

/**
 * Runs the command on already-read stdin, preferably its bytes (a string cannot show invalid UTF-8). `argv` holds the arguments after `parse` (a leading "parse" is
 * tolerated). Exit 0: it parses (with --json the families are printed; NaN/±Inf as "NaN", "+Inf", "-Inf").
 * Exit 1: it does not; stderr says where and why. Exit 2: bad arguments.
 */
export function parseCommand(argv: string[], stdin: string | Uint8Array): CommandResult {
  const args = argv[0] === 'parse' ? argv.slice(1) : argv;
  let parsed;
  try {
    parsed = parseCommandLine(PARSE_COMMAND, args);
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message);
    throw err;
  }
  if (parsed.help) return { exitCode: 0, stdout: `${PARSE_USAGE}\n${HELP}`, stderr: '' };
  if (parsed.positionals.length)
    return usageError(
      `unexpected argument ${JSON.stringify(parsed.positionals[0])} (the exposition is read on stdin)`,
    );
  const json = parsed.values.json === true;
  const format = parsed.values.format;
  if (format !== undefined && format !== 'prometheus' && format !== 'openmetrics')
    return usageError(`--format must be prometheus or openmetrics, not ${JSON.stringify(format)}`);
  if (format === undefined) {
    return usageError(
      'missing --format (use openmetrics when the endpoint answered Content-Type application/openmetrics-text, ' +
        'prometheus for text/plain)',
    );
  }

  try {
    const exposition = parseExposition(stdin, format);
    if (json) return { exitCode: 0, stdout: `${expositionToJson(exposition, 2)}\n`, stderr: '' };
    const families = exposition.families.length;
    return {
      exitCode: 0,
      stdout:
        `ok: valid ${FORMAT_TITLE[format]}, ${families} ${families === 1 ? 'family' : 'families'}, ` +
        `${exposition.sampleCount} ${exposition.sampleCount === 1 ? 'sample' : 'samples'}\n`,
      stderr: '',
    };
  } catch (err) {
    // Anything but a parse error is a bug in the parser and must surface as one, not as "invalid input".
    if (!(err instanceof ExpositionParseError)) throw err;
    // decoded as the parser decodes it, so the caret lands under the same character
    const text = typeof stdin === 'string' ? stdin : Buffer.from(stdin).toString('utf8');
    return { exitCode: 1, stdout: '', stderr: describeError(err, text) };
  }
}

const HELP =
  "Reads an exposition on stdin and checks it with PD Console's parser.\n" +
  '  --format prometheus   Prometheus text format 0.0.4 (Content-Type text/plain)\n' +
  '  --format openmetrics  OpenMetrics 1.0 (Content-Type application/openmetrics-text)\n' +
  '  --json                print the parsed families as JSON (NaN and infinities as "NaN", "+Inf", "-Inf")\n' +
  'Exit status: 0 valid, 1 invalid (line, column and reason on stderr), 2 bad arguments.\n';

function usageError(message: string): CommandResult {
  return { exitCode: 2, stdout: '', stderr: usageText(PARSE_COMMAND, message) };
}

function describeError(err: ExpositionParseError, stdin: string): string {
  const header =
    `pd-console parse: stdin is not valid ${FORMAT_TITLE[err.format]}\n` +
    `line ${err.line}, column ${err.column}: ${err.reason}\n`;
  const text = lineText(stdin, err.line);
  if (text === undefined) return header;
  // Show a window of the line around the column, with a caret under the offending character.
  const at = err.column - 1;
  const from = Math.max(0, Math.min(at - EXCERPT_CHARS / 2, text.length - EXCERPT_CHARS));
  const to = Math.min(text.length, from + EXCERPT_CHARS);
  const shown = (from > 0 ? '…' : '') + visible(text.slice(from, to)) + (to < text.length ? '…' : '');
  const gutter = String(err.line);
  const caretOffset = at - from + (from > 0 ? 1 : 0);
  return `${header}  ${gutter} | ${shown}\n  ${' '.repeat(gutter.length)} | ${' '.repeat(Math.max(0, caretOffset))}^\n`;
}

/** The text of 1-based line `n` without its newline, or undefined past the end. */
function lineText(text: string, n: number): string | undefined {
  let start = 0;
  for (let line = 1; line < n; line++) {
    const nl = text.indexOf('\n', start);
    if (nl === -1) return undefined;
    start = nl + 1;
  }
  if (start > text.length) return undefined;
  const end = text.indexOf('\n', start);
  return text.slice(start, end === -1 ? text.length : end);
}

/** One visible character per input character, so the caret stays aligned: tabs and controls become marks. */
function visible(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += c === 9 ? '→' : c === 13 ? '␍' : c < 32 || c === 127 ? '·' : s[i];
  }
  return out;
}
