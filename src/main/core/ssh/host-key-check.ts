// The hostVerifier for one connection: checks the presented key against known_hosts (read fresh for every
// attempt), refuses revoked and changed keys with OpenSSH's information, and asks the operator about unknown
// keys, recording accepted ones. It never accepts a key nobody verified.
import type { HostVerifier } from 'ssh2';
import type { ExplainedError } from './errors';
import {
  appendKnownHost,
  checkHostKey,
  fingerprintSha256,
  formatKnownHostsLine,
  keyTypeLabel,
  keyTypeOfBlob,
  knownHostsName,
  KnownHostsUnreadable,
  loadKnownHosts,
} from './known-hosts';
import { askWithin, type HostKeyPromptInfo, type SshPrompts } from './prompts';
import type { StrictHostKeyChecking } from './ssh-options';

export interface HostKeyCheckOptions {
  /** How the operator named the host (for messages). */
  label: string;
  /** Name and port the key is recorded under (HostKeyAlias or HostName). */
  host: string;
  port: number;
  userKnownHostsFiles: string[];
  globalKnownHostsFiles: string[];
  hashKnownHosts: boolean;
  strict: StrictHostKeyChecking;
  prompts: SshPrompts;
  promptTimeoutMs: number;
  jumpFor?: string;
  /** Receives known_hosts lines that do not parse (every attempt re-reads the files; dedupe upstream). */
  warn: (message: string) => void;
}

/** What the verifier decided; read by the connection to explain a refused handshake precisely. */
export interface HostKeyOutcome {
  failure?: ExplainedError;
  accepted?: { fingerprint: string; recordedIn?: string };
}

export function createHostVerifier(opts: HostKeyCheckOptions, outcome: HostKeyOutcome): HostVerifier {
  return (key: Buffer, verify: (ok: boolean) => void) => {
    check(opts, key)
      .then((r) => {
        if (r.ok) outcome.accepted = r.accepted;
        else outcome.failure = r.failure;
        verify(r.ok);
      })
      .catch((err: unknown) => {
        // Anything unexpected while verifying (a prompt that threw, a write that failed) refuses the key.
        const e = err as { explained?: ExplainedError; message?: string };
        outcome.failure = e.explained ?? {
          code: 'host-key-rejected',
          message: `could not verify the host key of ${opts.label}: ${e.message ?? String(err)}`,
        };
        verify(false);
      });
  };
}

type CheckResult =
  { ok: true; accepted: HostKeyOutcome['accepted'] } | { ok: false; failure: ExplainedError };

async function check(opts: HostKeyCheckOptions, key: Buffer): Promise<CheckResult> {
  const name = knownHostsName(opts.host, opts.port);
  const keyType = keyTypeOfBlob(key) ?? 'unknown';
  const fingerprint = fingerprintSha256(key);
  const where = opts.jumpFor ? `jump host ${opts.label} (on the way to ${opts.jumpFor})` : opts.label;
  const files = [...opts.userKnownHostsFiles, ...opts.globalKnownHostsFiles];
  let data;
  try {
    data = await loadKnownHosts(files);
  } catch (err) {
    if (!(err instanceof KnownHostsUnreadable)) throw err;
    return {
      ok: false,
      failure: {
        code: 'known-hosts-unreadable',
        message: `cannot verify the host key of ${where}: ${err.message}`,
        hint: `Fix the permissions of ${err.file} (it must be readable by you); PD Console does not connect to a host it cannot verify.`,
      },
    };
  }
  for (const w of data.warnings) opts.warn(w.message);
  const result = checkHostKey(data.entries, name, key);
  const label = keyTypeLabel(keyType);
  if (result.status === 'ok') return { ok: true, accepted: { fingerprint } };
  if (result.status === 'revoked')
    return {
      ok: false,
      failure: {
        code: 'host-key-revoked',
        message: `the ${label} host key of ${where} (${name}, ${fingerprint}) is marked @revoked in ${result.entry.file}:${result.entry.line}; refusing to connect`,
        hint: 'The key was revoked on purpose: ask the host administrator which key the server should present now.',
      },
    };
  if (result.status === 'changed') {
    const first = result.entries[0];
    const old = result.entries.map((e) => `${fingerprintSha256(e.key)} at ${e.file}:${e.line}`).join(', ');
    return {
      ok: false,
      failure: {
        code: 'host-key-changed',
        message:
          `REMOTE HOST IDENTIFICATION HAS CHANGED for ${where} (${name}): the server sent ${label} key ${fingerprint}, ` +
          `but known_hosts has ${old}. Someone could be eavesdropping on you right now (man-in-the-middle attack), ` +
          `or the host key has just been changed. Offending ${label} key in ${first.file}:${first.line}.`,
        hint:
          `Ask the host administrator whether the key changed. If it did, remove the old entry with ` +
          `ssh-keygen -f "${first.file}" -R "${name}" and connect again to review the new key.`,
      },
    };
  }

  if (opts.strict === 'yes')
    return {
      ok: false,
      failure: {
        code: 'host-key-unknown',
        message: `${where} (${name}) is not in known_hosts and StrictHostKeyChecking is yes: its ${label} key ${fingerprint} was not accepted`,
        hint: `Verify the fingerprint with the host's administrator and add the key to ${opts.userKnownHostsFiles[0] ?? 'your known_hosts'} (e.g. by connecting once with ssh).`,
      },
    };
  const target = opts.userKnownHostsFiles[0];
  if (!target)
    return {
      ok: false,
      failure: {
        code: 'host-key-unknown',
        message: `${where} (${name}) presented an unknown ${label} key ${fingerprint}, and UserKnownHostsFile is none, so it could not be recorded`,
        hint: 'Set UserKnownHostsFile for this host, or add the key to the global known_hosts file.',
      },
    };
  // StrictHostKeyChecking no/accept-new would accept silently in OpenSSH; PD Console always asks.
  const info: HostKeyPromptInfo = {
    label: opts.label,
    host: opts.host,
    port: opts.port,
    keyType,
    fingerprint,
    knownHostsFile: target,
    otherKnownKeys: result.otherTypes.map((e) => ({
      keyType: e.keyType,
      fingerprint: fingerprintSha256(e.key),
      file: e.file,
      line: e.line,
    })),
    jumpFor: opts.jumpFor,
  };
  const accepted = await askWithin(`trust the host key of ${name}`, opts.promptTimeoutMs, () =>
    opts.prompts.hostKey(info),
  );
  if (!accepted)
    return {
      ok: false,
      failure: {
        code: 'host-key-rejected',
        message: `you did not trust the ${label} host key ${fingerprint} of ${where} (${name}); not connected`,
        hint: 'Compare the fingerprint with the one the host administrator gives you (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on the host).',
      },
    };
  await appendKnownHost(target, formatKnownHostsLine(name, key, opts.hashKnownHosts));
  return { ok: true, accepted: { fingerprint, recordedIn: target } };
}
