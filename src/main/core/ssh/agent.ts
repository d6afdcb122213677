// ssh-agent access: where the agent is (IdentityAgent, $SSH_AUTH_SOCK, Pageant on Windows), what it holds
// (asked before connecting, so "agent absent" and "agent empty" get their own messages), and an agent view
// limited to chosen identities for IdentitiesOnly.
import { BaseAgent, createAgent, type ParsedKey, type SigningRequestOptions, type SignCallback } from 'ssh2';

export type AgentProbe =
  | { ok: true; where: string; keys: ParsedKey[] }
  | { ok: false; where: string; reason: 'absent' | 'unreachable'; message: string };

/** The agent to use, or null with the reason there is none. */
export function agentLocation(
  identityAgent: string | null | undefined,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): { path: string; where: string } | { path: null; why: string } {
  if (identityAgent === null) return { path: null, why: 'IdentityAgent none is set for this host' };
  if (identityAgent !== undefined) return { path: identityAgent, where: `IdentityAgent ${identityAgent}` };
  const sock = env.SSH_AUTH_SOCK;
  if (sock) return { path: sock, where: `SSH_AUTH_SOCK=${sock}` };
  // Windows has no SSH_AUTH_SOCK convention; Pageant is the agent most Windows SSH users run.
  if (platform === 'win32') return { path: 'pageant', where: 'Pageant' };
  return { path: null, why: 'SSH_AUTH_SOCK is not set (no ssh-agent in this session)' };
}

export function probeAgent(agentPath: string, where: string, timeoutMs = 3000): Promise<AgentProbe> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: AgentProbe): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(
      () =>
        finish({
          ok: false,
          where,
          reason: 'unreachable',
          message: `ssh-agent (${where}) did not answer within ${timeoutMs / 1000} s`,
        }),
      timeoutMs,
    );
    timer.unref?.();
    let agent: BaseAgent;
    try {
      agent = createAgent(agentPath);
    } catch (err) {
      finish({
        ok: false,
        where,
        reason: 'unreachable',
        message: `ssh-agent (${where}): ${(err as Error).message}`,
      });
      return;
    }
    agent.getIdentities((err, keys) => {
      if (err)
        finish({
          ok: false,
          where,
          reason: 'unreachable',
          message: `ssh-agent is not reachable (${where}): ${err.message}`,
        });
      else finish({ ok: true, where, keys: (keys ?? []).filter(isParsedKey) });
    });
  });
}

function isParsedKey(k: unknown): k is ParsedKey {
  return typeof k === 'object' && k !== null && typeof (k as ParsedKey).getPublicSSH === 'function';
}

/** An agent that offers only the listed public keys (IdentitiesOnly yes: only keys from IdentityFile). */
export class FilteredAgent extends BaseAgent<ParsedKey> {
  constructor(
    private readonly inner: BaseAgent,
    private readonly allowed: readonly Buffer[],
  ) {
    super();
  }

  override getIdentities(cb: (err: Error | undefined, keys?: ParsedKey[]) => void): void {
    this.inner.getIdentities((err, keys) => {
      if (err) return cb(err);
      cb(
        undefined,
        (keys ?? []).filter(isParsedKey).filter((k) => this.allowed.some((a) => a.equals(k.getPublicSSH()))),
      );
    });
  }

  override sign(
    pubKey: ParsedKey,
    data: Buffer,
    options: SigningRequestOptions | SignCallback,
    cb?: SignCallback,
  ): void {
    const inner = this.inner as BaseAgent<ParsedKey>;
    if (typeof options === 'function') inner.sign(pubKey, data, options);
    else inner.sign(pubKey, data, options, cb);
  }
}
