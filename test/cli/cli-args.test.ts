// The CLI never answers for a host the operator did not name. Every command reads its words with one parser
// (src/main/cli/cli-args.ts, node:util parseArgs in strict mode): `--flag=value` means `--flag value`, flags go
// before or after the other words, a boolean flag never takes the next word, and an unknown flag is refused with
// the command's usage and exit 2 — before, `status --host=gpu-prod-7 --json` printed the simulated demo host,
// all healthy, exit 0. The demo is chosen only by `--host demo` or no host, and says "simulated".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { defineCommand, parseCommandLine, UsageError, type CommandSpec } from '../../src/main/cli/cli-args';
import { DISCOVER_COMMAND, KV_COMMAND, METRICS_COMMAND, STATUS_COMMAND } from '../../src/main/cli/main';
import { RESTART_COMMAND } from '../../src/main/cli/restart-command';
import { HISTORY_COMMAND } from '../../src/main/cli/history-command';
import { OPEN_COMMAND } from '../../src/main/cli/open-command';
import { RECORDING_COMMAND } from '../../src/main/cli/recording-command';
import { SETTINGS_COMMAND } from '../../src/main/cli/settings-command';
import { EXPORT_COMMAND } from '../../src/main/cli/export-command';
import { PARSE_COMMAND } from '../../src/main/cli/parse-command';
import { WEB_COMMAND, parseWebArgs } from '../../src/main/web/web-args';
import { cliCaptured, cliOnApp } from './run-on-app';

const SPECS: CommandSpec[] = [
  STATUS_COMMAND,
  KV_COMMAND,
  DISCOVER_COMMAND,
  METRICS_COMMAND,
  RESTART_COMMAND,
  HISTORY_COMMAND,
  OPEN_COMMAND,
  RECORDING_COMMAND,
  SETTINGS_COMMAND,
  EXPORT_COMMAND,
  PARSE_COMMAND,
  WEB_COMMAND,
];

/** A host that refuses at once: a command that reaches it fails naming it; one that answers did not. */
const NOWHERE = 'nobody@127.0.0.1:1';

describe('the one parser', () => {
  const spec = defineCommand({
    name: 'x',
    usage: 'usage: x',
    options: {
      host: { type: 'string', needs: 'a host' },
      json: { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
      'add-host': { type: 'string', multiple: true },
    },
  });
  const refusal = (argv: string[]): string => {
    try {
      parseCommandLine(spec, argv);
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      return (err as Error).message;
    }
    throw new Error(`${JSON.stringify(argv)} was accepted`);
  };

  it('reads --flag=value as --flag value, flags before or after the other words', () => {
    const want = {
      values: { host: 'gpu-prod-7', json: true },
      positionals: ['decode.kv_ratio'],
      help: false,
    };
    expect(parseCommandLine(spec, ['--host=gpu-prod-7', '--json', 'decode.kv_ratio'])).toEqual(want);
    expect(parseCommandLine(spec, ['decode.kv_ratio', '--host', 'gpu-prod-7', '--json'])).toEqual(want);
    // A boolean never takes the next word.
    expect(parseCommandLine(spec, ['--json', 'decode.kv_ratio', '--host=gpu-prod-7'])).toEqual(want);
    expect(parseCommandLine(spec, ['-y', '--add-host', 'a', '--add-host=b']).values).toEqual({
      yes: true,
      'add-host': ['a', 'b'],
    });
    expect(parseCommandLine(spec, ['--', '--json']).positionals).toEqual(['--json']);
    expect(parseCommandLine(spec, ['--host', 'x', '--bogus', '-h']).help).toBe(true);
  });

  it('refuses what it cannot read, naming the word as it was typed', () => {
    expect(refusal(['--hots', 'gpu'])).toBe('unknown option "--hots"');
    expect(refusal(['-z'])).toBe('unknown option "-z"');
    expect(refusal(['--host'])).toBe('--host needs a host');
    expect(refusal(['--host', '--json'])).toBe(
      '--host needs a host (got "--json"; write --host=--json if that is the value)',
    );
    expect(refusal(['--json=yes'])).toBe('--json takes no value (got "--json=yes")');
    expect(refusal(['--host', 'a', '--host=b'])).toBe('--host given twice with different values');
  });

  it('every option a command declares is in its usage', () => {
    for (const s of SPECS)
      for (const name of Object.keys(s.options))
        expect(s.usage, `${s.name} --${name}`).toContain(`--${name}`);
  });

  it('npm run web reads --port=N too', () => {
    expect(parseWebArgs(['--port=8080', '--no-open'])).toMatchObject({ port: 8080, open: false });
    expect(() => parseWebArgs(['--prot', '8080'])).toThrow('unknown option "--prot"');
  });

  it('npm run web takes the demo model load in seconds, not below what its steps need', () => {
    expect(parseWebArgs(['--demo-model-load', '30'])).toMatchObject({ demoModelLoadMs: 30_000 });
    expect(parseWebArgs([])).toMatchObject({ demoModelLoadMs: undefined });
    expect(() => parseWebArgs(['--demo-model-load', '5'])).toThrow(
      '--demo-model-load needs at least 20 seconds, got 5',
    );
    expect(() => parseWebArgs(['--demo-model-load', 'fast'])).toThrow('--demo-model-load needs a number');
  });
});

describe('every command', () => {
  it.each([
    ['status', '--hots', 'gpu-prod-7'],
    ['kv', '--json'],
    ['discover', '--watch'],
    ['metrics', '--service', 'decode', '--wait', '3'],
    ['restart', 'decode', '--hots', 'gpu-prod-7'],
    ['history', 'decode.kv_ratio', '--hots', 'gpu-prod-7'],
    ['open', 'x.pdrec.jsonl.gz', '--hots'],
    ['recording', 'resave', 'x.pdrec.jsonl.gz', '--hots'],
    ['settings', 'show', '--hots'],
    ['export', 'prometheus-config', '--hots', 'gpu-prod-7'],
    ['parse', '--format', 'prometheus', '--hots'],
  ])('%s refuses an unknown flag with its usage, exit 2', async (cmd, ...rest) => {
    const r = await cliCaptured([cmd, ...rest]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.out).toBe('');
    const spec = SPECS.find((s) => s.name === cmd)!;
    expect(r.err).toBe(
      `pd-console ${cmd}: unknown option "${rest.find((a) => a.startsWith('--') && !(a.slice(2) in spec.options))}"\n${spec.usage.endsWith('\n') ? spec.usage : `${spec.usage}\n`}`,
    );
  });

  it.each([
    ['status', `--host=${NOWHERE}`, '--json'],
    ['kv', `--host=${NOWHERE}`],
    ['discover', `--host=${NOWHERE}`],
    ['metrics', '--service=decode', `--host=${NOWHERE}`, '--json'],
    ['history', '--json', 'decode.kv_ratio', `--host=${NOWHERE}`],
    ['export', `--host=${NOWHERE}`, 'prometheus-config'],
    ['restart', `--host=${NOWHERE}`, '--yes', 'decode'],
  ])(
    '%s answers for the host named with --host=VALUE, never the demo',
    async (...argv) => {
      const r = await cliCaptured(argv);
      expect(r.code, r.out + r.err).toBe(1);
      expect(r.err).toContain('127.0.0.1');
      expect(r.out).not.toMatch(/simulated|demo/i);
    },
    60_000,
  );

  it.each([
    ['history', 'decode.kv_ratio', '--json', '--since', '1h', '--host', NOWHERE],
    ['history', '--json', 'decode.kv_ratio', '--host', NOWHERE],
    ['logs', 'decode', '-n', '5', '--host', NOWHERE],
    ['logs', '--json', 'decode', '--host', NOWHERE],
    ['export', 'prometheus-config', '--host', NOWHERE],
    ['restart', 'decode', '--yes', '--host', NOWHERE],
    ['restart', '--yes', 'decode', '--host', NOWHERE],
  ])(
    '%s takes its flags before or after the other words: it goes to work, not to its usage',
    async (...argv) => {
      const r = await cliCaptured(argv);
      expect(r.code, r.out + r.err).toBe(1);
      expect(r.err).toContain('127.0.0.1');
      expect(r.err).not.toContain('usage:');
    },
    60_000,
  );

  it('--help of a command prints its usage and does nothing else', async () => {
    for (const s of SPECS.filter((x) => x.name !== 'web')) {
      const r = await cliCaptured([s.name, '--help']);
      expect(r.code, s.name).toBe(0);
      expect(r.out, s.name).toContain(s.usage.split('\n')[0]);
    }
  });
});

describe('the demo, when no host is named or --host demo', () => {
  let app: App;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pd-cli-args-'));
    app = createApp({ shell: 'cli', intervalMs: 500, dataDir: dir, record: false });
    await app.core.openDemo({});
  }, 60_000);
  afterAll(async () => {
    await app?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['status', '--wait', '0'],
    ['kv'],
    ['discover', '--host', 'demo'],
    ['metrics', '--service', 'decode'],
    ['history', 'decode.kv_ratio', '--since', '5m'],
  ])(
    '%s says "simulated" on its first line',
    async (...argv) => {
      const r = await cliOnApp(app, argv);
      expect(r.out.split('\n')[0], r.out + r.err).toMatch(/simulated/);
    },
    60_000,
  );

  it.each([
    ['status', '--json', '--wait=0'],
    ['discover', '--json'],
    ['metrics', '--service=decode', '--json'],
    ['history', '--json', 'decode.kv_ratio', '--since=5m'],
  ])(
    '%s --json has "simulated": true',
    async (...argv) => {
      const r = await cliOnApp(app, argv);
      expect(JSON.parse(r.out).simulated, r.err).toBe(true);
    },
    60_000,
  );
});
