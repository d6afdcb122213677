// Shared setup for the tests against a real OpenSSH sshd: a throwaway home with ~/.ssh and key files, prompt
// recorders, and a resolver/connection pointed at them. Every file under test lives in a temp dir.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HostConfig } from '@shared/domain';
import { systemClock } from '../../src/main/core/clock';
import { SshConnection, type SshConnectionOptions } from '../../src/main/core/ssh/connection';
import type {
  HostKeyPromptInfo,
  PassphraseAnswer,
  PassphrasePromptInfo,
  PasswordPromptInfo,
  SecretStore,
  SshPrompts,
} from '../../src/main/core/ssh/prompts';
import { createSshResolver, type SshResolverDeps } from '../../src/main/core/ssh/resolve-host';
import type { ConfigWarning } from '../../src/main/core/ssh/ssh-options';
import { DemoSimulation, emulateCommand } from '../../src/main/demo';
import { keygen, SSH, type Answer } from '../fixtures/sshd';

export interface TestHome {
  root: string;
  home: string;
  sshDir: string;
  knownHosts: string;
  configFile: string;
  keys: Record<
    'user' | 'enc' | 'agent' | 'other',
    { privateFile: string; publicFile: string; publicLine: string }
  >;
  writeConfig(text: string): Promise<void>;
  cleanup(): Promise<void>;
}

export const PASSPHRASE = 'correct horse battery staple';

export async function makeHome(): Promise<TestHome> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-ssh-home-'));
  const home = path.join(root, 'home');
  const sshDir = path.join(home, '.ssh');
  const keyDir = path.join(home, 'keys');
  await fs.mkdir(sshDir, { recursive: true, mode: 0o700 });
  await fs.mkdir(keyDir, { recursive: true, mode: 0o700 });
  // Not under OpenSSH's default names (~/.ssh/id_*), so a test uses a key only when it says so.
  const [user, enc, agent, other] = await Promise.all([
    keygen(path.join(keyDir, 'user_key'), { comment: 'user' }),
    // Few bcrypt rounds: still a genuinely encrypted OpenSSH key, but each wrong guess costs ms, not a second.
    keygen(path.join(keyDir, 'enc_key'), { comment: 'enc', passphrase: PASSPHRASE, kdfRounds: 2 }),
    keygen(path.join(keyDir, 'agent_key'), { comment: 'agent' }),
    keygen(path.join(keyDir, 'other_key'), { comment: 'other (not authorized)' }),
  ]);
  const configFile = path.join(sshDir, 'config');
  return {
    root,
    home,
    sshDir,
    knownHosts: path.join(sshDir, 'known_hosts'),
    configFile,
    keys: { user, enc, agent, other },
    writeConfig: (text) => fs.writeFile(configFile, text),
    cleanup: () => fs.rm(root, { recursive: true, force: true }),
  };
}

export interface PromptLog {
  hostKey: HostKeyPromptInfo[];
  passphrase: PassphrasePromptInfo[];
  password: PasswordPromptInfo[];
}

export function recordingPrompts(answers: {
  hostKey?: boolean;
  passphrases?: Array<string | PassphraseAnswer | null>;
  password?: string | null;
}): { prompts: SshPrompts; calls: PromptLog } {
  const calls: PromptLog = { hostKey: [], passphrase: [], password: [] };
  const queue = [...(answers.passphrases ?? [])];
  return {
    calls,
    prompts: {
      hostKey: async (info) => {
        calls.hostKey.push(info);
        return answers.hostKey ?? false;
      },
      passphrase: async (info) => {
        calls.passphrase.push(info);
        return queue.length ? queue.shift()! : null;
      },
      password: async (info) => {
        calls.password.push(info);
        return answers.password ?? null;
      },
    },
  };
}

export function memorySecrets(): SecretStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    get: async (k) => data.get(k) ?? null,
    set: async (k, v) => void data.set(k, v),
    delete: async (k) => void data.delete(k),
  };
}

export function resolverFor(
  h: TestHome,
  prompts: SshPrompts,
  extra: Partial<SshResolverDeps> & { agentSocket?: string } = {},
): {
  resolve: (host: HostConfig) => ReturnType<ReturnType<typeof createSshResolver>>;
  warnings: ConfigWarning[];
} {
  const warnings: ConfigWarning[] = [];
  const { agentSocket, ...rest } = extra;
  const resolve = createSshResolver({
    prompts,
    sshBinary: SSH,
    homeDir: h.home,
    configFile: h.configFile,
    env: { PATH: process.env.PATH, ...(agentSocket ? { SSH_AUTH_SOCK: agentSocket } : {}) },
    globalKnownHostsFiles: [],
    warn: (w) => warnings.push(w),
    ...rest,
  });
  return { resolve, warnings };
}

export function sshHost(alias: string, extra: Partial<HostConfig> = {}): HostConfig {
  return { id: alias, label: alias, kind: 'ssh', alias, ...extra };
}

export function connection(
  configure: SshConnectionOptions['configure'],
  opts: Partial<SshConnectionOptions> = {},
): SshConnection {
  return new SshConnection({
    label: 'test host',
    configure,
    clock: systemClock,
    backoff: { initialMs: 100, maxMs: 1000 },
    ...opts,
  });
}

/** A Host block for one of the test sshds. */
export function hostBlock(
  alias: string,
  port: number,
  h: TestHome,
  lines: string[] = [`IdentityFile ${h.keys.user.privateFile}`],
): string {
  return [
    `Host ${alias}`,
    '  HostName 127.0.0.1',
    `  Port ${port}`,
    '  User root',
    '  UserKnownHostsFile ~/.ssh/known_hosts',
    '  PasswordAuthentication no',
    '  KbdInteractiveAuthentication no',
    ...lines.map((l) => `  ${l}`),
    '',
  ].join('\n');
}

/**
 * The demo host's command emulation behind sshd's ForceCommand, plus `test-sleep <ms>` for concurrency tests;
 * `load` counts how many test-sleep commands run at once on the host side.
 */
export function demoAnswer(): { answer: Answer; load: { current: number; max: number } } {
  const sim = new DemoSimulation({ clock: systemClock });
  const load = { current: 0, max: 0 };
  const answer: Answer = async (command, user) => {
    const m = /^test-sleep (\d{1,5})$/.exec(command);
    if (m) {
      load.max = Math.max(load.max, ++load.current);
      await new Promise((r) => setTimeout(r, Number(m[1])));
      load.current--;
      return { stdout: `slept ${m[1]}\n`, exitCode: 0 };
    }
    const r = await emulateCommand(sim, command, user || 'root');
    return { stdout: r.stdoutBytes ?? r.stdout, stderr: r.stderr, exitCode: r.exitCode };
  };
  return { answer, load };
}

export async function waitFor(
  what: string,
  cond: () => boolean,
  timeoutMs: number,
  everyMs = 25,
): Promise<number> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return Date.now() - start;
}
