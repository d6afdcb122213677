// Evaluates OpenSSH client config for one host the way readconf.c does, without running anything:
// first value wins (IdentityFile accumulates), Host patterns with negation, Match criteria, Include scoping
// (an Include inside a block applies only when the block does; a Match inside an included file does not leak
// out of it), and the `Match final` re-pass. `Match exec` is never run: its block is treated as not matching and
// a warning names the line. This is the fallback when no OpenSSH client is installed or when `ssh -G` would run
// Match exec commands.
import { existingFiles, type ConfigDirective, type ConfigFile } from './config-files';
import { commaListMatch, patternListMatch } from './patterns';
import {
  ConfigError,
  DEFAULT_IDENTITY_FILES,
  DEFAULT_USER_KNOWN_HOSTS,
  expandPath,
  parseCount,
  parsePort,
  parseStrict,
  parseYesNo,
  type ConfigWarning,
  type SshOptions,
  type TokenContext,
} from './ssh-options';

export interface EvaluateInput {
  hostArg: string;
  /** Like `ssh -l user`: wins over User in the config. */
  user?: string;
  /** Like `ssh -p port`: wins over Port in the config. */
  port?: number;
  homeDir: string;
  localUser: string;
  env: NodeJS.ProcessEnv;
  globalKnownHostsDefault: string[];
}

interface Setting {
  args: string[];
  file?: string;
  line?: number;
}

interface PassState {
  settings: Map<string, Setting>;
  identityFiles: Setting[];
  warnings: ConfigWarning[];
  matchedBlocks: string[];
  wantFinal: boolean;
}

const MATCH_NO_ARG = new Set(['all', 'canonical', 'final']);
const MATCH_WITH_ARG = new Set([
  'exec',
  'host',
  'originalhost',
  'user',
  'localuser',
  'localnetwork',
  'tagged',
  'sessiontype',
  'command',
  'version',
]);

export function evaluateConfig(files: ConfigFile[], input: EvaluateInput): SshOptions {
  const state: PassState = {
    settings: new Map(),
    identityFiles: [],
    warnings: [],
    matchedBlocks: [],
    wantFinal: false,
  };
  // Command-line values are set before the files are read, so the files cannot override them.
  if (input.user !== undefined) state.settings.set('user', { args: [input.user] });
  if (input.port !== undefined) state.settings.set('port', { args: [String(input.port)] });

  const pass = (final: boolean): void => {
    const host = final ? currentHostname(state, input.hostArg) : input.hostArg;
    for (const f of files) walkFile(f, true, { final, host }, state, input);
  };
  pass(false);
  if (state.wantFinal) pass(true);
  return toOptions(state, input, files);
}

interface PassContext {
  final: boolean;
  /** What Host lines match against: the host argument, or the resolved HostName in the final pass. */
  host: string;
}

function walkFile(
  file: ConfigFile,
  eligible: boolean,
  ctx: PassContext,
  state: PassState,
  input: EvaluateInput,
): void {
  // readconf.c: each file starts active; an Include from an inactive block is read with "never match".
  let active = eligible;
  for (const node of file.nodes) {
    const d = node.d;
    if (node.kind === 'include') {
      for (const inc of node.files) walkFile(inc, active, ctx, state, input);
      continue;
    }
    if (d.keyword === 'host') {
      if (d.args.length === 0) throw new ConfigError('Host needs at least one pattern', d.file, d.line);
      // readconf.c matches Host patterns case-sensitively against the name as typed (Match host folds case).
      active = eligible && patternListMatch(ctx.host, d.args, false);
      if (active && d.args.some((p) => !p.startsWith('!') && !/^[*?]+$/.test(p)))
        state.matchedBlocks.push(`${d.file}:${d.line}`);
      continue;
    }
    if (d.keyword === 'match') {
      const m = evaluateMatch(d, ctx, state, input);
      active = eligible && m;
      continue;
    }
    if (active) apply(d, state);
  }
}

function evaluateMatch(
  d: ConfigDirective,
  ctx: PassContext,
  state: PassState,
  input: EvaluateInput,
): boolean {
  if (d.args.length === 0)
    throw new ConfigError('Match needs criteria (e.g. "Match host name")', d.file, d.line);
  let result = true;
  let blocked: string | null = null;
  let specific = false;
  for (let i = 0; i < d.args.length; i++) {
    const word = d.args[i].toLowerCase();
    const negate = word.startsWith('!');
    const kw = negate ? word.slice(1) : word;
    let ok: boolean;
    if (MATCH_NO_ARG.has(kw)) {
      if (kw === 'all') ok = true;
      else if (kw === 'final') {
        state.wantFinal = true;
        ok = ctx.final;
      } else ok = false; // canonical: PD Console does not canonicalize host names
    } else if (MATCH_WITH_ARG.has(kw)) {
      const arg = d.args[++i];
      if (arg === undefined) throw new ConfigError(`Match ${kw} needs a value`, d.file, d.line);
      switch (kw) {
        case 'exec':
          blocked = 'Match exec would run a command, which PD Console never does';
          ok = false;
          break;
        case 'localnetwork':
          blocked = 'Match localnetwork is not evaluated by PD Console';
          ok = false;
          break;
        case 'host':
          specific = true;
          ok = commaListMatch(currentHostname(state, input.hostArg), arg);
          break;
        case 'originalhost':
          specific = true;
          ok = commaListMatch(input.hostArg, arg);
          break;
        case 'user':
          ok = commaListMatch(state.settings.get('user')?.args[0] ?? input.localUser, arg);
          break;
        case 'localuser':
          ok = commaListMatch(input.localUser, arg);
          break;
        case 'tagged':
          ok = commaListMatch(state.settings.get('tag')?.args[0] ?? '', arg);
          break;
        default:
          // sessiontype/command/version describe the session, which here is always a non-interactive exec.
          ok = kw === 'sessiontype' ? commaListMatch('exec', arg) : false;
      }
    } else throw new ConfigError(`unsupported Match criterion "${d.args[i]}"`, d.file, d.line);
    if (negate) ok = !ok;
    result = result && ok;
  }
  if (blocked) {
    if (!ctx.final)
      state.warnings.push({
        file: d.file,
        line: d.line,
        message: `${blocked}; the block at ${d.file}:${d.line} is treated as not matching`,
      });
    return false;
  }
  if (result && specific) state.matchedBlocks.push(`${d.file}:${d.line}`);
  return result;
}

function apply(d: ConfigDirective, state: PassState): void {
  if (d.keyword === 'identityfile') {
    if (d.args.length === 0) throw new ConfigError('IdentityFile needs a file name', d.file, d.line);
    state.identityFiles.push({ args: d.args, file: d.file, line: d.line });
    return;
  }
  if (!state.settings.has(d.keyword))
    state.settings.set(d.keyword, { args: d.args, file: d.file, line: d.line });
}

function currentHostname(state: PassState, hostArg: string): string {
  // ssh lowercases the host name before expanding %h into HostName.
  const host = hostArg.toLowerCase();
  const h = state.settings.get('hostname');
  if (!h || h.args.length === 0) return host;
  // readconf.c expands only %h (and %%) in HostName.
  return h.args[0].replace(/%(.)/g, (m, t: string) => (t === 'h' ? host : t === '%' ? '%' : m));
}

function one(state: PassState, key: string, what: string): Setting | undefined {
  const s = state.settings.get(key);
  if (s && s.args.length === 0) throw new ConfigError(`${what} needs a value`, s.file, s.line);
  return s;
}

function toOptions(state: PassState, input: EvaluateInput, files: ConfigFile[]): SshOptions {
  const str = (key: string, what: string): string | undefined => one(state, key, what)?.args.join(' ');
  const bool = (key: string, what: string, dflt: boolean): boolean => {
    const s = one(state, key, what);
    return s ? parseYesNo(s.args[0], what, s.file, s.line) : dflt;
  };
  const count = (key: string, what: string, dflt: number): number => {
    const s = one(state, key, what);
    return s ? parseCount(s.args[0], what, s.file, s.line) : dflt;
  };

  const hostname = currentHostname(state, input.hostArg);
  if (/\s/.test(hostname) || hostname === '') {
    const s = state.settings.get('hostname');
    throw new ConfigError(`HostName "${hostname}" is not a host name`, s?.file, s?.line);
  }
  const portSetting = one(state, 'port', 'Port');
  const port = portSetting ? parsePort(portSetting.args[0], 'Port', portSetting.file, portSetting.line) : 22;
  const user = str('user', 'User') ?? input.localUser;
  const proxyJumpRaw = str('proxyjump', 'ProxyJump');
  const proxyJump = proxyJumpRaw && proxyJumpRaw.toLowerCase() !== 'none' ? proxyJumpRaw : null;
  const hostKeyAlias = str('hostkeyalias', 'HostKeyAlias') ?? null;
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
  const pathOf = (value: string, what: string, s?: Setting): string => {
    try {
      return expandPath(value, tokens, what);
    } catch (err) {
      throw new ConfigError((err as Error).message, s?.file, s?.line);
    }
  };

  const explicit = state.identityFiles.length > 0;
  const identityFiles = explicit
    ? state.identityFiles.map((s) => pathOf(s.args.join(' '), 'IdentityFile', s))
    : DEFAULT_IDENTITY_FILES.map((f) => pathOf(f, 'IdentityFile'));

  const ukh = one(state, 'userknownhostsfile', 'UserKnownHostsFile');
  const userKnownHostsFiles = ukh
    ? ukh.args[0].toLowerCase() === 'none'
      ? []
      : ukh.args.map((f) => pathOf(f, 'UserKnownHostsFile', ukh))
    : DEFAULT_USER_KNOWN_HOSTS.map((f) => pathOf(f, 'UserKnownHostsFile'));
  const gkh = one(state, 'globalknownhostsfile', 'GlobalKnownHostsFile');
  const globalKnownHostsFiles = gkh
    ? gkh.args[0].toLowerCase() === 'none'
      ? []
      : gkh.args.map((f) => pathOf(f, 'GlobalKnownHostsFile', gkh))
    : input.globalKnownHostsDefault;

  const agentSetting = one(state, 'identityagent', 'IdentityAgent');
  let identityAgent: string | null | undefined;
  if (agentSetting) {
    const v = agentSetting.args[0];
    if (v.toLowerCase() === 'none') identityAgent = null;
    else if (v === 'SSH_AUTH_SOCK') identityAgent = undefined;
    else if (v.startsWith('$')) identityAgent = input.env[v.slice(1)] ?? null;
    else identityAgent = pathOf(v, 'IdentityAgent', agentSetting);
  }

  const ct = one(state, 'connecttimeout', 'ConnectTimeout');
  const connectTimeout =
    ct && ct.args[0].toLowerCase() !== 'none'
      ? parseCount(ct.args[0], 'ConnectTimeout', ct.file, ct.line)
      : null;
  const shk = one(state, 'stricthostkeychecking', 'StrictHostKeyChecking');
  const pc = str('proxycommand', 'ProxyCommand');

  return {
    hostArg: input.hostArg,
    hostname,
    port,
    user,
    identityFiles: [...new Set(identityFiles)],
    identityFilesExplicit: explicit,
    identitiesOnly: bool('identitiesonly', 'IdentitiesOnly', false),
    identityAgent,
    proxyJump,
    proxyCommand: pc && pc.toLowerCase() !== 'none' ? pc : null,
    userKnownHostsFiles,
    globalKnownHostsFiles,
    hashKnownHosts: bool('hashknownhosts', 'HashKnownHosts', false),
    strictHostKeyChecking: shk ? parseStrict(shk.args[0], shk.file, shk.line) : 'ask',
    hostKeyAlias,
    serverAliveInterval: count('serveraliveinterval', 'ServerAliveInterval', 0),
    serverAliveCountMax: count('serveralivecountmax', 'ServerAliveCountMax', 3),
    connectTimeout,
    pubkeyAuthentication: bool('pubkeyauthentication', 'PubkeyAuthentication', true),
    passwordAuthentication: bool('passwordauthentication', 'PasswordAuthentication', true),
    kbdInteractiveAuthentication:
      state.settings.has('kbdinteractiveauthentication') ||
      !state.settings.has('challengeresponseauthentication')
        ? bool('kbdinteractiveauthentication', 'KbdInteractiveAuthentication', true)
        : bool('challengeresponseauthentication', 'ChallengeResponseAuthentication', true),
    batchMode: bool('batchmode', 'BatchMode', false),
    source: 'parser',
    files: existingFiles(files),
    matchedBlocks: [...new Set(state.matchedBlocks)],
    warnings: state.warnings,
  };
}
