// Private key files for publickey authentication, checked like OpenSSH before use: missing, unreadable,
// readable by others (refused, with the chmod to run), not a private key, or encrypted — then the passphrase is
// asked (three tries), kept in memory for reconnects, and optionally remembered in the SecretStore. A wrong
// passphrase is detected by ssh2's own parser before any connection is made.
import { promises as fs } from 'node:fs';
import { utils, type ParsedKey } from 'ssh2';
import { fingerprintSha256 } from './known-hosts';
import { askWithin, type SecretStore, type SshPrompts } from './prompts';

export interface IdentityKey {
  file: string;
  key: ParsedKey;
  fingerprint: string;
}

export type KeyProblemReason =
  'missing' | 'unreadable' | 'permissions' | 'format' | 'public' | 'wrong-passphrase' | 'cancelled';

export interface KeyProblem {
  file: string;
  /** Error code family: bad-key for the file itself, passphrase for decryption. */
  code: 'bad-key' | 'passphrase';
  reason: KeyProblemReason;
  message: string;
  hint?: string;
}

export interface KeyLoaderDeps {
  prompts: SshPrompts;
  secrets?: SecretStore;
  promptTimeoutMs: number;
  platform?: NodeJS.Platform;
  /** The effective uid, for OpenSSH's "owned by you and accessible by others" check; null skips it. */
  uid?: number | null;
}

export const MAX_PASSPHRASE_ATTEMPTS = 3;
const MAX_KEY_BYTES = 64 * 1024;
const WRONG_PASSPHRASE = /bad passphrase|integrity check failed|decrypt/i;
const NEEDS_PASSPHRASE = /no passphrase given/i;

export function secretKeyFor(file: string): string {
  return `ssh-key-passphrase:${file}`;
}

export function isKeyProblem(x: object | null): x is KeyProblem {
  return x !== null && 'reason' in x && 'file' in x;
}

export class KeyLoader {
  private readonly parsed = new Map<string, { mtimeMs: number; size: number; key: IdentityKey }>();
  private readonly passphrases = new Map<string, string>();
  private readonly inflight = new Map<string, Promise<IdentityKey | KeyProblem | null>>();

  constructor(private readonly deps: KeyLoaderDeps) {}

  /**
   * Loads a key file. null: a default key name that does not exist (OpenSSH skips those silently).
   * Concurrent loads of one file share one passphrase prompt.
   */
  load(file: string, explicit: boolean, label: string): Promise<IdentityKey | KeyProblem | null> {
    const running = this.inflight.get(file);
    if (running) return running;
    const p = this.loadNow(file, explicit, label).finally(() => this.inflight.delete(file));
    this.inflight.set(file, p);
    return p;
  }

  /** Forget passphrases and decrypted keys (e.g. when the operator locks the app). */
  forget(): void {
    this.parsed.clear();
    this.passphrases.clear();
  }

  private async loadNow(
    file: string,
    explicit: boolean,
    label: string,
  ): Promise<IdentityKey | KeyProblem | null> {
    let st;
    try {
      st = await fs.stat(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        if (!explicit) return null;
        return problem(
          file,
          'bad-key',
          'missing',
          `key file ${file} does not exist`,
          'Fix IdentityFile (or the key file set for this host).',
        );
      }
      return problem(
        file,
        'bad-key',
        'unreadable',
        `cannot read key file ${file}: ${(err as Error).message}`,
      );
    }
    if (!st.isFile()) return problem(file, 'bad-key', 'format', `key file ${file} is not a regular file`);
    const platform = this.deps.platform ?? process.platform;
    const uid = this.deps.uid === undefined ? (process.getuid?.() ?? null) : this.deps.uid;
    if (platform !== 'win32' && uid !== null && st.uid === uid && (st.mode & 0o077) !== 0) {
      const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
      return problem(
        file,
        'bad-key',
        'permissions',
        `permissions ${mode} for private key ${file} are too open: it must not be accessible by others, so it is ignored (as OpenSSH does)`,
        `Run: chmod 600 "${file}"`,
      );
    }
    if (st.size > MAX_KEY_BYTES)
      return problem(
        file,
        'bad-key',
        'format',
        `key file ${file} is ${st.size} bytes; that is not a private key`,
      );
    const cached = this.parsed.get(file);
    if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) return cached.key;

    let data: Buffer;
    try {
      data = await fs.readFile(file);
    } catch (err) {
      return problem(
        file,
        'bad-key',
        'unreadable',
        `cannot read key file ${file}: ${(err as Error).message}`,
      );
    }
    const plain = utils.parseKey(data);
    let key: ParsedKey;
    if (plain instanceof Error) {
      if (!NEEDS_PASSPHRASE.test(plain.message)) return formatProblem(file, plain.message);
      const decrypted = await this.decrypt(file, data, label);
      if (isKeyProblem(decrypted)) return decrypted;
      key = decrypted;
    } else key = Array.isArray(plain) ? plain[0] : plain;
    if (!key.isPrivateKey())
      return problem(
        file,
        'bad-key',
        'public',
        `${file} is a public key; IdentityFile must name the private key`,
        'Use the file name without .pub.',
      );
    const identity: IdentityKey = { file, key, fingerprint: fingerprintSha256(key.getPublicSSH()) };
    this.parsed.set(file, { mtimeMs: st.mtimeMs, size: st.size, key: identity });
    return identity;
  }

  private async decrypt(file: string, data: Buffer, label: string): Promise<ParsedKey | KeyProblem> {
    const tryWith = (pass: string): ParsedKey | 'wrong' | KeyProblem => {
      const r = utils.parseKey(data, pass);
      if (r instanceof Error)
        return WRONG_PASSPHRASE.test(r.message) ? 'wrong' : formatProblem(file, r.message);
      return Array.isArray(r) ? r[0] : r;
    };
    let previousWasWrong = false;
    const inMemory = this.passphrases.get(file);
    if (inMemory !== undefined) {
      const r = tryWith(inMemory);
      if (r !== 'wrong') return r;
      this.passphrases.delete(file); // the key file was re-encrypted since
      previousWasWrong = true;
    }
    const secrets = this.deps.secrets;
    if (secrets) {
      const stored = await secrets.get(secretKeyFor(file));
      if (stored !== null) {
        const r = tryWith(stored);
        if (r !== 'wrong') {
          if (!isKeyProblem(r)) this.passphrases.set(file, stored);
          return r;
        }
        await secrets.delete(secretKeyFor(file));
        previousWasWrong = true;
      }
    }
    for (let attempt = 1; attempt <= MAX_PASSPHRASE_ATTEMPTS; attempt++) {
      const answer = await askWithin(`passphrase for ${file}`, this.deps.promptTimeoutMs, () =>
        this.deps.prompts.passphrase({
          label,
          keyFile: file,
          attempt,
          maxAttempts: MAX_PASSPHRASE_ATTEMPTS,
          previousWasWrong,
          canRemember: secrets !== undefined,
        }),
      );
      if (answer === null)
        return problem(
          file,
          'passphrase',
          'cancelled',
          `no passphrase was given for encrypted key ${file}`,
          `Connect again and enter it, or load the key into ssh-agent: ssh-add "${file}"`,
        );
      const pass = typeof answer === 'string' ? answer : answer.passphrase;
      const r = tryWith(pass);
      if (r === 'wrong') {
        previousWasWrong = true;
        continue;
      }
      if (!isKeyProblem(r)) {
        this.passphrases.set(file, pass);
        if (secrets && typeof answer !== 'string' && answer.remember)
          await secrets.set(secretKeyFor(file), pass);
      }
      return r;
    }
    return problem(
      file,
      'passphrase',
      'wrong-passphrase',
      `wrong passphrase for key ${file} (${MAX_PASSPHRASE_ATTEMPTS} attempts)`,
      `Check the passphrase (ssh-keygen -y -f "${file}" tests it), or load the key into ssh-agent with ssh-add.`,
    );
  }
}

/** The public key from `<file>.pub`, used to tell whether ssh-agent already holds a key file's identity. */
export async function readPublicKey(file: string): Promise<Buffer | null> {
  try {
    const text = await fs.readFile(`${file}.pub`, 'utf8');
    const parsed = utils.parseKey(text);
    if (parsed instanceof Error) return null;
    return (Array.isArray(parsed) ? parsed[0] : parsed).getPublicSSH();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return null; // no .pub: fine, decrypt instead
    throw err;
  }
}

function problem(
  file: string,
  code: KeyProblem['code'],
  reason: KeyProblemReason,
  message: string,
  hint?: string,
): KeyProblem {
  return { file, code, reason, message, hint };
}

function formatProblem(file: string, detail: string): KeyProblem {
  return problem(
    file,
    'bad-key',
    'format',
    `${file} is not a private key PD Console can use (${detail})`,
    'IdentityFile must name a private key in OpenSSH, PEM or PuTTY format; security-key (sk-) keys are not supported.',
  );
}
