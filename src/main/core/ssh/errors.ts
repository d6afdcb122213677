// Turns low-level ssh2/socket errors into messages an operator can act on.

export interface ExplainedError {
  code: string;
  message: string;
  hint?: string;
}

/**
 * Failures that retrying cannot fix, whether or not the host was ever reached: retrying bad credentials
 * hammers the host (and can lock the account), and a host-key problem needs a human decision.
 */
export const PERMANENT_CODES = new Set([
  'auth-failed',
  'auth-too-many',
  'agent-unavailable',
  'agent-empty',
  'passphrase',
  'bad-key',
  'host-key-rejected',
  'host-key-changed',
  'host-key-unknown',
  'host-key-revoked',
  'known-hosts-unreadable',
  'config',
  'unsupported',
]);

/**
 * Failures that are permanent only until the host has been reached once: a name that never resolved is a
 * typo, but after a working session it usually means the VPN or DNS went away for a while.
 */
export const PERMANENT_UNTIL_CONNECTED_CODES = new Set(['dns', 'unknown-host']);

/**
 * A session channel the host refused to open. ssh2 puts RFC 4254's reason code on the error; sshd answers a
 * session past MaxSessions with reason 2 (CONNECT_FAILED) and "open failed", an ssh2 server with reason 1
 * (ADMINISTRATIVELY_PROHIBITED).
 */
export const sessionRefused = (err: unknown): boolean => {
  const reason = (err as { reason?: unknown } | null)?.reason;
  return reason === 1 || reason === 2;
};

export function explainSshError(err: unknown, where: string): ExplainedError {
  const e = err as NodeJS.ErrnoException & {
    level?: string;
    code?: string | number;
    explained?: ExplainedError;
  };
  if (e && typeof e === 'object' && e.explained) return e.explained;
  const msg = e instanceof Error ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'ENOTFOUND')
    return {
      code: 'dns',
      message: `cannot resolve ${where}: no such host name (DNS lookup failed, ${code})`,
      hint: 'Check the host name, HostName in ~/.ssh/config, and whether the name needs your VPN.',
    };
  if (code === 'EAI_AGAIN')
    return {
      code: 'dns',
      message: `cannot resolve ${where}: the DNS server did not answer (${code})`,
      hint: 'Check your network or VPN connection; will retry.',
    };
  if (code === 'ECONNREFUSED')
    return {
      code: 'refused',
      message: `${where} refused the connection`,
      hint: 'Is sshd running and listening on that port? Check Port in ~/.ssh/config.',
    };
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN' || code === 'ENETDOWN')
    return {
      code: 'unreachable',
      message: `${where} is unreachable (${code})`,
      hint: 'Check your network or VPN connection.',
    };
  if (code === 'ECONNRESET' || code === 'EPIPE')
    return { code: 'reset', message: `connection to ${where} was reset`, hint: 'Will retry automatically.' };
  if (code === 'ETIMEDOUT' || /timed out/i.test(msg))
    return {
      code: 'timeout',
      message: `connection to ${where} timed out`,
      hint: 'The host did not answer in time: check the network/VPN; a firewall may be dropping packets.',
    };
  if (/All configured authentication methods failed/i.test(msg))
    return {
      code: 'auth-failed',
      message: `${where} rejected authentication: no configured key, agent identity or password was accepted`,
      hint: 'Check User and IdentityFile, that your public key is in ~/.ssh/authorized_keys on the host, and that ssh-agent holds the key.',
    };
  if (/Too many authentication failures/i.test(msg))
    return {
      code: 'auth-too-many',
      message: `${where}: too many authentication failures (the server closed the connection after MaxAuthTries attempts)`,
      hint: 'ssh-agent offered too many keys before the right one. Set IdentitiesOnly yes and IdentityFile for this host.',
    };
  if (/keepalive|No response from server/i.test(msg))
    return {
      code: 'keepalive',
      message: `${where} stopped answering keepalives: the link is dead`,
      hint: 'Reconnecting automatically. Check the VPN or whether the host went to sleep/rebooted.',
    };
  if (/Host denied|hostVerifier|host key/i.test(msg))
    return { code: 'host-key-rejected', message: `host key of ${where} was not accepted`, hint: msg };
  if (/Channel open failure/i.test(msg) && sessionRefused(err))
    return {
      code: 'session-refused',
      message: `${where} refused a new session channel (${msg.replace(/^\(SSH\) /, '')})`,
      hint: 'sshd allows MaxSessions channels per connection (10 by default) and PD Console uses up to 8. If this keeps happening, MaxSessions is set lower on this host: raise it in /etc/ssh/sshd_config (or a Match block for this user) and reload sshd.',
    };
  if (/Connection lost before handshake/i.test(msg))
    return {
      code: 'reset',
      message: `${where} closed the connection before the SSH handshake`,
      hint: 'sshd may be restarting, overloaded (MaxStartups), or something else is listening on that port.',
    };
  return { code: 'ssh', message: `${where}: ${msg}` };
}

/** An Error that carries its explanation, so layers above do not re-guess. */
export class SshError extends Error {
  constructor(readonly explained: ExplainedError) {
    super(explained.message);
    this.name = 'SshError';
  }

  get code(): string {
    return this.explained.code;
  }
}
