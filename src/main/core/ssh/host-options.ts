// Resolves what `ssh <host>` would use for one host, the same way for the operator and for tests: `ssh -G`, the
// operator's own OpenSSH client, evaluates the config. The built-in evaluator (config-evaluate.ts) answers instead
// in exactly two cases, decided here and nowhere else: no OpenSSH client can be run (typical on Windows without
// the optional feature), or the config has a `Match exec`, whose command ssh -G would run and PD Console never
// does. A home other than the account's (PD_CONSOLE_SSH_HOME: tests, sandboxes, the demo fleet) is given to
// ssh -G as ssh takes one: its config with `-F`, and $HOME, from which ssh expands `~` and relative Includes.
// App-level settings (user, port, key file from the hosts file) win like ssh's -l/-p/-i flags do.
import { promises as dns } from 'node:dns';
import net from 'node:net';
import path from 'node:path';
import { evaluateConfig } from './config-evaluate';
import { existingFiles, findMatchExec, readConfigFiles } from './config-files';
import { SshError } from './errors';
import { resolveWithSshG, SshBinaryMissing } from './ssh-g';
import { ConfigError, expandTilde, type SshOptions } from './ssh-options';

export interface HostOptionsDeps {
  /** undefined: `ssh` on PATH; null: no OpenSSH client here (tests of the evaluator, which answers then). */
  sshBinary: string | null | undefined;
  /** Whose .ssh/config is read and what `~`/%d mean in options: the passwd home, as for ssh (sshHomes). */
  homeDir: string;
  /** The home ssh itself uses (passwd entry); ssh -G output is re-rooted from it to homeDir. */
  realHome: string;
  /** What `~` means in Include: $HOME when set, as glob(3) expands it for ssh (sshHomes). */
  includeHome: string;
  env: NodeJS.ProcessEnv;
  localUser: string;
  /**
   * Like `ssh -F`: read only this file. Default: ~/.ssh/config, then the system file — or, for a home other
   * than the account's, only that home's .ssh/config (ssh reads the account's own file otherwise).
   */
  configFile?: string;
  systemConfigFile: string;
  systemDir: string;
  globalKnownHostsDefault: string[];
  /** Resolves a host name; rejects with the resolver's error (ENOTFOUND…). */
  lookup: (hostname: string) => Promise<void>;
}

export interface HostRequest {
  /** Alias or host name, as given to ssh. */
  hostArg: string;
  user?: string;
  port?: number;
  identityFile?: string;
  /** Check that a name without HostName resolves (off for hops reached through another hop). Default true. */
  checkDns?: boolean;
}

const HOST_ARG = /^[^\s\-'"\\][^\s'"\\]{0,254}$/;

export async function resolveHostOptions(req: HostRequest, deps: HostOptionsDeps): Promise<SshOptions> {
  if (!HOST_ARG.test(req.hostArg))
    throw new ConfigError(
      `"${req.hostArg}" is not a host name or alias (no spaces, quotes, or leading "-")`,
      undefined,
      undefined,
      'Edit the host: give a Host alias from ~/.ssh/config, or a host name.',
    );
  const configFile =
    deps.configFile ??
    (deps.homeDir !== deps.realHome ? path.join(deps.homeDir, '.ssh', 'config') : undefined);
  const roots = configFile
    ? [{ path: configFile, system: false }]
    : [
        { path: path.join(deps.homeDir, '.ssh', 'config'), system: false },
        { path: deps.systemConfigFile, system: true },
      ];
  const tree = await readConfigFiles(roots, { includeHome: deps.includeHome, systemDir: deps.systemDir });
  const evaluate = (): SshOptions =>
    evaluateConfig(tree, {
      hostArg: req.hostArg,
      user: req.user,
      port: req.port,
      homeDir: deps.homeDir,
      localUser: deps.localUser,
      env: deps.env,
      globalKnownHostsDefault: deps.globalKnownHostsDefault,
    });

  let options: SshOptions;
  const execLines = findMatchExec(tree);
  if (deps.sshBinary !== null && execLines.length === 0) {
    try {
      const viaSsh = await resolveWithSshG({
        sshBinary: deps.sshBinary ?? 'ssh',
        hostArg: req.hostArg,
        user: req.user,
        port: req.port,
        // A home without a config is like an account without ~/.ssh/config: nothing read (`-F none`).
        configFile:
          configFile && !deps.configFile && !existingFiles(tree).includes(configFile) ? 'none' : configFile,
        // glob(3) expands `~` in Include (and the `~/.ssh/` ssh puts before a relative one) from $HOME.
        env: { ...deps.env, HOME: deps.includeHome },
        homeDir: deps.homeDir,
        realHome: deps.realHome,
        localUser: deps.localUser,
      });
      options = { ...viaSsh, files: existingFiles(tree), matchedBlocks: matchedBlocksOf(evaluate) };
    } catch (err) {
      // No OpenSSH client (typical on Windows without the optional feature): the evaluator is the fallback.
      if (!(err instanceof SshBinaryMissing)) throw err;
      options = evaluate();
      if (deps.sshBinary !== undefined)
        options.warnings.push({ message: `${err.message}; used the built-in parser` });
    }
  } else {
    options = evaluate();
    for (const d of execLines)
      options.warnings.push({
        file: d.file,
        line: d.line,
        message:
          `${d.file}:${d.line} has "Match exec"; ssh -G would run its command, so PD Console resolved ` +
          `${req.hostArg} with its built-in parser, which treats Match exec blocks as not matching`,
      });
  }

  if (req.identityFile) {
    const key = expandTilde(req.identityFile, deps.homeDir, 'key file');
    const abs = path.isAbsolute(key) ? key : path.resolve(deps.homeDir, key);
    // Like `ssh -i`: the app's key is tried first, and the defaults no longer count as "not configured".
    options.identityFiles = [abs, ...options.identityFiles.filter((f) => f !== abs)];
    if (!options.identityFilesExplicit) options.identityFiles = [abs];
    options.identityFilesExplicit = true;
  }
  if (options.proxyCommand && !options.proxyJump)
    throw new SshError({
      code: 'unsupported',
      message: `${req.hostArg} is reached through ProxyCommand "${options.proxyCommand.slice(0, 120)}", which PD Console does not run`,
      hint: 'Use ProxyJump for this host (e.g. ProxyJump bastion) instead of ProxyCommand ssh -W.',
    });
  await checkResolvable(req, options, deps, evaluate);
  return options;
}

function matchedBlocksOf(evaluate: () => SshOptions): string[] {
  try {
    return evaluate().matchedBlocks;
  } catch (err) {
    // ssh -G accepted the config; the built-in evaluator only supplies "which block matched" for messages.
    if (err instanceof ConfigError) return [];
    throw err;
  }
}

/**
 * `ssh -G typo` happily prints defaults (hostname = the alias). When no HostName was set and the name does
 * not resolve, say that the alias is unknown instead of letting the connect fail with a bare DNS error.
 */
async function checkResolvable(
  req: HostRequest,
  options: SshOptions,
  deps: HostOptionsDeps,
  evaluate: () => SshOptions,
): Promise<void> {
  if (
    req.checkDns === false ||
    options.proxyJump ||
    net.isIP(options.hostname) ||
    options.hostname.toLowerCase() !== req.hostArg.toLowerCase()
  )
    return;
  try {
    await deps.lookup(options.hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTFOUND' && code !== 'ENODATA') return; // transient (EAI_AGAIN…): let the connection retry
    const userConfig = deps.configFile ?? path.join(deps.homeDir, '.ssh', 'config');
    const missing =
      deps.configFile || options.files.includes(userConfig) ? '' : ` (${userConfig} does not exist)`;
    const files = (options.files.length ? options.files.join(', ') : 'any ssh config file') + missing;
    const blocks = options.matchedBlocks.length ? options.matchedBlocks : matchedBlocksOf(evaluate);
    throw new SshError({
      code: 'unknown-host',
      message:
        (blocks.length
          ? `"${req.hostArg}" matches ${blocks.join(', ')} but no HostName is set there, and "${req.hostArg}" does not resolve (${code})`
          : `"${req.hostArg}" is not a Host alias in ${files}, and it does not resolve as a host name (${code})`) +
        homeNote(deps),
      hint: `Check the spelling, add "Host ${req.hostArg}" with a HostName to ${userConfig}, or connect your VPN if the name only resolves there.`,
    });
  }
}

/** Why a ~/.ssh/config under $HOME was not read, when $HOME is not the home ssh reads it from. */
function homeNote(deps: HostOptionsDeps): string {
  const envHome = deps.env.HOME;
  // With PD_CONSOLE_SSH_HOME (homeDir is not the passwd home) that folder is read and $HOME plays no part.
  if (deps.configFile || deps.homeDir !== deps.realHome || !envHome) return '';
  if (path.resolve(envHome) === path.resolve(deps.homeDir)) return '';
  return `. ssh reads ${path.join(deps.homeDir, '.ssh', 'config')} (the home of your account in the password database), not ${path.join(envHome, '.ssh', 'config')} under $HOME`;
}

/** dns.lookup bounded in time; a slow resolver must not hold the connect attempt. */
export async function lookupWithin(hostname: string, timeoutMs = 5000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      dns.lookup(hostname),
      new Promise<void>((resolve) => {
        // A lookup that takes this long is not "does not exist": give up checking and let the connect decide.
        timer = setTimeout(resolve, timeoutMs);
        timer.unref?.();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
