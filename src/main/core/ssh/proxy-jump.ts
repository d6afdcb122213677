// ProxyJump: connect hop by hop, each through a `direct-tcpip` channel of the previous one, and hand the last
// channel to the target as its `sock`. Each hop is verified and authenticated as a host of its own (its own
// known_hosts name, keys and prompts). Closing the target's stream closes every hop; a hop dying closes the
// stream, so the target connection notices at once.
import type { Duplex } from 'node:stream';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { explainSshError, SshError, type ExplainedError } from './errors';
import { HandshakeDeadline } from './handshake-deadline';
import { ConfigError } from './ssh-options';

export interface JumpSpec {
  user?: string;
  host: string;
  port?: number;
  raw: string;
}

/** The most hops a chain may have; also stops ProxyJump loops between hosts. */
export const MAX_JUMP_HOPS = 8;

const HOST_RE = /^(?:[A-Za-z0-9_][A-Za-z0-9._%-]*|\[[0-9A-Fa-f:.]+\])$/;

/** Parses a ProxyJump value: `[user@]host[:port]` or `ssh://[user@]host[:port]`, comma-separated. */
export function parseProxyJump(value: string, file?: string, line?: number): JumpSpec[] {
  const specs: JumpSpec[] = [];
  for (const part of value.split(',')) {
    const raw = part.trim();
    const bad = (why: string): never => {
      throw new ConfigError(
        `ProxyJump "${value}": "${raw}" ${why}`,
        file,
        line,
        'Use [user@]host[:port], comma-separated.',
      );
    };
    if (!raw) bad('is empty');
    let rest = raw.startsWith('ssh://') ? raw.slice(6).replace(/\/$/, '') : raw;
    let user: string | undefined;
    const at = rest.lastIndexOf('@');
    if (at >= 0) {
      user = rest.slice(0, at);
      rest = rest.slice(at + 1);
      if (!/^[^\s@:/]{1,64}$/.test(user)) bad('has an invalid user name');
    }
    let host = rest;
    let port: number | undefined;
    const m = /^(.*):(\d{1,5})$/.exec(rest);
    if (m && (m[1].startsWith('[') || !m[1].includes(':'))) {
      host = m[1];
      port = Number(m[2]);
      if (!(port >= 1 && port <= 65535)) bad('has a port outside 1-65535');
    }
    if (!HOST_RE.test(host)) bad('is not a host name');
    specs.push({ user, host: host.replace(/^\[(.*)\]$/, '$1'), port, raw });
  }
  return specs;
}

export interface HopPlan {
  label: string;
  /** Where the previous hop (or we, for the first) must connect to reach this hop. */
  hostname: string;
  port: number;
  config: ConnectConfig;
  /** Turns this hop's ssh2 errors into specific explanations (auth, host key). */
  explain: (err: Error) => ExplainedError | undefined;
  handshakeTimeoutMs: number;
}

export interface JumpChain {
  sock: Duplex;
  clients: Client[];
  close(): void;
}

/** Connects every hop in order and opens the final channel to `target`. Rejects with an explained SshError. */
export async function openJumpChain(
  hops: HopPlan[],
  target: { hostname: string; port: number; label: string },
): Promise<JumpChain> {
  const clients: Client[] = [];
  const closeAll = (): void => {
    for (const c of clients.slice().reverse()) {
      c.end();
      c.destroy();
    }
  };
  try {
    let sock: ClientChannel | undefined;
    for (let i = 0; i < hops.length; i++) {
      const hop = hops[i];
      const client = await connectHop(hop, sock);
      clients.push(client);
      const next = i + 1 < hops.length ? hops[i + 1] : target;
      sock = await forward(client, hop.label, next.hostname, next.port, next.label);
    }
    const channel = sock!;
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      channel.destroy();
      closeAll();
    };
    channel.on('close', close);
    for (const c of clients) c.on('close', close);
    return { sock: channel, clients, close };
  } catch (err) {
    closeAll();
    throw err;
  }
}

function connectHop(hop: HopPlan, sock: ClientChannel | undefined): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let lastError: ExplainedError | null = null;
    let connected = false;
    let settled = false;
    let expired = false;
    const deadline = new HandshakeDeadline(hop.handshakeTimeoutMs, () => {
      expired = true;
      lastError = {
        code: 'timeout',
        message: connected
          ? `SSH handshake with jump host ${hop.label} did not complete within ${hop.handshakeTimeoutMs / 1000} s`
          : `could not reach jump host ${hop.label} (${hop.hostname}:${hop.port}) within ${hop.handshakeTimeoutMs / 1000} s`,
        hint: 'Check the network/VPN and that the jump host is up.',
      };
      client.destroy();
    });
    client.on('connect', () => {
      connected = true;
    });
    client.on('ready', () => {
      settled = true;
      deadline.cancel();
      resolve(client);
    });
    client.on('error', (err) => {
      if (!expired) lastError = hop.explain(err) ?? explainSshError(err, `jump host ${hop.label}`);
    });
    client.on('close', () => {
      deadline.cancel();
      if (settled) return;
      settled = true;
      reject(
        new SshError(
          lastError ?? { code: 'jump', message: `jump host ${hop.label} closed the connection during login` },
        ),
      );
    });
    try {
      client.connect({ ...deadline.wrap(hop.config), ...(sock ? { sock } : {}), readyTimeout: 0 });
      deadline.start();
    } catch (err) {
      deadline.cancel();
      settled = true;
      reject(new SshError(explainSshError(err, `jump host ${hop.label}`)));
    }
  });
}

function forward(
  client: Client,
  hopLabel: string,
  host: string,
  port: number,
  nextLabel: string,
): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, host, port, (err, channel) => {
      if (!err) return resolve(channel);
      // RFC 4254 §5.1 reason 1: SSH_OPEN_ADMINISTRATIVELY_PROHIBITED (sshd says only "open failed").
      const prohibited = (err as Error & { reason?: number }).reason === 1 || /prohibited/i.test(err.message);
      reject(
        new SshError({
          code: 'jump',
          message: `jump host ${hopLabel} could not open a connection to ${nextLabel} (${host}:${port}): ${err.message}`,
          hint: prohibited
            ? `sshd on ${hopLabel} forbids forwarding: it needs AllowTcpForwarding yes (or local) for your user.`
            : `Check that ${host}:${port} is reachable from ${hopLabel} and sshd is running there.`,
        }),
      );
    });
  });
}
