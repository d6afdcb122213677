import { describe, expect, it } from 'vitest';
import {
  discoveryShowCommands,
  LIST_UNITS_COMMAND,
  readEnvFileCommand,
  SHOW_BATCH,
  systemctlCatCommand,
} from '../../src/main/core/discovery/commands';
import { connectHost, matchEndpoint } from '../../src/main/core/discovery/discover';
import {
  expandEnv,
  expandSpecifiers,
  splitExecLine,
  stripExecPrefixes,
} from '../../src/main/core/discovery/exec-words';
import { findSglangCommand } from '../../src/main/core/discovery/sglang-command';
import { flagGroups, parseRouterFlags, parseServerFlags } from '../../src/main/core/discovery/sglang-flags';
import {
  parseEnvFile,
  parseListUnits,
  parseShowExec,
  parseUnitCat,
  splitShowBatch,
} from '../../src/main/core/discovery/unit-text';
import { CAT_DECODE_A, CAT_PREFILL_A, LIST_UNITS_A, SHOW_BATCH_C } from './units';

describe('splitExecLine (systemd quoting)', () => {
  it('groups quotes, decodes C escapes, keeps empty quoted words', () => {
    expect(
      splitExecLine(`/bin/python -m x --name "My Model" --chat '{"a": 1}' a\\ b "" --tab=\\t --hex=\\x41`),
    ).toEqual({
      argv: [
        '/bin/python',
        '-m',
        'x',
        '--name',
        'My Model',
        '--chat',
        '{"a": 1}',
        // An unknown escape stays as written, backslash and all (systemd 252, test/real-systemd/exec-syntax).
        'a\\ b',
        '',
        '--tab=\t',
        '--hex=A',
      ],
    });
  });

  it('reports an unterminated quote', () => {
    expect(splitExecLine('python -m x "oops').error).toMatch(/unterminated " quote/);
  });

  it('strips systemd exec prefixes', () => {
    expect(stripExecPrefixes(['-/usr/bin/python3', '-m', 'x'])).toEqual(['/usr/bin/python3', '-m', 'x']);
    expect(stripExecPrefixes(['@/usr/bin/python3', 'my-python', '-m', 'x'])).toEqual([
      '/usr/bin/python3',
      '-m',
      'x',
    ]);
    expect(stripExecPrefixes(['!!/usr/bin/python3', '-m'])).toEqual(['/usr/bin/python3', '-m']);
  });
});

describe('expandEnv / expandSpecifiers', () => {
  it('expands ${VAR} inside words, splits bare $VAR, keeps unknown ones and reports them', () => {
    expect(
      expandEnv(['--port', '${PORT}', '$OPTS', '--x=${NOPE}', '$$HOME'], { PORT: '30200', OPTS: '--a  --b' }),
    ).toEqual({
      argv: ['--port', '30200', '--a', '--b', '--x=${NOPE}', '$HOME'],
      unresolved: ['NOPE'],
    });
  });

  it('resolves instance specifiers of template units', () => {
    expect(expandSpecifiers('--disaggregation-mode %i --name %n %p %N 100%%', 'llm@decode.service')).toBe(
      '--disaggregation-mode decode --name llm@decode.service llm llm@decode 100%',
    );
    expect(expandSpecifiers('%I %H', 'x@a-b.service')).toBe('a/b %H');
  });
});

describe('parseUnitCat', () => {
  it('joins continuation lines, skipping comment lines inside them', () => {
    const u = parseUnitCat(CAT_PREFILL_A, 'dsv4-prefill.service');
    expect(u.execStart).toHaveLength(1);
    const argv = splitExecLine(u.execStart[0]).argv;
    expect(argv.slice(argv.indexOf('--port=30100'), argv.indexOf('--port=30100') + 3)).toEqual([
      '--port=30100',
      '--disaggregation-mode',
      'prefill',
    ]);
    expect(argv[argv.length - 1]).toBe('--enable-metrics');
    expect(u.execStart[0]).not.toContain('bootstrap port kept');
    expect(u.environment).toEqual({ HF_HUB_OFFLINE: '1', CUDA_VISIBLE_DEVICES: '0,1,2,3' });
    expect(u.files).toEqual(['/etc/systemd/system/dsv4-prefill.service']);
  });

  it('applies drop-ins in order: an empty ExecStart= resets the list', () => {
    const u = parseUnitCat(CAT_DECODE_A, 'dsv4-decode.service');
    expect(u.execStart).toHaveLength(1);
    expect(u.execStart[0]).toContain('--port 30200');
    expect(u.files).toEqual([
      '/etc/systemd/system/dsv4-decode.service',
      '/etc/systemd/system/dsv4-decode.service.d/override.conf',
    ]);
  });

  it('ignores keys outside [Service] and notices a changed-on-disk warning', () => {
    const u = parseUnitCat(
      '# Warning: x.service changed on disk, the version systemd has loaded is outdated.\n# /etc/systemd/system/x.service\n[Unit]\nExecStart=/not/this\n[Service]\nExecStart=/yes\n',
      'x.service',
    );
    expect(u.execStart).toEqual(['/yes']);
    expect(u.changedOnDisk).toBe(true);
  });
});

describe('systemctl list-units / show', () => {
  it('parses list-units, tolerating the ● marker', () => {
    const units = parseListUnits(LIST_UNITS_A);
    expect(units.map((u) => u.unit)).toContain('dsv4-old-decode.service');
    expect(units.find((u) => u.unit === 'dsv4-old-decode.service')).toEqual({
      unit: 'dsv4-old-decode.service',
      load: 'loaded',
      active: 'failed',
      sub: 'failed',
      description: 'DSv4 decode (old)',
    });
    expect(units.find((u) => u.unit === 'ghost.service')?.load).toBe('not-found');
  });

  it('splits a show batch by Id= and reads argv[], Environment, EnvironmentFiles', () => {
    const blocks = splitShowBatch(SHOW_BATCH_C);
    expect([...blocks.keys()]).toEqual([
      'infer-p.service',
      'infer-d.service',
      'infer-gw.service',
      'cron.service',
    ]);
    const cron = parseShowExec(blocks.get('cron.service') ?? '');
    expect(cron.shownArgv).toEqual(['/usr/sbin/cron -f $EXTRA_OPTS']);
    expect(cron.mainPid).toBe(812);
    expect(cron.environmentFiles).toEqual(['-/etc/default/cron']);
    const d = parseShowExec(blocks.get('infer-d.service') ?? '');
    expect(d.environment).toEqual({ HF_HOME: '/data/hf' });
    expect(d.changedOnDisk).toBe(true);
    expect(d.activeState).toBe('active');
  });

  it('falls back to the order of the asked units when Id= is missing', () => {
    expect([...splitShowBatch('ExecStart=\n\nExecStart=\n', ['a.service', 'b.service']).keys()]).toEqual([
      'a.service',
      'b.service',
    ]);
  });

  it('parses EnvironmentFile contents', () => {
    expect(parseEnvFile('# c\nexport PORT=30200\nNAME="a b"\n\nbad line\n')).toEqual({
      PORT: '30200',
      NAME: 'a b',
    });
  });
});

describe('findSglangCommand', () => {
  const find = (line: string, env: Record<string, string> = {}) =>
    findSglangCommand(splitExecLine(line).argv, env);

  it('recognises every launcher form', () => {
    expect(find('/v/bin/python3.11 -m sglang.launch_server --port 1')?.kind).toBe('server');
    expect(find('/v/lib/python3/site-packages/sglang/launch_server.py --port 1')?.kind).toBe('server');
    expect(find('/v/bin/sglang serve --port 1')).toMatchObject({ kind: 'server', args: ['--port', '1'] });
    expect(find('python -m sglang_router.launch_router --port 1')).toMatchObject({
      kind: 'router',
      flavour: 'sglang_router',
    });
    expect(find('python -m smg.launch_router --port 1')).toMatchObject({ kind: 'router', flavour: 'smg' });
    expect(find('python -m smg --port 1')).toMatchObject({ kind: 'router', flavour: 'smg' });
    expect(find('/usr/local/bin/smg --pd-disaggregation')).toMatchObject({
      kind: 'router',
      args: ['--pd-disaggregation'],
    });
    expect(find('uv run --project /srv python -m sglang.launch_server')?.kind).toBe('server');
    expect(find('/opt/smg/venv/bin/python -m http.server')).toBeUndefined();
    expect(find('/usr/sbin/sshd -D')).toBeUndefined();
  });

  it('collects inline and exported environment', () => {
    expect(find('env CUDA_VISIBLE_DEVICES=4,5 python -m sglang.launch_server')?.inlineEnv).toEqual({
      CUDA_VISIBLE_DEVICES: '4,5',
    });
    const sh = find(
      // `$$` is how a unit file passes a `$` through to the shell.
      `/bin/sh -c "cd /srv && export CUDA_VISIBLE_DEVICES=6,7 A=1; exec python -m sglang.launch_server --port $$PORT"`,
      { PORT: '30200' },
    );
    expect(sh?.inlineEnv).toEqual({ CUDA_VISIBLE_DEVICES: '6,7', A: '1' });
    expect(sh?.args).toEqual(['--port', '30200']);
  });
});

describe('flags', () => {
  it('server: defaults, = form, aliases, last occurrence wins', () => {
    const f = parseServerFlags([
      '--port',
      '1',
      '--port=30200',
      '--tp',
      '8',
      '--enable-dp-attention',
      '--dp-size',
      '8',
    ]);
    expect(f).toMatchObject({
      port: 30200,
      host: '127.0.0.1',
      tp: 8,
      dp: 8,
      dpAttention: true,
      mode: null,
      enableMetrics: false,
      bootstrapPort: 8998,
      problems: [],
    });
    expect(parseServerFlags(['--port', 'abc']).problems[0]).toMatch(/--port "abc" is not an integer/);
  });

  it('router: repeatable --prefill with optional bootstrap port or none; defaults', () => {
    const r = parseRouterFlags(
      [
        '--pd-disaggregation',
        '--prefill',
        'http://a:1',
        '8998',
        '--prefill',
        'http://b:1',
        'none',
        '--prefill=http://c:1',
        '--decode',
        'http://d:1',
        '--decode',
        'http://e:1',
      ],
      'smg',
    );
    expect(r.prefill).toEqual([
      { url: 'http://a:1', bootstrapPort: 8998 },
      { url: 'http://b:1', bootstrapPort: null },
      { url: 'http://c:1' },
    ]);
    expect(r.decode).toEqual([{ url: 'http://d:1' }, { url: 'http://e:1' }]);
    expect(r).toMatchObject({
      host: '0.0.0.0',
      port: 30000,
      prometheusHost: '0.0.0.0',
      prometheusPort: 29000,
      pd: true,
    });
    expect(flagGroups(['--x', 'a', 'b', '--y'], '--x')).toEqual([['a', 'b']]);
  });
});

describe('endpoints', () => {
  it('dials wildcard listeners on loopback and brackets IPv6', () => {
    expect(connectHost('0.0.0.0')).toBe('127.0.0.1');
    expect(connectHost('::')).toBe('127.0.0.1');
    expect(connectHost('fd00::5')).toBe('[fd00::5]');
    expect(connectHost('node-1')).toBe('node-1');
  });

  it('matches router worker URLs to listeners', () => {
    expect(matchEndpoint('http://localhost:30200', { host: '127.0.0.1', port: 30200 }).ok).toBe(true);
    expect(matchEndpoint('http://10.0.0.5:30200', { host: '0.0.0.0', port: 30200 }).ok).toBe(true);
    expect(matchEndpoint('http://10.0.0.5:30200', { host: '127.0.0.1', port: 30200 })).toEqual({
      ok: false,
      portMatches: true,
    });
    expect(matchEndpoint('127.0.0.1:30201', { host: '127.0.0.1', port: 30200 }).portMatches).toBe(false);
    expect(matchEndpoint('not a url', { host: '127.0.0.1', port: 30200 }).ok).toBe(false);
  });
});

describe('commands', () => {
  it('lists units without decoration', () => {
    expect(LIST_UNITS_COMMAND).toBe(
      'systemctl list-units --type=service --all --plain --no-legend --no-pager',
    );
  });

  it('batches show calls and refuses unsafe unit names', () => {
    const units = Array.from({ length: SHOW_BATCH + 1 }, (_, i) => `u${i}.service`);
    const cmds = discoveryShowCommands(units);
    expect(cmds).toHaveLength(2);
    expect(cmds[0]).toMatch(
      /^systemctl show --no-pager --property=Id,ActiveState,ExecStart,Environment,EnvironmentFiles,FragmentPath,NeedDaemonReload,MainPID u0\.service /,
    );
    expect(cmds[1]).toMatch(/ u40\.service$/);
    expect(systemctlCatCommand('llm@decode.service')).toBe('systemctl cat --no-pager llm@decode.service');
    expect(() => systemctlCatCommand('x.service; rm -rf /')).toThrow(/refusing/);
    expect(() => discoveryShowCommands(['$(reboot)'])).toThrow(/refusing/);
  });

  it('reads only plain absolute environment-file paths', () => {
    expect(readEnvFileCommand('-/etc/llm/decode.env')).toBe('cat -- /etc/llm/decode.env');
    expect(() => readEnvFileCommand('/etc/../etc/shadow')).toThrow(/refusing/);
    expect(() => readEnvFileCommand('/tmp/x;id')).toThrow(/refusing/);
  });
});
