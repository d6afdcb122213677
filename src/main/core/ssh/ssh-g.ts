// Resolves a host with the operator's own OpenSSH client: `ssh -G host` prints the fully evaluated options
// (Include, Match, defaults, system config) as lowercase `key value` lines. This is the most faithful answer
// when an OpenSSH client exists — but ssh -G evaluates `Match exec` by running its command, so the caller
// checks for Match exec first and uses the built-in parser instead (see host-options.ts).
import { execFile } from 'node:child_process';
import path from 'node:path';
import {
  ConfigError,
  DEFAULT_IDENTITY_FILES,
  expandPath,
  parseCount,
  parsePort,
  parseStrict,
  type ConfigWarning,
  type SshOptions,
  type TokenContext,
} from './ssh-options';

export interface SshGInput {
  sshBinary: string;
  hostArg: string;
  user?: string;
  port?: number;
  /** Passed as `-F`: then only this file is read, exactly as with `ssh -F`. */
  configFile?: string;
  env: NodeJS.ProcessEnv;
  /** The home PD Console was told to use; paths ssh expanded from `realHome` are re-rooted there. */
  homeDir: string;
  /** The passwd home ssh itself expands `~` to. */
  realHome: string;
  localUser: string;
  timeoutMs?: number;
}

export class SshBinaryMissing extends Error {
  constructor(binary: string, cause: string) {
    super(`OpenSSH client "${binary}" cannot be run: ${cause}`);
    this.name = 'SshBinaryMissing';
  }
}

/** Runs ssh -G and returns its options; throws ConfigError (with file:line when ssh names one). */
export async function resolveWithSshG(
  input: SshGInput,
): Promise<Omit<SshOptions, 'files' | 'matchedBlocks'>> {
  const args = ['-G'];
  if (input.configFile) args.push('-F', input.configFile);
  if (input.user !== undefined) args.push('-l', input.user);
  if (input.port !== undefined) args.push('-p', String(input.port));
  args.push('--', input.hostArg);
  const { stdout, stderr, code } = await run(input.sshBinary, args, input.env, input.timeoutMs ?? 10_000);
  const noise = /^Pseudo-terminal will not be allocated/;
  const errLines = stderr.split(/\r?\n/).filter((l) => l.trim() && !noise.test(l));
  if (code !== 0) {
    for (const l of errLines) {
      const m = /^(.*?): line (\d+): (.*)$/.exec(l);
      if (m) throw new ConfigError(m[3], m[1], Number(m[2]));
    }
    throw new ConfigError(
      `\`ssh ${args.join(' ')}\` failed (exit ${code}): ${errLines.join(' ').slice(0, 400) || 'no message'}`,
    );
  }
  const warnings: ConfigWarning[] = errLines.map((message) => ({ message: `ssh -G: ${message}` }));
  return mapOutput(parseSshGOutput(stdout), input, warnings);
}

/** `key value` lines into a multimap (identityfile and a few others repeat). */
export function parseSshGOutput(stdout: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1].toLowerCase();
    const list = out.get(key) ?? [];
    list.push(m[2]);
    out.set(key, list);
  }
  return out;
}

function mapOutput(
  kv: Map<string, string[]>,
  input: SshGInput,
  warnings: ConfigWarning[],
): Omit<SshOptions, 'files' | 'matchedBlocks'> {
  const first = (k: string): string | undefined => kv.get(k)?.[0];
  const need = (k: string): string => {
    const v = first(k);
    if (v === undefined) throw new ConfigError(`ssh -G printed no "${k}" for ${input.hostArg}`);
    return v;
  };
  const yes = (k: string, dflt: boolean): boolean => {
    const v = first(k)?.toLowerCase();
    return v === undefined ? dflt : !(v === 'no' || v === 'false');
  };
  const reroot = (p: string): string => {
    if (input.homeDir === input.realHome) return p;
    const prefix = input.realHome.endsWith(path.sep) ? input.realHome : input.realHome + path.sep;
    return p.startsWith(prefix) ? path.join(input.homeDir, p.slice(prefix.length)) : p;
  };

  const hostname = need('hostname');
  const port = parsePort(need('port'), 'port (from ssh -G)');
  const user = need('user');
  const proxyJumpRaw = first('proxyjump');
  const proxyJump = proxyJumpRaw && proxyJumpRaw.toLowerCase() !== 'none' ? proxyJumpRaw : null;
  const hostKeyAlias = first('hostkeyalias') ?? null;
  const tokens: TokenContext = {
    homeDir: input.homeDir,
    localUser: input.localUser,
    hostArg: input.hostArg,
    hostname,
    port,
    user,
    hostKeyAlias,
    proxyJump,
  };
  // ssh -G prints IdentityFile as written (tokens and ~ unexpanded); it expands the known-hosts paths itself.
  const rawIds = kv.get('identityfile') ?? [];
  const explicit = !(
    rawIds.length === DEFAULT_IDENTITY_FILES.length && rawIds.every((f, i) => f === DEFAULT_IDENTITY_FILES[i])
  );
  const identityFiles = rawIds.map((f) => expandPath(f, tokens, 'IdentityFile'));
  const list = (k: string): string[] =>
    (first(k) ?? '')
      .split(/\s+/)
      .filter((p) => p && p.toLowerCase() !== 'none')
      .map(reroot);

  const agent = first('identityagent');
  let identityAgent: string | null | undefined;
  if (agent !== undefined) {
    if (agent.toLowerCase() === 'none') identityAgent = null;
    else if (agent === 'SSH_AUTH_SOCK') identityAgent = undefined;
    else if (agent.startsWith('$')) identityAgent = input.env[agent.slice(1)] ?? null;
    else identityAgent = reroot(expandPath(agent, tokens, 'IdentityAgent'));
  }
  const ct = first('connecttimeout');
  const pc = first('proxycommand');
  return {
    hostArg: input.hostArg,
    hostname,
    port,
    user,
    identityFiles: [...new Set(identityFiles)],
    identityFilesExplicit: explicit,
    identitiesOnly: yes('identitiesonly', false),
    identityAgent,
    proxyJump,
    proxyCommand: pc && pc.toLowerCase() !== 'none' ? pc : null,
    userKnownHostsFiles: list('userknownhostsfile'),
    globalKnownHostsFiles: list('globalknownhostsfile'),
    hashKnownHosts: yes('hashknownhosts', false),
    strictHostKeyChecking: parseStrict(first('stricthostkeychecking') ?? 'ask'),
    hostKeyAlias,
    serverAliveInterval: parseCount(first('serveraliveinterval') ?? '0', 'ServerAliveInterval'),
    serverAliveCountMax: parseCount(first('serveralivecountmax') ?? '3', 'ServerAliveCountMax'),
    connectTimeout: ct === undefined || ct.toLowerCase() === 'none' ? null : parseCount(ct, 'ConnectTimeout'),
    pubkeyAuthentication: yes('pubkeyauthentication', true),
    passwordAuthentication: yes('passwordauthentication', true),
    kbdInteractiveAuthentication: yes('kbdinteractiveauthentication', true),
    batchMode: yes('batchmode', false),
    source: 'ssh -G',
    warnings,
  };
}

function run(
  binary: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      binary,
      args,
      { env, timeout: timeoutMs, maxBuffer: 1024 * 1024, windowsHide: true, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err && (err as NodeJS.ErrnoException).code === 'ENOENT')
          return reject(new SshBinaryMissing(binary, 'not found'));
        if (err && err.killed)
          return reject(new ConfigError(`\`${binary} -G\` did not finish within ${timeoutMs / 1000} s`));
        const code = err ? (typeof err.code === 'number' ? err.code : 255) : 0;
        if (err && typeof err.code !== 'number') return reject(new SshBinaryMissing(binary, err.message));
        resolve({ stdout, stderr, code });
      },
    );
    child.stdin?.end();
  });
}
