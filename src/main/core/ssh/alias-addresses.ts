// Every concrete Host alias in the operator's ssh config, with where `ssh ALIAS` would really go: HostName,
// port and user resolved exactly as for a connection (ssh -G or the built-in evaluator, host-options.ts), and
// the addresses that HostName resolves to. Fleet discovery asks "which alias reaches 10.1.0.13?" of this.
import { promises as dns } from 'node:dns';
import net from 'node:net';
import path from 'node:path';
import { readConfigFiles, type ConfigFile } from './config-files';
import { lookupWithin, resolveHostOptions, type HostOptionsDeps } from './host-options';
import {
  defaultGlobalKnownHosts,
  defaultSystemConfig,
  localUserName,
  passwdHome,
  sshHomes,
} from './ssh-options';

export interface AliasAddress {
  alias: string;
  /** HostName as ssh would use it (the alias itself when none is set). */
  hostname: string;
  port: number;
  user: string;
  /** hostname and the addresses it resolves to (lowercase). */
  addresses: string[];
  /** Set when ssh could not resolve this alias (a config error, ProxyCommand…): it is not offered. */
  problem?: string;
}

export interface AliasIndexDeps {
  homeDir?: string;
  /** undefined: `ssh` on PATH; null: the built-in evaluator only (see host-options.ts). */
  sshBinary?: string | null;
  /** Like `ssh -F`. */
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  /** All addresses of a name; default dns.lookup(all), bounded in time. */
  lookupAll?: (name: string) => Promise<string[]>;
}

const WILDCARD = /[*?!]/;

/** Host patterns that name one host (no wildcard, no negation), in file order, each once. */
export function concreteAliases(files: readonly ConfigFile[]): string[] {
  const out: string[] = [];
  const walk = (fs: readonly ConfigFile[]): void => {
    for (const f of fs)
      for (const n of f.nodes) {
        if (n.kind === 'include') walk(n.files);
        else if (n.d.keyword === 'host')
          for (const a of n.d.args.flatMap((x) => x.split(/\s+/)))
            if (a && !WILDCARD.test(a) && !out.includes(a)) out.push(a);
      }
  };
  walk(files);
  return out;
}

export async function defaultLookupAll(name: string, timeoutMs = 3000): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      dns.lookup(name, { all: true }).then((r) => r.map((a) => a.address.toLowerCase())),
      new Promise<string[]>((resolve) => {
        timer = setTimeout(() => resolve([]), timeoutMs);
        timer.unref?.();
      }),
    ]);
  } catch {
    return [];
  } finally {
    clearTimeout(timer);
  }
}

/** The files read, in order, for messages ("no alias in ~/.ssh/config resolves to …"). */
export function configRoots(deps: AliasIndexDeps): {
  home: string;
  includeHome: string;
  userConfig: string;
  roots: { path: string; system: boolean }[];
} {
  const { home, includeHome } = sshHomes(deps.env ?? process.env, deps.homeDir);
  const userConfig = deps.configFile ?? path.join(home, '.ssh', 'config');
  const roots = deps.configFile
    ? [{ path: deps.configFile, system: false }]
    : [
        { path: userConfig, system: false },
        { path: defaultSystemConfig(), system: true },
      ];
  return { home, includeHome, userConfig, roots };
}

export interface AliasIndex {
  /** One alias, resolved (for the host discovery starts from). */
  one(alias: string): Promise<AliasAddress>;
  /** Every concrete alias in the config, resolved. */
  all(): Promise<AliasAddress[]>;
}

export function createAliasIndex(deps: AliasIndexDeps = {}): AliasIndex {
  const env = deps.env ?? process.env;
  const { home, includeHome, roots } = configRoots({ ...deps, env });
  const systemConfigFile = defaultSystemConfig();
  const optionDeps: HostOptionsDeps = {
    sshBinary: deps.sshBinary,
    homeDir: home,
    realHome: passwdHome(),
    includeHome,
    env,
    localUser: localUserName(env),
    configFile: deps.configFile,
    systemConfigFile,
    systemDir: path.dirname(systemConfigFile),
    globalKnownHostsDefault: defaultGlobalKnownHosts(),
    lookup: (h) => lookupWithin(h),
  };
  const lookupAll = deps.lookupAll ?? ((n: string) => defaultLookupAll(n));
  const cache = new Map<string, Promise<AliasAddress>>();
  const one = (alias: string): Promise<AliasAddress> => {
    let p = cache.get(alias);
    if (!p) {
      p = (async (): Promise<AliasAddress> => {
        try {
          const o = await resolveHostOptions({ hostArg: alias, checkDns: false }, optionDeps);
          const hostname = o.hostname.toLowerCase();
          // Behind a jump host the name resolves on the far side; the local resolver would answer wrongly.
          const resolved = net.isIP(hostname) || o.proxyJump ? [] : await lookupAll(hostname);
          return {
            alias,
            hostname,
            port: o.port,
            user: o.user,
            addresses: [...new Set([hostname, ...resolved])],
          };
        } catch (err) {
          return { alias, hostname: '', port: 0, user: '', addresses: [], problem: (err as Error).message };
        }
      })();
      cache.set(alias, p);
    }
    return p;
  };
  let everything: Promise<AliasAddress[]> | undefined;
  const all = (): Promise<AliasAddress[]> =>
    (everything ??= (async () => {
      const tree = await readConfigFiles(roots, { includeHome, systemDir: path.dirname(systemConfigFile) });
      const aliases = concreteAliases(tree);
      const out: AliasAddress[] = [];
      // A few at a time: ssh -G is one process per alias, and a big config has hundreds of them.
      for (let i = 0; i < aliases.length; i += 8)
        out.push(...(await Promise.all(aliases.slice(i, i + 8).map(one))));
      return out;
    })());
  return { one, all };
}
