// Turns low-level ssh2/socket errors into messages an operator can act on.

export interface ExplainedError {
  code: string;
  message: string;
  hint?: string;
}

/** Errors that retrying cannot fix: reconnecting would only hammer the host or lock the account. */
export const PERMANENT_CODES = new Set([
  'auth-failed',
  'host-key-rejected',
  'host-key-changed',
  'host-key-unknown',
  'dns',
  'bad-key',
  'passphrase',
  'config',
]);

export function explainSshError(err: unknown, where: string): ExplainedError {
  const e = err as NodeJS.ErrnoException & { level?: string; code?: string; explained?: ExplainedError };
  if (e && typeof e === 'object' && e.explained) return e.explained;
  const msg = e instanceof Error ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return {
      code: 'dns',
      message: `cannot resolve ${where}: DNS lookup failed (${code})`,
      hint: 'Check the host name, your VPN, and HostName in ~/.ssh/config.',
    };
  if (code === 'ECONNREFUSED')
    return {
      code: 'refused',
      message: `${where} refused the connection`,
      hint: 'Is sshd running and listening on that port? Check Port in ~/.ssh/config.',
    };
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
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
      code: 'auth-failed',
      message: `${where}: too many authentication failures`,
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
  return { code: 'ssh', message: `${where}: ${msg}` };
}

/** An Error that carries its explanation, so layers above do not re-guess. */
export class SshError extends Error {
  constructor(readonly explained: ExplainedError) {
    super(explained.message);
    this.name = 'SshError';
  }
}
