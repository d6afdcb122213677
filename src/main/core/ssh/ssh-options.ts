// The OpenSSH client options PD Console honours, once resolved for one host, and the `~`/`%` expansion rules
// OpenSSH applies to them (ssh_config(5) TOKENS). Both resolvers (`ssh -G` and the built-in parser) produce this.
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

export type StrictHostKeyChecking = 'yes' | 'ask' | 'accept-new' | 'no';

export interface ConfigWarning {
  file?: string;
  line?: number;
  message: string;
}

export interface SshOptions {
  /** What the operator typed: the alias or host name given to `ssh` (%n). */
  hostArg: string;
  hostname: string;
  port: number;
  user: string;
  /** Expanded absolute paths, in order. */
  identityFiles: string[];
  /** False when none were configured and these are OpenSSH's default key names (missing ones are skipped silently). */
  identityFilesExplicit: boolean;
  identitiesOnly: boolean;
  /** IdentityAgent: undefined = $SSH_AUTH_SOCK, null = none, else a socket path. */
  identityAgent: string | null | undefined;
  /** Raw ProxyJump value (comma list), null when none. */
  proxyJump: string | null;
  proxyCommand: string | null;
  userKnownHostsFiles: string[];
  globalKnownHostsFiles: string[];
  hashKnownHosts: boolean;
  strictHostKeyChecking: StrictHostKeyChecking;
  hostKeyAlias: string | null;
  /** Seconds; 0 = not configured. */
  serverAliveInterval: number;
  serverAliveCountMax: number;
  /** Seconds, or null when not configured. */
  connectTimeout: number | null;
  pubkeyAuthentication: boolean;
  passwordAuthentication: boolean;
  kbdInteractiveAuthentication: boolean;
  batchMode: boolean;
  /** How the options were obtained, for messages ("resolved with ssh -G" / "read from ~/.ssh/config"). */
  source: 'ssh -G' | 'parser';
  /** Config files consulted (for "not found in …" messages). */
  files: string[];
  /** Host/Match lines with a specific (non-`*`) pattern that applied to this host, as file:line. */
  matchedBlocks: string[];
  warnings: ConfigWarning[];
}

/** OpenSSH's IdentityFile defaults when none is configured (ssh_config(5), OpenSSH 9). */
export const DEFAULT_IDENTITY_FILES = [
  '~/.ssh/id_rsa',
  '~/.ssh/id_ecdsa',
  '~/.ssh/id_ecdsa_sk',
  '~/.ssh/id_ed25519',
  '~/.ssh/id_ed25519_sk',
  '~/.ssh/id_xmss',
  '~/.ssh/id_dsa',
];

export const DEFAULT_USER_KNOWN_HOSTS = ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'];

export function defaultGlobalKnownHosts(platform: NodeJS.Platform = process.platform): string[] {
  return platform === 'win32'
    ? [path.win32.join(process.env.ProgramData ?? 'C:\\ProgramData', 'ssh', 'ssh_known_hosts')]
    : ['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2'];
}

export function defaultSystemConfig(platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32'
    ? path.win32.join(process.env.ProgramData ?? 'C:\\ProgramData', 'ssh', 'ssh_config')
    : '/etc/ssh/ssh_config';
}

export class ConfigError extends Error {
  readonly code = 'config';
  constructor(
    message: string,
    readonly file?: string,
    readonly line?: number,
    readonly hint?: string,
  ) {
    super(file ? `${file}${line ? `:${line}` : ''}: ${message}` : message);
    this.name = 'ConfigError';
  }

  get explained(): { code: string; message: string; hint?: string } {
    return { code: 'config', message: this.message, hint: this.hint };
  }
}

export interface TokenContext {
  homeDir: string;
  localUser: string;
  hostArg: string;
  hostname: string;
  port: number;
  user: string;
  hostKeyAlias?: string | null;
  proxyJump?: string | null;
}

export function localUserName(env: NodeJS.ProcessEnv): string {
  try {
    return os.userInfo().username;
  } catch {
    // os.userInfo() throws on accounts without a passwd entry (some containers); the environment still knows.
    return env.USER ?? env.USERNAME ?? 'user';
  }
}

/**
 * The home directories the OpenSSH client uses. It reads `<passwd home>/.ssh/config` and expands `~` and %d in
 * options to the passwd entry's home (getpwuid), whatever $HOME says; only Include goes through glob(3)'s
 * GLOB_TILDE, which takes $HOME when it is set and not empty. `override` (PD_CONSOLE_SSH_HOME, tests) stands
 * for both, since then `ssh -G` is not run.
 */
export interface SshHomes {
  /** Whose .ssh/config is read and what `~`/%d mean in options. */
  home: string;
  /** What `~` means in Include (and where relative user Includes live, under .ssh). */
  includeHome: string;
}

export function sshHomes(env: NodeJS.ProcessEnv, override?: string): SshHomes {
  if (override !== undefined) return { home: override, includeHome: override };
  const home = passwdHome();
  return { home, includeHome: env.HOME ? env.HOME : home };
}

/** The passwd entry's home, as ssh finds it (os.homedir() prefers $HOME, which ssh ignores). */
export function passwdHome(): string {
  try {
    return os.userInfo().homedir;
  } catch {
    // No passwd entry (some containers): ssh itself refuses to run there, so the built-in parser is the reader.
    return os.homedir();
  }
}

/** `~` and `~/…` become the home directory; `~user` is refused rather than guessed. */
export function expandTilde(value: string, homeDir: string, what: string): string {
  if (value === '~') return homeDir;
  if (value.startsWith('~/') || value.startsWith('~\\')) return path.join(homeDir, value.slice(2));
  if (value.startsWith('~'))
    throw new ConfigError(`${what} "${value}": ~user paths are not supported; write the full path`);
  return value;
}

/** Expands %-tokens as OpenSSH does for IdentityFile / UserKnownHostsFile; unknown tokens are an error, like in ssh. */
export function expandTokens(value: string, ctx: TokenContext, what: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    const t = value[++i];
    switch (t) {
      case '%':
        out += '%';
        break;
      case 'd':
        out += ctx.homeDir;
        break;
      case 'u':
        out += ctx.localUser;
        break;
      case 'h':
        out += ctx.hostname;
        break;
      case 'n':
        out += ctx.hostArg;
        break;
      case 'p':
        out += String(ctx.port);
        break;
      case 'r':
        out += ctx.user;
        break;
      case 'k':
        out += ctx.hostKeyAlias ?? ctx.hostname;
        break;
      case 'j':
        out += ctx.proxyJump ?? '';
        break;
      case 'i':
        out += String(process.getuid?.() ?? 0);
        break;
      case 'l':
        out += os.hostname();
        break;
      case 'L':
        out += os.hostname().split('.')[0];
        break;
      case 'C':
        out += createHash('sha1')
          .update(`${os.hostname()}${ctx.hostname}${ctx.port}${ctx.user}${ctx.proxyJump ?? ''}`)
          .digest('hex');
        break;
      default:
        throw new ConfigError(
          `${what} "${value}": unknown token %${t ?? ''} (supported: %% %d %u %h %n %p %r %k %j %i %l %L %C)`,
        );
    }
  }
  return out;
}

/** Path options: tokens first, then `~`, then made absolute (relative key paths are relative to ~/.ssh in practice). */
export function expandPath(value: string, ctx: TokenContext, what: string): string {
  const expanded = expandTilde(expandTokens(value, ctx, what), ctx.homeDir, what);
  return path.isAbsolute(expanded) ? expanded : path.join(ctx.homeDir, expanded);
}

export function parseYesNo(value: string, what: string, file?: string, line?: number): boolean {
  const v = value.toLowerCase();
  if (v === 'yes' || v === 'true') return true;
  if (v === 'no' || v === 'false') return false;
  throw new ConfigError(`${what} must be yes or no, got "${value}"`, file, line);
}

export function parsePort(value: string, what: string, file?: string, line?: number): number {
  const n = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= 65535))
    throw new ConfigError(`${what} must be a port number 1-65535, got "${value}"`, file, line);
  return n;
}

export function parseCount(value: string, what: string, file?: string, line?: number): number {
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n))
    throw new ConfigError(`${what} must be a whole number, got "${value}"`, file, line);
  return n;
}

export function parseStrict(value: string, file?: string, line?: number): StrictHostKeyChecking {
  const v = value.toLowerCase();
  if (v === 'yes' || v === 'true') return 'yes';
  if (v === 'no' || v === 'false' || v === 'off') return 'no';
  if (v === 'ask') return 'ask';
  if (v === 'accept-new') return 'accept-new';
  throw new ConfigError(
    `StrictHostKeyChecking must be yes, no, ask or accept-new, got "${value}"`,
    file,
    line,
  );
}
