// What the SSH layer asks the operator, and where it keeps secrets. The core has no UI: shells implement these
// (Electron dialogs, browser-mode events, the CLI's TTY) and inject them into createSshResolver().
import { SshError } from './errors';

export interface HostKeyPromptInfo {
  /** The host as the operator named it (alias or host name), for the dialog title. */
  label: string;
  /** Host name and port the key is recorded under (HostKeyAlias when set). */
  host: string;
  port: number;
  /** Key type as the server sent it, e.g. ssh-ed25519. */
  keyType: string;
  /** `SHA256:` + unpadded base64, exactly as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  /** The file the key is appended to on accept. */
  knownHostsFile: string;
  /** Keys of other types already known for this host (the server offered a type we have no record of). */
  otherKnownKeys: Array<{ keyType: string; fingerprint: string; file: string; line: number }>;
  /** Set when this host is a ProxyJump hop on the way to `label`'s target. */
  jumpFor?: string;
}

export interface PassphrasePromptInfo {
  label: string;
  keyFile: string;
  /** 1-based; OpenSSH gives three tries. */
  attempt: number;
  maxAttempts: number;
  /** The previous answer (or the remembered one) did not decrypt the key. */
  previousWasWrong: boolean;
  /** A SecretStore is configured, so the answer may be returned with `remember: true`. */
  canRemember: boolean;
}

export interface PasswordPromptInfo {
  label: string;
  user: string;
  host: string;
  port: number;
  kind: 'password' | 'keyboard-interactive';
  /** For keyboard-interactive: the server's prompt text (e.g. "Verification code:") and whether to echo input. */
  prompt: string;
  echo: boolean;
  /** Keyboard-interactive round name and instructions, shown above the prompt when non-empty. */
  name?: string;
  instructions?: string;
}

/** A passphrase answer; returning a plain string means "use it for this session only". */
export interface PassphraseAnswer {
  passphrase: string;
  remember: boolean;
}

export interface SshPrompts {
  /** Unknown host key: true to trust it (it is then appended to known_hosts), false to refuse. */
  hostKey(info: HostKeyPromptInfo): Promise<boolean>;
  /** Passphrase for an encrypted key file; null when the operator cancels. */
  passphrase(info: PassphrasePromptInfo): Promise<string | PassphraseAnswer | null>;
  /** Password or keyboard-interactive answer; null when the operator cancels. */
  password(info: PasswordPromptInfo): Promise<string | null>;
}

/** Persistent secret storage for "remember this passphrase" (Electron safeStorage in the desktop shell). */
export interface SecretStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Session-only secrets where the shell has no keychain (browser mode, CLI): kept in memory, never on disk. */
export function memorySecrets(): SecretStore {
  const m = new Map<string, string>();
  return {
    get: async (k) => m.get(k) ?? null,
    set: async (k, v) => void m.set(k, v),
    delete: async (k) => void m.delete(k),
  };
}

/** Prompts for contexts that cannot ask anyone (CLI without a TTY, default resolver): every question is refused. */
export const refusingPrompts: SshPrompts = {
  hostKey: async (info) => {
    throw new SshError({
      code: 'host-key-unknown',
      message: `the host key of ${info.host}:${info.port} (${info.keyType} ${info.fingerprint}) is not in known_hosts, and nobody can be asked to confirm it here`,
      hint: `Verify the fingerprint with the host's administrator, then run \`ssh ${info.port === 22 ? '' : `-p ${info.port} `}${info.host}\` once in a terminal to record it.`,
    });
  },
  passphrase: async (info) => {
    throw new SshError({
      code: 'passphrase',
      message: `key file ${info.keyFile} is encrypted, and nobody can be asked for its passphrase here`,
      hint: `Add the key to ssh-agent first: ssh-add ${info.keyFile}`,
    });
  },
  password: async (info) => {
    throw new SshError({
      code: 'auth-failed',
      message: `${info.label} asks for a password, and nobody can be asked for it here`,
      hint: 'Use key authentication (IdentityFile or ssh-agent) for this host.',
    });
  },
};

/** Bounds how long a question may stay open: a forgotten dialog must not hold a connection attempt forever. */
export async function askWithin<T>(what: string, timeoutMs: number, ask: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new SshError({
            code: 'prompt-timeout',
            message: `no answer to "${what}" within ${Math.round(timeoutMs / 1000)} s`,
            hint: 'Connect again when you are ready to answer.',
          }),
        ),
      timeoutMs,
    );
    timer.unref?.();
  });
  try {
    return await Promise.race([ask(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
