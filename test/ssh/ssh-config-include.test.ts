// Include as the real OpenSSH client resolves it: glob(3) patterns (bracket expressions, escapes, the leading-dot
// rule, `..`), `~` and relative paths, and the home ssh reads ~/.ssh/config from, each compared with what the
// installed `ssh -G` really does. Also: a Match exec hidden behind a pattern never runs, an Include PD Console
// cannot expand stops ssh -G from running, and FIFOs, devices and oversized files are refused without hanging.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HostConfig } from '../../src/shared/domain';
import { readConfigFiles, type ConfigFile } from '../../src/main/core/ssh/config-files';
import type { ResolvedConnectConfig } from '../../src/main/core/ssh/diagnostics';
import { SshError } from '../../src/main/core/ssh/errors';
import { configRoots } from '../../src/main/core/ssh/alias-addresses';
import { resolveHostOptions, type HostOptionsDeps } from '../../src/main/core/ssh/host-options';
import { refusingPrompts } from '../../src/main/core/ssh/prompts';
import { createSshResolver } from '../../src/main/core/ssh/resolve-host';
import { ConfigError, defaultGlobalKnownHosts, localUserName } from '../../src/main/core/ssh/ssh-options';
import { SSH } from '../fixtures/sshd';

const run = promisify(execFile);
const noSsh = existsSync(SSH) ? null : `${SSH} is not installed (apt-get install openssh-client)`;
if (noSsh) console.warn(`[skipped] comparisons with the real ssh -G: ${noSsh}`);
const noFifo = process.platform === 'win32' ? 'FIFOs and /dev/zero are POSIX' : null;
if (noFifo) console.warn(`[skipped] FIFO and device Includes: ${noFifo}`);
/** The passwd entry's home, which ssh reads ~/.ssh/config from (os.homedir() would answer $HOME). */
const PASSWD_HOME = os.userInfo().homedir;

let root: string;
/** Stands for $HOME: where ssh's glob(3) expands `~` and relative user Includes (under .ssh). */
let home: string;
let dir: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-inc-'));
  home = path.join(root, 'home');
  dir = path.join(root, 'd');
  await fs.mkdir(path.join(home, '.ssh', 'inc.d'), { recursive: true });
  await fs.mkdir(path.join(dir, 'sub'), { recursive: true });
  await fs.mkdir(path.join(dir, 'sub2'), { recursive: true });
  // Every file adds one SendEnv name: SendEnv accumulates across files, so `ssh -G` prints, in order, one
  // `sendenv` line per file it read, and the same names read from our tree say which files we read.
  const files: Record<string, string> = {
    'a1.conf': 'a1',
    'a2.conf': 'a2',
    'b1.conf': 'b1',
    'c9.conf': 'c9',
    '5five.conf': 'five',
    '.hidden.conf': 'hidden',
    '-dash.conf': 'dash',
    ']br.conf': 'br',
    'x[y].conf': 'xy',
    'star*.conf': 'star',
    'star-other.conf': 'starother',
    'up.conf': 'up',
    'éx.conf': 'eacute',
    '^x.conf': 'caret',
    'sub/n.conf': 'subn',
    'sub2/n.conf': 'sub2n',
  };
  for (const [name, id] of Object.entries(files))
    await fs.writeFile(path.join(dir, name), `SendEnv PDT_${id}\n`);
  await fs.writeFile(path.join(home, '.ssh', 'inc.d', 'i1.conf'), 'SendEnv PDT_rel\n');
  await fs.writeFile(path.join(home, 'tilde-t.conf'), 'SendEnv PDT_tilde\n');
});
afterAll(() => fs.rm(root, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllEnvs();
});

function deps(sshBinary: string | null, configFile: string, env: NodeJS.ProcessEnv = {}): HostOptionsDeps {
  return {
    sshBinary,
    homeDir: home,
    realHome: PASSWD_HOME,
    includeHome: home,
    env: { PATH: process.env.PATH, HOME: home, ...env },
    localUser: localUserName(process.env),
    configFile,
    systemConfigFile: '/etc/ssh/ssh_config',
    systemDir: '/etc/ssh',
    globalKnownHostsDefault: defaultGlobalKnownHosts(),
    lookup: async () => undefined,
  };
}

/** SendEnv names in the order our reader met them (the files it read, in order). */
function sendEnvOf(files: ConfigFile[]): string[] {
  const out: string[] = [];
  const walk = (f: ConfigFile): void => {
    for (const n of f.nodes)
      if (n.kind === 'include') n.files.forEach(walk);
      else if (n.d.keyword === 'sendenv') out.push(...n.d.args.flatMap((a) => a.split(/\s+/)));
  };
  files.forEach(walk);
  return out;
}

async function writeConfig(name: string, text: string): Promise<string> {
  const file = path.join(root, name);
  await fs.writeFile(file, text);
  return file;
}

describe.skipIf(noSsh !== null)('Include patterns resolve to the files the real ssh -G reads', () => {
  const patterns: Array<[string, string]> = [
    ['a bracket class', 'D/[a]*.conf'],
    ['a negated class ([!…]) never matching a leading dot', 'D/[!a]*.conf'],
    ['[^…], which is not a negation in OpenSSH', 'D/[^ab]*.conf'],
    ['a class cannot match a leading dot', 'D/[.]hidden.conf'],
    ['an escaped leading dot is a literal dot', 'D/\\.hid*.conf'],
    ['[^] is the class of ^ alone', 'D/[^]x.conf'],
    ['? is one byte of a UTF-8 name', 'D/?x.conf'],
    ['?? matches a two-byte character', 'D/??x.conf'],
    ['a non-ASCII class member is bytes too', 'D/[é]x.conf'],
    ['ranges', 'D/[a-b][0-9].conf'],
    ['a POSIX character class', 'D/[[:digit:]]*'],
    ['] first in a class', 'D/[]]*.conf'],
    ['?', 'D/?1.conf'],
    ['* (directories are read as empty, dot files skipped)', 'D/*'],
    ['.* (matches ., .. and dot files)', 'D/.*'],
    ['a wildcard directory, results sorted', 'D/sub*/n.conf'],
    ['.. reached through .*', 'D/sub/.*/up.conf'],
    ['escaped brackets', 'D/x\\[y\\].conf'],
    ['an escaped star', 'D/star\\*.conf'],
    ['a bracketed [ as a literal', 'D/x[[]y].conf'],
    ['no brace expansion', 'D/{a1,b1}.conf'],
    ['a relative path (in ~/.ssh under $HOME)', 'inc.d/[i]*.conf'],
    ['a ~ path (under $HOME)', '~/tilde-[t].conf'],
    ['several patterns on one line', 'D/b1.conf D/[a]2.conf D/nothing-*.conf'],
  ];

  it.each(patterns)('%s: Include %s', async (_, raw) => {
    const include = raw.replaceAll('D/', `${dir}/`);
    const config = await writeConfig('glob-config', `Include ${include}\n`);
    const { stdout } = await run(SSH, ['-G', '-F', config, 'pd-glob-host'], {
      env: { PATH: process.env.PATH, HOME: home },
    });
    const bySsh = stdout
      .split('\n')
      .filter((l) => l.startsWith('sendenv '))
      .map((l) => l.slice('sendenv '.length));
    const ours = sendEnvOf(await readConfigFiles([{ path: config, system: false }], { includeHome: home }));
    expect(ours).toEqual(bySsh);
  });

  it('the comparison can fail: ssh -G reads files in sorted order and skips dot files', async () => {
    const config = await writeConfig('glob-config', `Include ${dir}/*.conf\n`);
    const { stdout } = await run(SSH, ['-G', '-F', config, 'pd-glob-host'], {
      env: { PATH: process.env.PATH, HOME: home },
    });
    const bySsh = stdout.split('\n').filter((l) => l.startsWith('sendenv '));
    expect(bySsh[0]).toBe('sendenv PDT_dash');
    expect(bySsh).not.toContain('sendenv PDT_hidden');
    expect(bySsh).toContain('sendenv PDT_star');
  });
});

describe('Match exec behind an Include pattern', () => {
  it('is found through a bracket pattern, so ssh -G does not run it', async () => {
    const marker = path.join(root, 'match-exec-ran');
    const execDir = path.join(root, 'exec.d');
    await fs.mkdir(execDir, { recursive: true });
    await fs.writeFile(path.join(execDir, 'a-exec.conf'), `Match exec "touch ${marker}"\n  User fromexec\n`);
    const config = await writeConfig(
      'exec-config',
      `Host gpu-exec\n  HostName 10.5.5.6\nInclude ${execDir}/[a]*.conf\n`,
    );
    const o = await resolveHostOptions({ hostArg: 'gpu-exec' }, deps(noSsh ? null : SSH, config));
    expect(existsSync(marker)).toBe(false);
    expect(o.source).toBe('parser');
    expect(o.hostname).toBe('10.5.5.6');
    expect(o.user).not.toBe('fromexec');
    expect(o.warnings.map((w) => w.message)).toEqual(
      expect.arrayContaining([expect.stringContaining(`${execDir}/a-exec.conf:1 has "Match exec"`)]),
    );
  });

  it('an Include with ${VAR} or %-tokens (which newer ssh expands) stops ssh -G, naming file and line', async () => {
    const marker = path.join(root, 'match-exec-ran-env');
    const execDir = path.join(root, 'exec-env.d');
    await fs.mkdir(execDir, { recursive: true });
    await fs.writeFile(path.join(execDir, 'x.conf'), `Match exec "touch ${marker}"\n  User fromexec\n`);
    for (const include of ['${PD_INC_DIR}/x.conf', `${execDir}/%u.conf`]) {
      const config = await writeConfig(
        'exec-env-config',
        `Host gpu-env\n  HostName 10.5.5.7\nInclude ${include}\n`,
      );
      const err = await resolveHostOptions(
        { hostArg: 'gpu-env' },
        deps(noSsh ? null : SSH, config, { PD_INC_DIR: execDir }),
      ).catch((e: unknown) => e);
      expect(err, include).toBeInstanceOf(ConfigError);
      expect(err, include).toMatchObject({ file: config, line: 3 });
      expect((err as Error).message, include).toMatch(/cannot tell which files ssh would read/);
    }
    expect(existsSync(marker)).toBe(false);
  });
});

describe('Include patterns PD Console cannot match as ssh does', () => {
  it('stop ssh -G, naming file and line', async () => {
    const config = await writeConfig(
      'caret-config',
      `Host gpu-caret\n  HostName 10.5.5.8\nInclude ${dir}/[^!a]*.conf\n`,
    );
    const err = await resolveHostOptions({ hostArg: 'gpu-caret' }, deps(noSsh ? null : SSH, config)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ file: config, line: 3 });
    expect((err as Error).message).toMatch(/cannot tell which files ssh would read/);
  });
});

describe.skipIf(noFifo !== null)('files that are not regular files, or too large', () => {
  // A FIFO with no writer would block the read (and ssh -G) forever: the result must come without one.
  it(
    'an Include of a FIFO is refused at once, naming the file and the Include line',
    { timeout: 10_000 },
    async () => {
      const fifo = path.join(root, 'pipe.conf');
      execFileSync('mkfifo', [fifo]);
      const config = await writeConfig(
        'fifo-config',
        `Host gpu-fifo\n  HostName 10.6.6.6\nInclude ${fifo}\n`,
      );
      const err = await resolveHostOptions({ hostArg: 'gpu-fifo' }, deps(noSsh ? null : SSH, config)).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect(err).toMatchObject({ file: config, line: 3 });
      expect((err as Error).message).toContain(`included file ${fifo} is a FIFO`);
    },
  );

  it('a config file that is a FIFO is refused too', { timeout: 10_000 }, async () => {
    const fifo = path.join(root, 'pipe-top');
    execFileSync('mkfifo', [fifo]);
    const err = await resolveHostOptions({ hostArg: 'x' }, deps(null, fifo)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `${fifo}: is a FIFO (named pipe); config files must be regular files, so PD Console does not read it or run ssh on this config`,
    );
  });

  it('an Include of /dev/zero is refused without reading it', { timeout: 10_000 }, async () => {
    const config = await writeConfig('zero-config', 'Include /dev/zero\n');
    const before = process.memoryUsage().rss;
    const err = await resolveHostOptions({ hostArg: 'x' }, deps(null, config)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ file: config, line: 1 });
    expect((err as Error).message).toContain('included file /dev/zero is a character device');
    // Nothing was read: no growth near the size of a config file.
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('an Include that cannot be opened (a symlink loop) stops ssh -G, naming the Include line', async () => {
    const marker = path.join(root, 'match-exec-ran-loop');
    const loop = path.join(root, 'loop.conf');
    await fs.symlink(loop, loop);
    const execConf = path.join(root, 'exec-after-loop.conf');
    await fs.writeFile(execConf, `Match exec "touch ${marker}"\n  User fromexec\n`);
    const config = await writeConfig('loop-config', `Include ${loop}\nInclude ${execConf}\n`);
    const err = await resolveHostOptions({ hostArg: 'x' }, deps(noSsh ? null : SSH, config)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ file: config, line: 1 });
    expect((err as Error).message).toContain(`included file ${loop} cannot be read`);
    expect(existsSync(marker)).toBe(false);
  });

  it('a file over 1 MiB is refused, naming it', async () => {
    const big = path.join(root, 'big.conf');
    await fs.writeFile(big, `# ${'x'.repeat(1024 * 1024)}\n`);
    const config = await writeConfig('big-config', `Include ${big}\n`);
    const err = await resolveHostOptions({ hostArg: 'x' }, deps(null, config)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(
      /included file .*big\.conf is \d+ bytes; config files over 1048576/,
    );
  });
});

describe.skipIf(noSsh !== null)('the home ssh reads, when $HOME is not the passwd home', () => {
  const host = (alias: string): HostConfig => ({ id: alias, label: alias, kind: 'ssh', alias });
  const notFound = async (): Promise<void> => {
    throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
  };

  it.each([
    ['ssh -G', SSH],
    ['the built-in parser', null],
  ] as const)(
    'reads ~/.ssh/config from the passwd home, not $HOME, and says so (%s)',
    async (_, sshBinary) => {
      const alias = `gpu-home-${process.pid}.invalid`;
      const other = path.join(root, 'other-home');
      await fs.mkdir(path.join(other, '.ssh'), { recursive: true });
      await fs.writeFile(path.join(other, '.ssh', 'config'), `Host ${alias}\n  HostName 10.77.0.1\n`);
      vi.stubEnv('HOME', other);
      // The real ssh -G, given this environment, does not see the block under $HOME.
      const { stdout } = await run(SSH, ['-G', alias], { env: { PATH: process.env.PATH, HOME: other } });
      expect(stdout).toMatch(new RegExp(`^hostname ${alias.replaceAll('.', '\\.')}$`, 'm'));

      const resolve = createSshResolver({ prompts: refusingPrompts, sshBinary, lookup: notFound });
      const err = await resolve(host(alias)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SshError);
      const message = (err as SshError).message;
      expect(message).not.toContain('no HostName is set there');
      const userConfig = path.join(PASSWD_HOME, '.ssh', 'config');
      expect(message).toContain(
        existsSync(userConfig) ? `is not a Host alias in ${userConfig}` : `${userConfig} does not exist`,
      );
      expect(message).toContain(`ssh reads ${userConfig} `);
      expect(message).toContain(`not ${path.join(other, '.ssh', 'config')} under $HOME`);
    },
  );

  it("names the passwd home's config as the file to add aliases to (fleet discovery fixes)", () => {
    vi.stubEnv('HOME', path.join(root, 'elsewhere'));
    expect(configRoots({}).userConfig).toBe(path.join(PASSWD_HOME, '.ssh', 'config'));
  });

  it('expands ~ in options to the passwd home but ~ in Include to $HOME, like ssh -G', async () => {
    const other = path.join(root, 'other-home-2');
    await fs.mkdir(path.join(other, 'inc'), { recursive: true });
    await fs.writeFile(path.join(other, 'inc', 'i.conf'), 'Port 2345\n');
    const config = await writeConfig(
      'home-config',
      // PubkeyAuthentication no: the key is only named, never loaded (it does not exist in the real home).
      'Host gpu-tilde\n  HostName 10.8.8.8\n  PubkeyAuthentication no\n  IdentityFile ~/.ssh/id_pdtest\n' +
        '  Include ~/inc/[i]*.conf\n',
    );
    vi.stubEnv('HOME', other);
    const resolved = await Promise.all(
      [SSH, null].map(async (sshBinary) => {
        const resolve = createSshResolver({ prompts: refusingPrompts, sshBinary, configFile: config });
        const c = (await resolve(host('gpu-tilde'))) as ResolvedConnectConfig;
        return c.diagnostics.options;
      }),
    );
    const [viaSsh, viaParser] = resolved;
    expect(viaSsh.source).toBe('ssh -G');
    expect(viaParser.source).toBe('parser');
    for (const o of resolved) {
      expect(o.port).toBe(2345);
      expect(o.identityFiles).toEqual([path.join(PASSWD_HOME, '.ssh', 'id_pdtest')]);
    }
  });
});
