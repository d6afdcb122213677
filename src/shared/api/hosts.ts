// Contract part: saved hosts (the app's hosts file) and the questions SSH asks the operator — an unknown
// host key, a key passphrase, a password — carried as a push event and answered by a request.
import type { HostConfig } from '../domain';

export type HostInputDto = Omit<HostConfig, 'id'> & { id?: string };
export type HostPatchDto = Partial<Omit<HostConfig, 'id'>>;

export type SshPromptKind = 'hostKey' | 'passphrase' | 'password';

export interface SshPromptEvent {
  promptId: string;
  kind: SshPromptKind;
  /** Which host the question is about (alias or label). */
  label: string;
  /** hostKey: host, port, keyType, fingerprint (SHA256:… as ssh-keygen -lf prints it), knownHostsFile, otherKnownKeys.
   *  passphrase: keyFile, attempt, maxAttempts, previousWasWrong, canRemember.
   *  password: user, host, port, kind, prompt, echo, name, instructions. */
  info: Record<string, unknown>;
}

export interface SshPromptAnswer {
  promptId: string;
  /** hostKey: trust the key (it is appended to known_hosts) or refuse. */
  accept?: boolean;
  /** passphrase/password; null = cancel. Never logged, never recorded. */
  secret?: string | null;
  /** passphrase: keep it in the OS keychain (where the shell offers one). */
  remember?: boolean;
}

export interface HostsRequests {
  listHosts(
    args: Record<string, never>,
  ): Promise<{ file: string; hosts: HostConfig[]; error?: { message: string; hint?: string } }>;
  addHost(args: { host: HostInputDto }): Promise<HostConfig>;
  updateHost(args: { id: string; patch: HostPatchDto }): Promise<HostConfig>;
  removeHost(args: { id: string }): Promise<void>;
  answerSshPrompt(args: SshPromptAnswer): Promise<void>;
}

export const HOSTS_REQUESTS = [
  'listHosts',
  'addHost',
  'updateHost',
  'removeHost',
  'answerSshPrompt',
] as const satisfies readonly (keyof HostsRequests)[];

export interface HostsEvents {
  sshPrompt: SshPromptEvent;
  /** The question was answered (maybe in another window) or timed out: close its dialog. */
  sshPromptClosed: { promptId: string };
  /** A problem in ssh config or known_hosts that did not stop the connection (file and line). */
  sshWarning: { message: string; file?: string; line?: number };
}

export const HOSTS_EVENTS = [
  'sshPrompt',
  'sshPromptClosed',
  'sshWarning',
] as const satisfies readonly (keyof HostsEvents)[];
