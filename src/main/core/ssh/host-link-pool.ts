// One SSH link per host, shared by everything that runs there: a fleet's routers and workers on one host use
// one connection, however many of them discovery or a status probe touches. Links are keyed by the host's
// spec (alias or user@host:port); asking twice while the first connect is in flight joins it. A host that
// cannot be reached is answered with the connection's own explanation, the same answer until closeAll(): one
// command's view of the fleet does not retry a host halfway through.
import type { ConnectConfig } from 'ssh2';
import type { HostConfig } from '@shared/domain';
import { SshConnection } from './connection';

export interface HostLinkPoolOptions {
  /** Produces the ssh2 config for a host (the app's resolver: ssh config, agent, keys, known_hosts). */
  resolve: (host: HostConfig) => Promise<ConnectConfig>;
  /** How long one host may take to connect before it counts as unreachable. Default 30 s. */
  connectTimeoutMs?: number;
  /** Builds the connection (tests count them); default a plain SshConnection. */
  connect?: (host: HostConfig, configure: () => Promise<ConnectConfig>) => SshConnection;
}

export class HostUnreachable extends Error {
  constructor(
    readonly host: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'HostUnreachable';
  }
}

export class HostLinkPool {
  private readonly links = new Map<string, { conn: SshConnection; ready: Promise<SshConnection> }>();

  constructor(private readonly opts: HostLinkPoolOptions) {}

  /** The connected link to `host`; rejects with HostUnreachable naming why. */
  get(host: HostConfig): Promise<SshConnection> {
    const key = host.id;
    const have = this.links.get(key);
    if (have) return have.ready;
    const configure = (): Promise<ConnectConfig> => this.opts.resolve(host);
    const conn =
      this.opts.connect?.(host, configure) ??
      new SshConnection({ label: host.alias ?? host.label, configure });
    const ready = this.open(conn, host);
    this.links.set(key, { conn, ready });
    return ready;
  }

  /** Hands the pool a link that is already up (the host the operator connected to), so it is not opened twice. */
  adopt(host: HostConfig, conn: SshConnection): void {
    if (this.links.has(host.id)) return;
    this.links.set(host.id, { conn, ready: Promise.resolve(conn) });
  }

  /**
   * Closes every link but those of `keep`, which now belong to whoever asked for them (a deployment that
   * watches them); the pool forgets all links either way.
   */
  async closeExcept(keep: ReadonlySet<string>): Promise<void> {
    const drop = [...this.links].filter(([id]) => !keep.has(id)).map(([, l]) => l);
    this.links.clear();
    // A link still connecting is stopped once its attempt settles; a failed one was stopped already.
    await Promise.all(
      drop.map((l) =>
        l.ready.then(
          (c) => c.stop(),
          () => undefined,
        ),
      ),
    );
  }

  /** Hosts with a link, connected or not. */
  get size(): number {
    return this.links.size;
  }

  private async open(conn: SshConnection, host: HostConfig): Promise<SshConnection> {
    await conn.start();
    try {
      // start() returns after the first attempt; a failed first attempt is the answer, not a reason to wait.
      const first = conn.status;
      if (first.state === 'reconnecting')
        throw new HostUnreachable(host.label, `cannot connect to ${host.label}: ${first.lastError}`);
      await conn.waitConnected(this.opts.connectTimeoutMs ?? 30_000);
      return conn;
    } catch (err) {
      await conn.stop();
      if (err instanceof HostUnreachable) throw err;
      const e = err as Error & { explained?: { message: string; hint?: string }; hint?: string };
      throw new HostUnreachable(host.label, e.explained?.message ?? e.message, e.explained?.hint ?? e.hint);
    }
  }

  async closeAll(): Promise<void> {
    const all = [...this.links.values()];
    this.links.clear();
    await Promise.all(all.map((l) => l.conn.stop()));
  }
}
