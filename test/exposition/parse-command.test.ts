// `pd-console parse`: exit codes, JSON output and error reports an operator can act on.

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseCommand, PARSE_USAGE } from '../../src/main/cli/parse-command';

const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../../..');

const SGLANG = [
  '# HELP sglang:token_usage The token usage.',
  '# TYPE sglang:token_usage gauge',
  'sglang:token_usage{engine_type="decode",model_name="m"} 0.53',
  'sglang:spec_accept_rate{engine_type="decode",model_name="m"} NaN',
  'sglang:max_wait{engine_type="decode"} +Inf',
  'sglang:min_wait{engine_type="decode"} -Inf',
  '',
].join('\n');

describe('parseCommand', () => {
  it('exits 0 with a one-line summary when the input parses', () => {
    const r = parseCommand(['--format', 'prometheus'], SGLANG);
    expect(r).toEqual({
      exitCode: 0,
      stdout: 'ok: valid Prometheus text format 0.0.4, 4 families, 4 samples\n',
      stderr: '',
    });
  });

  it('prints the families as JSON with --json, NaN and infinities as strings', () => {
    const r = parseCommand(['--json', '--format=prometheus'], SGLANG);
    expect(r.exitCode).toBe(0);
    const out = JSON.parse(r.stdout) as { families: { name: string; samples: { value: unknown }[] }[] };
    expect(out.families.map((f) => [f.name, f.samples[0].value])).toEqual([
      ['sglang:token_usage', 0.53],
      ['sglang:spec_accept_rate', 'NaN'],
      ['sglang:max_wait', '+Inf'],
      ['sglang:min_wait', '-Inf'],
    ]);
  });

  it('exits 1 and shows line, column, reason and the offending line with a caret', () => {
    const input = 'ok 1\nsglang:num_running_reqs{engine_type="prefill} 3.0\n';
    const r = parseCommand(['--format', 'prometheus'], input);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        'pd-console parse: stdin is not valid Prometheus text format 0.0.4',
        `line 2, column 37: unterminated value of label "engine_type": no closing '"' on this line`,
        '  2 | sglang:num_running_reqs{engine_type="prefill} 3.0',
        '    |                                     ^',
        '',
      ].join('\n'),
    );
  });

  it('checks OpenMetrics rules with --format openmetrics', () => {
    expect(parseCommand(['--format', 'openmetrics'], 'a 1\n# EOF\n').exitCode).toBe(0);
    const r = parseCommand(['--format', 'openmetrics'], SGLANG);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^pd-console parse: stdin is not valid OpenMetrics 1.0 text\nline 7, column 1: missing "# EOF"/,
    );
  });

  it('keeps the caret aligned on long lines and lines with tabs', () => {
    const long = `m{a="${'x'.repeat(300)}",b=oops} 1\n`;
    const r = parseCommand(['--format', 'prometheus'], long);
    const [, , excerpt, caret] = r.stderr.split('\n');
    expect(excerpt.length).toBeLessThan(140);
    expect(excerpt[caret.indexOf('^')]).toBe('o');
    const tabbed = parseCommand(['--format', 'prometheus'], 'm{a="1",\tb=x} 1\n').stderr.split('\n');
    expect(tabbed[2][tabbed[3].indexOf('^')]).toBe('x');
  });

  it.each([
    [[], /missing --format/],
    [['--format'], /--format needs a value/],
    [['--format', 'json'], /--format must be prometheus or openmetrics, not "json"/],
    [['--format', 'prometheus', '--format', 'openmetrics'], /given twice/],
    [['--format', 'prometheus', '--yaml'], /unknown option "--yaml"/],
  ])('exits 2 with a usage line for bad arguments %j', (argv, message) => {
    const r = parseCommand(argv, 'a 1\n');
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.endsWith(`${PARSE_USAGE}\n`)).toBe(true);
  });

  it('reads stdin as bytes: invalid UTF-8 in a label value is reported, not read as U+FFFD', () => {
    // Before, stdin was decoded to a string first and these two series became one, exit 0.
    const input = Buffer.concat([
      Buffer.from('m{a="'),
      Buffer.from([0xff]),
      Buffer.from('"} 1\nm{a="'),
      Buffer.from([0xfe]),
      Buffer.from('"} 2\n'),
    ]);
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const run = spawnSync(
      process.execPath,
      [tsx, '--tsconfig', 'tsconfig.node.json', 'src/main/cli/main.ts', 'parse', '--format', 'prometheus'],
      { cwd: REPO_ROOT, input, encoding: 'utf8' },
    );
    expect(run.status).toBe(1);
    const [, where, excerpt, caret] = run.stderr.split('\n');
    expect(where).toMatch(/^line 1, column 6: invalid UTF-8: byte 0xff never occurs in UTF-8/);
    expect(excerpt[caret.indexOf('^')]).toBe('\ufffd');
  });

  it('prints help on --help and tolerates a leading "parse"', () => {
    expect(parseCommand(['--help'], '')).toMatchObject({ exitCode: 0, stderr: '' });
    expect(parseCommand(['parse', '--format', 'prometheus'], 'a 1\n').exitCode).toBe(0);
  });
});
