// OpenSSH client config: the built-in evaluator must agree with `ssh -G` (the reference) on what the app uses,
// Match exec must never run, malformed files must be reported with file:line, and an alias that exists nowhere
// must be called that instead of a bare DNS error.
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateConfig } from '../../src/main/core/ssh/config-evaluate';
import { tokenizeConfigLine, type ConfigFile, type ConfigNode } from '../../src/main/core/ssh/config-files';
import { SshError } from '../../src/main/core/ssh/errors';
import {
  resolveHostOptions,
  type HostOptionsDeps,
  type HostRequest,
} from '../../src/main/core/ssh/host-options';
import {
  ConfigError,
  defaultGlobalKnownHosts,
  localUserName,
  passwdHome,
  type SshOptions,
} from '../../src/main/core/ssh/ssh-options';
import { SSH } from '../fixtures/sshd';

const noSsh = existsSync(SSH) ? null : `${SSH} is not installed (apt-get install openssh-client)`;
if (noSsh) console.warn(`[skipped] comparisons with ssh -G: ${noSsh}`);

let root: string;
let home: string;
let configFile: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-ssh-config-'));
  home = path.join(root, 'home');
  await fs.mkdir(path.join(home, '.ssh'), { recursive: true });
  configFile = path.join(home, '.ssh', 'config');
});
afterAll(() => fs.rm(root, { recursive: true, force: true }));

function deps(sshBinary: string | null, lookup?: HostOptionsDeps['lookup']): HostOptionsDeps {
  return {
    sshBinary,
    homeDir: home,
    realHome: passwdHome(),
    includeHome: home,
    env: { PATH: process.env.PATH },
    localUser: localUserName(process.env),
    configFile,
    systemConfigFile: '/etc/ssh/ssh_config',
    systemDir: '/etc/ssh',
    globalKnownHostsDefault: defaultGlobalKnownHosts(),
    lookup: lookup ?? (async () => undefined),
  };
}

/** The fields the app acts on; both resolvers must produce the same values. */
function essentials(o: SshOptions): Record<string, unknown> {
  return {
    hostname: o.hostname,
    port: o.port,
    user: o.user,
    identityFiles: o.identityFiles,
    identitiesOnly: o.identitiesOnly,
    proxyJump: o.proxyJump,
    userKnownHostsFiles: o.userKnownHostsFiles,
    globalKnownHostsFiles: o.globalKnownHostsFiles,
    hashKnownHosts: o.hashKnownHosts,
    strictHostKeyChecking: o.strictHostKeyChecking,
    hostKeyAlias: o.hostKeyAlias,
    serverAliveInterval: o.serverAliveInterval,
    serverAliveCountMax: o.serverAliveCountMax,
    connectTimeout: o.connectTimeout,
  };
}

async function both(config: string, req: HostRequest): Promise<{ ssh: SshOptions; parser: SshOptions }> {
  await fs.writeFile(configFile, config);
  const [ssh, parser] = await Promise.all([
    resolveHostOptions(req, deps(SSH)),
    resolveHostOptions(req, deps(null)),
  ]);
  expect(ssh.source).toBe('ssh -G');
  expect(parser.source).toBe('parser');
  expect(essentials(parser)).toEqual(essentials(ssh));
  return { ssh, parser };
}

describe.skipIf(noSsh !== null)('the built-in evaluator agrees with ssh -G', () => {
  it('HostName, User, Port, several IdentityFiles with ~ and %-tokens, known-hosts files, timeouts', async () => {
    const { parser } = await both(
      [
        'Host gpu1',
        '  HostName 10.20.0.5',
        '  User sglang',
        '  Port=2222',
        '  IdentityFile ~/.ssh/id_%h_%r',
        '  IdentityFile "%d/keys/with space/%p_%u%%"',
        '  IdentitiesOnly yes',
        '  UserKnownHostsFile ~/.ssh/known_hosts %d/kh_%h',
        '  ServerAliveInterval 7',
        '  ServerAliveCountMax 4',
        '  ConnectTimeout 9',
        '  HashKnownHosts yes',
        '  StrictHostKeyChecking accept-new',
        '  HostKeyAlias gpu1-key',
        '',
      ].join('\n'),
      { hostArg: 'gpu1' },
    );
    const user = localUserName(process.env);
    expect(parser).toMatchObject({
      hostname: '10.20.0.5',
      port: 2222,
      user: 'sglang',
      identityFiles: [
        path.join(home, '.ssh/id_10.20.0.5_sglang'),
        path.join(home, `keys/with space/2222_${user}%`),
      ],
      userKnownHostsFiles: [path.join(home, '.ssh/known_hosts'), path.join(home, 'kh_10.20.0.5')],
      serverAliveInterval: 7,
      connectTimeout: 9,
    });
  });

  it('Host patterns with wildcards and negation; the first value obtained wins', async () => {
    const config = [
      'Host *.gpu !bad.gpu',
      '  User first',
      '  Port 2201',
      'Host bad.gpu',
      '  HostName 192.0.2.66',
      'Host *',
      '  User second',
      '  IdentityFile ~/.ssh/shared_key',
      '  ServerAliveInterval 15',
      '',
    ].join('\n');
    const good = await both(config, { hostArg: 'node7.gpu' });
    expect(good.parser).toMatchObject({
      user: 'first',
      port: 2201,
      hostname: 'node7.gpu',
      serverAliveInterval: 15,
    });
    const bad = await both(config, { hostArg: 'bad.gpu' });
    expect(bad.parser).toMatchObject({ user: 'second', port: 22, hostname: '192.0.2.66' });
    // `?` is exactly one character, not "zero or one".
    const q = await both('Host gpu?\n  User q\n', { hostArg: 'gpu' });
    expect(q.parser.user).not.toBe('q');
  });

  it('Match host (after HostName), originalhost, user, negation and all', async () => {
    const config = [
      'Host alias-*',
      '  HostName 10.9.8.7',
      'Match host 10.9.8.* originalhost alias-a',
      '  Port 2001',
      'Match !originalhost alias-a host 10.9.8.*',
      '  Port 2002',
      'Match user ops',
      '  IdentityFile ~/.ssh/ops_key',
      'Match all',
      '  ServerAliveCountMax 5',
      '',
    ].join('\n');
    const a = await both(config, { hostArg: 'alias-a' });
    expect(a.parser).toMatchObject({ hostname: '10.9.8.7', port: 2001, serverAliveCountMax: 5 });
    const b = await both(config, { hostArg: 'alias-b', user: 'ops' });
    expect(b.parser).toMatchObject({
      port: 2002,
      user: 'ops',
      identityFiles: [path.join(home, '.ssh/ops_key')],
    });
  });

  it('Include with globs, at top level and inside a Host block (which scopes it)', async () => {
    const dir = path.join(root, 'conf.d');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, '10-gpu.conf'), 'Host gpu2\n  HostName 10.1.1.2\n  User fromfile\n');
    await fs.writeFile(path.join(dir, '20-defaults.conf'), 'Host *\n  ConnectTimeout 11\n');
    await fs.writeFile(path.join(dir, 'ignored.txt'), 'Host gpu2\n  User wrong\n');
    await fs.writeFile(path.join(root, 'scoped.conf'), 'Port 2345\nHost *\n  HashKnownHosts yes\n');
    const config = [
      `Include ${dir}/*.conf`,
      'Host gpu3',
      `  Include ${path.join(root, 'scoped.conf')}`,
      '  User scoped',
      '',
    ].join('\n');
    const two = await both(config, { hostArg: 'gpu2' });
    expect(two.parser).toMatchObject({
      hostname: '10.1.1.2',
      user: 'fromfile',
      connectTimeout: 11,
      port: 22,
    });
    const three = await both(config, { hostArg: 'gpu3' });
    expect(three.parser).toMatchObject({ port: 2345, user: 'scoped', hashKnownHosts: true });
    expect(two.parser.files).toContain(path.join(dir, '10-gpu.conf'));
  });

  it('ProxyJump lists, and -l/-p style overrides from the app winning over the config', async () => {
    const { parser } = await both(
      'Host gpu4\n  HostName 10.0.0.4\n  User cfg\n  Port 2200\n  ProxyJump ops@bastion:2222,inner\n',
      { hostArg: 'gpu4', user: 'override', port: 2022 },
    );
    expect(parser).toMatchObject({ user: 'override', port: 2022, proxyJump: 'ops@bastion:2222,inner' });
  });

  it('HostName with %h, Match final, and keywords in any case', async () => {
    const config = [
      'host CaseHost',
      '  HOSTNAME %h.corp.example',
      'Match final host *.corp.example',
      '  User finaluser',
      '  PORT 2024',
      '',
    ].join('\n');
    // Host patterns are case-sensitive in OpenSSH; the name is lowercased before %h goes into HostName.
    const typed = await both(config, { hostArg: 'CaseHost' });
    expect(typed.parser).toMatchObject({ hostname: 'casehost.corp.example', user: 'finaluser', port: 2024 });
    const lower = await both(config, { hostArg: 'casehost' });
    expect(lower.parser).toMatchObject({ hostname: 'casehost', port: 22 });
  });

  it('defaults for a host the config does not mention', async () => {
    const { parser } = await both('Host other\n  User x\n', { hostArg: '192.0.2.10' });
    expect(parser).toMatchObject({
      hostname: '192.0.2.10',
      port: 22,
      user: localUserName(process.env),
      identitiesOnly: false,
      proxyJump: null,
      strictHostKeyChecking: 'ask',
      userKnownHostsFiles: [path.join(home, '.ssh/known_hosts'), path.join(home, '.ssh/known_hosts2')],
    });
    expect(parser.identityFilesExplicit).toBe(false);
    expect(parser.identityFiles).toContain(path.join(home, '.ssh/id_ed25519'));
  });
});

describe.skipIf(noSsh !== null)('a home other than the account’s goes to ssh -G, as for the operator', () => {
  // What PD_CONSOLE_SSH_HOME (tests, sandboxes, the demo fleet) gives: no configFile, a homeDir that is not the
  // passwd home. ssh -G reads that home's config (-F) and expands ~ and relative Includes from it ($HOME).
  const ownHome = (h: string): HostOptionsDeps => ({
    ...deps(SSH),
    homeDir: h,
    includeHome: h,
    configFile: undefined,
  });

  it('reads its .ssh/config with relative and ~ Includes', async () => {
    await fs.mkdir(path.join(home, '.ssh', 'hosts.d'), { recursive: true });
    await fs.writeFile(
      path.join(home, '.ssh', 'hosts.d', 'a.conf'),
      'Host rel\n  HostName 10.3.3.3\n  Port 2201\n',
    );
    await fs.writeFile(path.join(home, 'tilde.conf'), 'Host tilde\n  HostName 10.4.4.4\n');
    await fs.writeFile(configFile, 'Include hosts.d/*.conf ~/tilde.conf\n');
    const rel = await resolveHostOptions({ hostArg: 'rel' }, ownHome(home));
    expect([rel.source, rel.hostname, rel.port]).toEqual(['ssh -G', '10.3.3.3', 2201]);
    const tilde = await resolveHostOptions({ hostArg: 'tilde' }, ownHome(home));
    expect([tilde.source, tilde.hostname]).toEqual(['ssh -G', '10.4.4.4']);
    expect(essentials(rel)).toEqual(
      essentials(await resolveHostOptions({ hostArg: 'rel' }, { ...ownHome(home), sshBinary: null })),
    );
  });

  it('reads nothing when that home has no config, like an account without ~/.ssh/config', async () => {
    const bare = path.join(root, 'bare-home');
    await fs.mkdir(bare, { recursive: true });
    const o = await resolveHostOptions({ hostArg: '10.6.6.6' }, ownHome(bare));
    expect([o.source, o.hostname, o.port]).toEqual(['ssh -G', '10.6.6.6', 22]);
  });
});

describe('the built-in evaluator on its own', () => {
  it('resolves relative and ~ Includes against ~/.ssh like OpenSSH', async () => {
    await fs.mkdir(path.join(home, '.ssh', 'hosts.d'), { recursive: true });
    await fs.writeFile(path.join(home, '.ssh', 'hosts.d', 'a.conf'), 'Host rel\n  HostName 10.3.3.3\n');
    await fs.writeFile(path.join(home, 'tilde.conf'), 'Host tilde\n  HostName 10.4.4.4\n');
    await fs.writeFile(configFile, 'Include hosts.d/*.conf ~/tilde.conf\n');
    expect((await resolveHostOptions({ hostArg: 'rel' }, deps(null))).hostname).toBe('10.3.3.3');
    expect((await resolveHostOptions({ hostArg: 'tilde' }, deps(null))).hostname).toBe('10.4.4.4');
  });

  it('never runs Match exec, even when an OpenSSH client is available, and says why', async () => {
    const marker = path.join(root, `match-exec-ran-${Date.now()}`);
    const inc = path.join(root, 'with-exec.conf');
    await fs.writeFile(inc, `Match exec "touch ${marker}"\n  User fromexec\n`);
    await fs.writeFile(configFile, `Host gpu5\n  HostName 10.5.5.5\nInclude ${inc}\n`);
    const o = await resolveHostOptions({ hostArg: 'gpu5' }, deps(noSsh ? null : SSH));
    expect(o.source).toBe('parser');
    expect(o.hostname).toBe('10.5.5.5');
    expect(o.user).not.toBe('fromexec');
    expect(o.warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([expect.stringContaining(`${inc}:1 has "Match exec"`)]),
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('reports malformed lines with file and line', async () => {
    const cases: Array<[string, RegExp]> = [
      ['Host ok\n  HostName 10.0.0.1\n  IdentityFile "unterminated\n', /:3: cannot parse/],
      ['Host ok\n  Port eighty\n', /:2: Port must be a port number/],
      ['Host\n', /:1: /],
      ['Match host\n', /:1: /],
      ['Host ok\n  StrictHostKeyChecking perhaps\n', /:2: StrictHostKeyChecking must be/],
      ['Host ok\n  IdentityFile ~/.ssh/id_%Q\n', /:2: .*unknown token %Q/],
      [`Include ${configFile}\n`, /Include nested more than 16 levels/],
    ];
    for (const [text, re] of cases) {
      await fs.writeFile(configFile, text);
      const err = await resolveHostOptions({ hostArg: 'ok' }, deps(null)).catch((e: unknown) => e);
      expect(err, text).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message, text).toContain(configFile);
      expect((err as ConfigError).message, text).toMatch(re);
    }
  });

  it.skipIf(noSsh !== null)('passes on ssh -G’s own file:line for options OpenSSH rejects', async () => {
    await fs.writeFile(configFile, 'Host ok\n  HostName 10.0.0.1\n  NoSuchOption yes\n');
    const err = await resolveHostOptions({ hostArg: 'ok' }, deps(SSH)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ file: configFile, line: 3 });
    expect((err as Error).message).toMatch(/Bad configuration option: nosuchoption/i);
  });

  it.each([
    ['ssh -G', SSH],
    ['the parser', null],
  ] as const)(
    'calls an alias that exists nowhere unknown (%s), naming the files searched',
    async (_, binary) => {
      if (binary && noSsh) return;
      await fs.writeFile(
        configFile,
        'Host gpu-known\n  HostName 10.0.0.8\nHost typo-block.invalid\n  User x\n',
      );
      const err = await resolveHostOptions({ hostArg: 'gpu-nown.invalid' }, deps(binary, realLookup)).catch(
        (e) => e,
      );
      expect(err).toBeInstanceOf(SshError);
      expect((err as SshError).explained.code).toBe('unknown-host');
      expect((err as SshError).message).toContain(`"gpu-nown.invalid" is not a Host alias in ${configFile}`);

      const matched = await resolveHostOptions(
        { hostArg: 'typo-block.invalid' },
        deps(binary, realLookup),
      ).catch((e) => e);
      expect((matched as SshError).message).toContain(`matches ${configFile}:3 but no HostName is set there`);

      // A name with a HostName, or behind a jump host, is not checked here: it may resolve only over there.
      await fs.writeFile(configFile, 'Host inner.invalid\n  ProxyJump bastion\n');
      const behind = await resolveHostOptions({ hostArg: 'inner.invalid' }, deps(binary, realLookup));
      expect(behind.proxyJump).toBe('bastion');
    },
  );

  it('refuses ProxyCommand with a pointer to ProxyJump', async () => {
    await fs.writeFile(configFile, 'Host viacmd\n  ProxyCommand ssh -W %h:%p bastion\n');
    const err = await resolveHostOptions({ hostArg: 'viacmd' }, deps(null)).catch((e: unknown) => e);
    expect((err as SshError).explained).toMatchObject({
      code: 'unsupported',
      hint: expect.stringContaining('ProxyJump'),
    });
  });
});

async function realLookup(hostname: string): Promise<void> {
  const { promises: dns } = await import('node:dns');
  await dns.lookup(hostname);
}

describe('property: arbitrary config text', () => {
  const keywords = [
    'Host',
    'Match',
    'HostName',
    'User',
    'Port',
    'IdentityFile',
    'ProxyJump',
    'UserKnownHostsFile',
    'ServerAliveInterval',
    'ConnectTimeout',
    'IdentitiesOnly',
    'HashKnownHosts',
    'StrictHostKeyChecking',
    'Include',
    'IdentityAgent',
    'HostKeyAlias',
    'exec',
    'all',
    'final',
    '!host',
    'originalhost',
  ];
  const token = fc.oneof(
    fc.constantFrom(...keywords),
    fc.string({ maxLength: 12 }),
    fc.constantFrom(
      '"',
      '=',
      '#',
      '*',
      '!',
      '?',
      '%h',
      '%',
      '~',
      ',',
      '\\',
      'yes',
      'no',
      'none',
      '22',
      '-1',
      '99999',
    ),
  );
  const line = fc
    .tuple(fc.array(token, { maxLength: 6 }), fc.constantFrom(' ', '\t', '=', '', '  '))
    .map(([t, sep]) => t.join(sep));

  // The time this takes is measured in bench/hostile-input.ts.
  it('only ever yields options or a ConfigError', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 25 }),
        fc.constantFrom('gpu', 'a.b', '10.0.0.1', 'x*'),
        (lines, host) => {
          try {
            const nodes: ConfigNode[] = [];
            lines.forEach((l, i) => {
              const d = tokenizeConfigLine(l, '/fuzz/config', i + 1);
              // Include targets are not read here; an Include node with no files keeps its scoping semantics.
              if (d)
                nodes.push(
                  d.keyword === 'include' ? { kind: 'include', d, files: [] } : { kind: 'directive', d },
                );
            });
            const file: ConfigFile = { path: '/fuzz/config', system: false, exists: true, nodes };
            const o = evaluateConfig([file], {
              hostArg: host,
              homeDir: '/home/fuzz',
              localUser: 'fuzz',
              env: {},
              globalKnownHostsDefault: [],
            });
            expect(o.port).toBeGreaterThanOrEqual(1);
            expect(o.port).toBeLessThanOrEqual(65535);
          } catch (err) {
            if (!(err instanceof ConfigError)) throw err;
            expect(err.file).toBe('/fuzz/config');
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
