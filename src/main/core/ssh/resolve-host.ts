// Resolves a configured host to ssh2 connect options the way `ssh host` would: OpenSSH config (ssh -G or the
// built-in evaluator), ssh-agent and key files (with passphrase prompts), keyboard-interactive/password as a
// last resort, known_hosts verification with prompts for unknown keys, and ProxyJump chains. The returned
// config carries `diagnostics` so the connection can explain a refusal precisely and release jump hosts.
import path from 'node:path';
import { createAgent, type Algorithms, type BaseAgent, type ConnectConfig } from 'ssh2';
import type { HostConfig } from '@shared/domain';
import { agentLocation, FilteredAgent, probeAgent, type AgentProbe } from './agent';
import { createAuthHandler, type AuthReport } from './auth';
import type { ResolvedConnectConfig } from './diagnostics';
import { SshError, type ExplainedError } from './errors';
import { createHostVerifier, type HostKeyOutcome } from './host-key-check';
import { lookupWithin, resolveHostOptions, type HostOptionsDeps } from './host-options';
import { isKeyProblem, KeyLoader, readPublicKey, type IdentityKey, type KeyProblem } from './key-files';
import { knownHostsName, knownKeyTypes, loadKnownHosts, KnownHostsUnreadable } from './known-hosts';
import { refusingPrompts, type SecretStore, type SshPrompts } from './prompts';
import { MAX_JUMP_HOPS, openJumpChain, parseProxyJump, type HopPlan } from './proxy-jump';
import {
  ConfigError,
  defaultGlobalKnownHosts,
  defaultSystemConfig,
  localUserName,
  passwdHome,
  sshHomes,
  type ConfigWarning,
  type SshOptions,
} from './ssh-options';

export type { SshPrompts, SecretStore } from './prompts';
export type { ConnectDiagnostics, ResolvedConnectConfig } from './diagnostics';

export interface SshResolverDeps {
  prompts: SshPrompts;
  secrets?: SecretStore;
  /** OpenSSH client for `ssh -G`: undefined = `ssh` on PATH, null = none here (the built-in evaluator answers). */
  sshBinary?: string | null;
  homeDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Like `ssh -F`: read only this config file. Default ~/.ssh/config then the system config. */
  configFile?: string;
  systemConfigFile?: string;
  /** Replaces GlobalKnownHostsFile from the config (tests use it to stay out of /etc/ssh). */
  globalKnownHostsFiles?: string[];
  /** How long a question to the operator may stay unanswered. Default 5 minutes. */
  promptTimeoutMs?: number;
  /** Config and known_hosts problems that do not stop the connection (each reported once). */
  warn?: (warning: ConfigWarning) => void;
  /** DNS check for "alias not found"; rejects with ENOTFOUND when a name does not exist. */
  lookup?: (hostname: string) => Promise<void>;
  platform?: NodeJS.Platform;
}

const DEFAULT_PROMPT_TIMEOUT_MS = 5 * 60_000;
/** Handshake + authentication budget, excluding time spent waiting for the operator. */
const DEFAULT_HANDSHAKE_MS = 20_000;

export function createSshResolver(deps: SshResolverDeps): (host: HostConfig) => Promise<ConnectConfig> {
  const env = deps.env ?? process.env;
  const platform = deps.platform ?? process.platform;
  const homes = sshHomes(env, deps.homeDir);
  const homeDir = homes.home;
  const promptTimeoutMs = deps.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS;
  const keys = new KeyLoader({ prompts: deps.prompts, secrets: deps.secrets, promptTimeoutMs, platform });
  const warned = new Set<string>();
  const warn = (w: ConfigWarning): void => {
    const k = `${w.file ?? ''}:${w.line ?? ''}:${w.message}`;
    if (warned.has(k)) return;
    if (warned.size < 10_000) warned.add(k);
    deps.warn?.(w);
  };
  const optionDeps: HostOptionsDeps = {
    sshBinary: deps.sshBinary,
    homeDir,
    realHome: passwdHome(),
    includeHome: homes.includeHome,
    env,
    localUser: localUserName(env),
    configFile: deps.configFile,
    systemConfigFile: deps.systemConfigFile ?? defaultSystemConfig(platform),
    systemDir: path.dirname(deps.systemConfigFile ?? defaultSystemConfig(platform)),
    globalKnownHostsDefault: defaultGlobalKnownHosts(platform),
    lookup: deps.lookup ?? ((h) => lookupWithin(h)),
  };

  const resolveOptions = async (
    hostArg: string,
    over: { user?: string; port?: number; identityFile?: string; hostname?: string },
    checkDns: boolean,
  ): Promise<SshOptions> => {
    const o = await resolveHostOptions(
      {
        hostArg,
        user: over.user,
        port: over.port,
        identityFile: over.identityFile,
        checkDns: checkDns && !over.hostname,
      },
      optionDeps,
    );
    if (over.hostname) o.hostname = over.hostname;
    if (deps.globalKnownHostsFiles) o.globalKnownHostsFiles = deps.globalKnownHostsFiles;
    for (const w of o.warnings) warn(w);
    return o;
  };

  /** Everything needed to log in to one host (target or hop), except the transport. */
  const plan = async (
    o: SshOptions,
    label: string,
    jumpFor: string | undefined,
  ): Promise<{
    config: ConnectConfig;
    explain: (err: Error) => ExplainedError | undefined;
    handshakeMs: number;
  }> => {
    const who = `${o.user}@${o.hostname}${o.port === 22 ? '' : `:${o.port}`}`;
    const where = jumpFor ? `jump host ${label} (${who})` : `${label} (${who})`;

    const loc = agentLocation(o.identityAgent, env, platform);
    const probe: AgentProbe | null = loc.path !== null ? await probeAgent(loc.path, loc.where) : null;
    const agentKeys = probe?.ok ? probe.keys : [];
    const agentPubs = agentKeys.map((k) => k.getPublicSSH());

    const loaded: IdentityKey[] = [];
    const problems: KeyProblem[] = [];
    const heldByAgent: Buffer[] = [];
    if (o.pubkeyAuthentication) {
      for (const file of o.identityFiles) {
        if (agentPubs.length > 0) {
          // The agent can sign for this identity: no need to read (or ask the passphrase of) the file.
          const pub = await readPublicKey(file);
          if (pub && agentPubs.some((a) => a.equals(pub))) {
            heldByAgent.push(pub);
            continue;
          }
        }
        const r = await keys.load(file, o.identityFilesExplicit, label);
        if (r === null) continue;
        if (isKeyProblem(r)) problems.push(r);
        else loaded.push(r);
      }
    }

    let agent: { agent: BaseAgent | string; where: string; keyCount: number } | null = null;
    if (o.pubkeyAuthentication && probe?.ok && loc.path !== null && agentKeys.length > 0) {
      if (!o.identitiesOnly) agent = { agent: loc.path, where: probe.where, keyCount: agentKeys.length };
      else if (heldByAgent.length > 0)
        agent = {
          agent: new FilteredAgent(createAgent(loc.path), heldByAgent),
          where: probe.where,
          keyCount: heldByAgent.length,
        };
    }
    const interactive = !o.batchMode;
    const kbd = interactive && o.kbdInteractiveAuthentication;
    const password = interactive && o.passwordAuthentication;

    const agentNote = agentSummary(probe, loc);
    if (!agent && loaded.length === 0) {
      // Nothing to offer for publickey. A broken explicitly-configured key is the answer the operator needs
      // now, not after a password prompt that cannot help.
      const p = problems[0];
      if (p && o.identityFilesExplicit)
        throw new SshError({ code: p.code, message: `${where}: ${p.message}`, hint: p.hint });
      if (!kbd && !password) throw noCredentials(where, o, agentNote, problems);
    }

    const report: AuthReport = { offered: [], cancelled: false, serverMethods: null };
    const authHandler = createAuthHandler(
      {
        label,
        user: o.user,
        host: o.hostname,
        port: o.port,
        agent,
        keys: loaded,
        keyboardInteractive: kbd,
        password,
        prompts: deps.prompts,
        promptTimeoutMs,
      },
      report,
    );
    const outcome: HostKeyOutcome = {};
    const keyHost = o.hostKeyAlias ?? o.hostname;
    const hostVerifier = createHostVerifier(
      {
        label,
        host: keyHost,
        port: o.port,
        userKnownHostsFiles: o.userKnownHostsFiles,
        globalKnownHostsFiles: o.globalKnownHostsFiles,
        hashKnownHosts: o.hashKnownHosts,
        strict: o.strictHostKeyChecking,
        prompts: deps.prompts,
        promptTimeoutMs,
        jumpFor,
        warn: (message) => warn({ message }),
      },
      outcome,
    );
    const config: ConnectConfig = {
      host: o.hostname,
      port: o.port,
      username: o.user,
      hostVerifier,
      authHandler,
    };
    const algorithms = await preferKnownHostKeyTypes(o, keyHost);
    if (algorithms) config.algorithms = algorithms;
    if (o.serverAliveInterval > 0) {
      config.keepaliveInterval = o.serverAliveInterval * 1000;
      config.keepaliveCountMax = o.serverAliveCountMax;
    }
    const handshakeMs = o.connectTimeout ? Math.max(o.connectTimeout * 1000, 5000) : DEFAULT_HANDSHAKE_MS;
    config.readyTimeout = handshakeMs;

    const explain = (err: Error): ExplainedError | undefined => {
      if (outcome.failure) return outcome.failure;
      if (/All configured authentication methods failed/i.test(err.message))
        return authFailure(where, o, report, problems, agentNote);
      if (/Too many authentication failures/i.test(err.message))
        return {
          code: 'auth-too-many',
          message: `${where} closed the connection: too many authentication failures after offering ${report.offered.join(', ') || 'nothing'}`,
          hint: 'The server allows only a few attempts (MaxAuthTries) and the agent offered keys it does not accept. Set IdentitiesOnly yes and IdentityFile <the right key> for this host.',
        };
      return undefined;
    };
    return { config, explain, handshakeMs };
  };

  return async (host: HostConfig): Promise<ConnectConfig> => {
    if (host.kind !== 'ssh')
      throw new ConfigError(
        `host ${host.label} is a ${host.kind} host; only ssh hosts are resolved through OpenSSH config`,
      );
    const hostArg = host.alias ?? host.hostname;
    if (!hostArg)
      throw new ConfigError(
        `host ${host.label} has neither an ssh alias nor a host name`,
        undefined,
        undefined,
        'Edit the host and set one of them.',
      );
    const label = host.label || hostArg;
    const o = await resolveOptions(
      hostArg,
      {
        user: host.user,
        port: host.port,
        identityFile: host.identityFile,
        hostname: host.alias ? host.hostname : undefined,
      },
      true,
    );
    const target = await plan(o, label, undefined);
    const who = `${o.user}@${o.hostname}:${o.port}`;
    if (!o.proxyJump) {
      const config: ResolvedConnectConfig = {
        ...target.config,
        diagnostics: { target: who, options: o, explain: target.explain, release: () => undefined },
      };
      return config;
    }

    const hopOptions = await jumpChain(o, resolveOptions, 0);
    const hops: HopPlan[] = [];
    for (const h of hopOptions) {
      const p = await plan(h, h.hostArg, label);
      hops.push({
        label: h.hostArg,
        hostname: h.hostname,
        port: h.port,
        config: p.config,
        explain: p.explain,
        handshakeTimeoutMs: p.handshakeMs,
      });
    }
    const chain = await openJumpChain(hops, { hostname: o.hostname, port: o.port, label });
    const config: ResolvedConnectConfig = {
      ...target.config,
      sock: chain.sock,
      diagnostics: {
        target: `${who} via ${hopOptions.map((h) => h.hostArg).join(' → ')}`,
        options: o,
        explain: target.explain,
        release: () => chain.close(),
      },
    };
    return config;
  };
}

/**
 * Hops in connection order for `o.proxyJump`, like `ssh -J a,b`: b is reached through a, so b's own ProxyJump
 * is overridden, while the first hop a is connected with its own configuration (including its ProxyJump).
 */
async function jumpChain(
  o: SshOptions,
  resolveOptions: (
    hostArg: string,
    over: { user?: string; port?: number },
    checkDns: boolean,
  ) => Promise<SshOptions>,
  depth: number,
): Promise<SshOptions[]> {
  if (!o.proxyJump) return [];
  const specs = parseProxyJump(o.proxyJump);
  if (depth + specs.length > MAX_JUMP_HOPS)
    throw new ConfigError(
      `ProxyJump chain for ${o.hostArg} is longer than ${MAX_JUMP_HOPS} hops (a loop between jump hosts?)`,
      undefined,
      undefined,
      'Check ProxyJump for the jump hosts in ~/.ssh/config.',
    );
  const resolved: SshOptions[] = [];
  for (let i = 0; i < specs.length; i++) {
    // Only the first hop is reached from here; later hop names may resolve only from the hop before them.
    const h = await resolveOptions(specs[i].host, { user: specs[i].user, port: specs[i].port }, i === 0);
    resolved.push(i === 0 ? h : { ...h, proxyJump: null });
  }
  const before = await jumpChain(resolved[0], resolveOptions, depth + specs.length);
  resolved[0] = { ...resolved[0], proxyJump: null };
  return [...before, ...resolved];
}

/** Like OpenSSH ordering HostKeyAlgorithms: ask for the key type known_hosts already has for this host. */
async function preferKnownHostKeyTypes(o: SshOptions, keyHost: string): Promise<Algorithms | undefined> {
  let types: string[];
  try {
    const data = await loadKnownHosts([...o.userKnownHostsFiles, ...o.globalKnownHostsFiles]);
    types = knownKeyTypes(data.entries, knownHostsName(keyHost, o.port));
  } catch (err) {
    // The verifier reads the same files and refuses the connection with this error; ordering is moot then.
    if (err instanceof KnownHostsUnreadable) return undefined;
    throw err;
  }
  if (types.length === 0 || types.includes('ssh-ed25519')) return undefined; // ed25519 is ssh2's first choice already
  const algos: string[] = [];
  for (const t of types) {
    if (t === 'ssh-rsa') algos.push('rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa');
    else if (/^ecdsa-sha2-nistp(256|384|521)$/.test(t)) algos.push(t);
  }
  if (algos.length === 0) return undefined;
  return { serverHostKey: { remove: algos, prepend: algos } as Algorithms['serverHostKey'] };
}

function agentSummary(
  probe: AgentProbe | null,
  loc: ReturnType<typeof agentLocation>,
): { state: 'none' | 'unreachable' | 'empty' | 'keys'; text: string } {
  if (loc.path === null) return { state: 'none', text: `no ssh-agent: ${loc.why}` };
  if (!probe || !probe.ok)
    return { state: 'unreachable', text: probe && !probe.ok ? probe.message : 'ssh-agent not checked' };
  if (probe.keys.length === 0) return { state: 'empty', text: `ssh-agent (${probe.where}) holds no keys` };
  return { state: 'keys', text: `ssh-agent (${probe.where}) holds ${probe.keys.length} key(s)` };
}

function noCredentials(
  where: string,
  o: SshOptions,
  agentNote: { state: string; text: string },
  problems: KeyProblem[],
): SshError {
  const keyText = problems.length
    ? problems.map((p) => p.message).join('; ')
    : o.identityFilesExplicit
      ? 'no configured key file could be used'
      : 'no default key file (~/.ssh/id_ed25519, id_rsa, …) exists';
  const code = agentNote.state === 'empty' ? 'agent-empty' : 'agent-unavailable';
  return new SshError({
    code,
    message: `${where}: nothing to authenticate with: ${agentNote.text}, and ${keyText}`,
    hint:
      agentNote.state === 'empty'
        ? 'Add your key to the agent (ssh-add ~/.ssh/id_ed25519), or set IdentityFile for this host.'
        : agentNote.state === 'unreachable'
          ? 'Start ssh-agent (or fix SSH_AUTH_SOCK) and ssh-add your key, or set IdentityFile for this host.'
          : 'Set IdentityFile for this host, or start ssh-agent and ssh-add your key.',
  });
}

function authFailure(
  where: string,
  o: SshOptions,
  report: AuthReport,
  problems: KeyProblem[],
  agentNote: { state: string; text: string },
): ExplainedError {
  const offered = report.offered.length ? report.offered.join(', ') : 'nothing the server accepts';
  const server = report.serverMethods ? ` (server allows: ${report.serverMethods.join(', ')})` : '';
  const problemText = problems.length ? ` Unusable keys: ${problems.map((p) => p.message).join('; ')}.` : '';
  if (problems.length && !report.offered.some((x) => x.startsWith('key ') || x.startsWith('ssh-agent'))) {
    const p = problems[0];
    return {
      code: p.code,
      message: `${where}: ${p.message}.${problems.length > 1 ? problemText : ''}`,
      hint: p.hint,
    };
  }
  if (report.offered.length === 0 && agentNote.state !== 'keys')
    return {
      code: agentNote.state === 'empty' ? 'agent-empty' : 'agent-unavailable',
      message: `${where} rejected authentication: ${agentNote.text}, and no key file was offered${server}.${problemText}`,
      hint: 'Load your key into ssh-agent (ssh-add) or set IdentityFile for this host.',
    };
  const keysOffered = report.offered.some((x) => x.startsWith('key ') || x.startsWith('ssh-agent'));
  return {
    code: 'auth-failed',
    message: `${where} refused the login: offered ${offered}, none accepted${report.cancelled ? ' (a prompt was cancelled)' : ''}${server}.${problemText}`,
    hint: keysOffered
      ? `Make sure your public key is in ~${o.user}/.ssh/authorized_keys on ${o.hostname} (e.g. ssh-copy-id -i <key>.pub ${o.user}@${o.hostname}), and that User (${o.user}) is right.`
      : `Check the user name (${o.user}) and password, or set up key authentication (IdentityFile or ssh-agent) for this host.`,
  };
}

let defaultResolver: ((host: HostConfig) => Promise<ConnectConfig>) | null = null;

/** The resolver with default dependencies and prompts that refuse every question (no UI wired). */
export function resolveSshHost(host: HostConfig): Promise<ConnectConfig> {
  defaultResolver ??= createSshResolver({ prompts: refusingPrompts });
  return defaultResolver(host);
}
