// A simulated host's SSH server (ssh2 Server on its loopback address): publickey auth with the generated
// client key or password "demo"; `exec` runs the command emulation (streaming, so `journalctl -f` follows
// until the channel closes); `direct-tcpip` to the host's ports reaches its in-process HTTP servers (in the
// fleet, to another host's address reaches that host's), other ports are refused like a closed port. It owns its TCP listener so it can cut every connection (network
// blip), refuse new ones while the simulated host reboots, and go silent while the path to it is blackholed
// (the link-down fault: nothing is read or sent, as when packets are dropped, so only the client's keepalives and
// handshake deadline notice).
import net from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { Server, type Connection, type AuthContext, type ServerChannel } from 'ssh2';
import { isLoopbackHost } from '@shared/worker-url';
import { runCommand } from './commands/emulate';
import type { DemoHttpServers } from './http';
import type { DemoKeys } from './keys';
import type { DemoSimulation } from './simulation';
import { asMachine, type DemoMachine } from './machine';
import { DemoChannelLog } from './channel-log';
import { StdinLines } from './stdin-lines';
import { forwardToReal, hasRealForward } from './prometheus-unit';

export const DEMO_PASSWORD = 'demo';
/** OpenSSH's default MaxSessions: session channels (exec) per connection. */
const MAX_SESSIONS = 10;

export interface DemoSshServerOptions {
  /** The host it serves (the single demo host: its simulation). */
  sim: DemoSimulation | DemoMachine;
  keys: DemoKeys;
  /** Login names accepted (the configured user and root). */
  users: ReadonlySet<string>;
  http: DemoHttpServers;
  /** Where it listens. Default 127.0.0.1. */
  address?: string;
  /** HTTP servers a forward to destIP:port reaches (the fleet's network). Default: loopback reaches `http`. */
  route?: (destIP: string, port: number) => DemoHttpServers | null;
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export class DemoSshServer {
  private readonly ssh: Server;
  private readonly listener: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** While blackholed: connections made meanwhile, never answered (the client's handshake deadline ends them). */
  private readonly unanswered = new Set<net.Socket>();
  private blackholed = false;
  private port = 0;
  private closed = false;
  private readonly offNetwork: () => void;
  private readonly sim: DemoMachine;
  private readonly address: string;
  /** Every channel clients opened, for tests and benchmarks that count them. */
  readonly channels = new DemoChannelLog();
  /** Last problem re-listening after a simulated reboot, for diagnosis. */
  lastError: Error | null = null;

  constructor(private readonly opts: DemoSshServerOptions) {
    this.sim = asMachine(opts.sim);
    this.address = opts.address ?? '127.0.0.1';
    this.ssh = new Server(
      { hostKeys: [opts.keys.hostPrivateKey], ident: 'OpenSSH_9.2p1 Debian-2+deb12u5' },
      (client) => this.onClient(client),
    );
    this.listener = net.createServer((sock) => {
      if (this.sim.isDown) return void sock.destroy();
      if (this.blackholed) {
        sock.pause();
        this.unanswered.add(sock);
        sock.once('close', () => this.unanswered.delete(sock));
        sock.on('error', () => sock.destroy());
        return;
      }
      this.sockets.add(sock);
      sock.once('close', () => this.sockets.delete(sock));
      // A client that vanishes mid-handshake must not crash the host.
      sock.on('error', () => sock.destroy());
      this.ssh.injectSocket(sock);
    });
    this.offNetwork = this.sim.onNetwork((e) => {
      if (e.type === 'drop-connections') this.dropAll();
      else if (e.type === 'blackhole') this.blackhole(e.on);
      else this.goDown(e.forMs);
    });
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.listener.once('error', onError);
      this.listener.listen(port, this.address, () => {
        this.listener.off('error', onError);
        resolve();
      });
    });
    const addr = this.listener.address();
    if (!addr || typeof addr === 'string') throw new Error('demo host: the SSH listener has no TCP address');
    this.port = addr.port;
    return this.port;
  }

  /** Abruptly cuts every SSH connection (no SSH disconnect message, as when a network path dies). */
  dropAll(): void {
    for (const s of [...this.sockets, ...this.unanswered]) s.destroy();
    this.sockets.clear();
    this.unanswered.clear();
  }

  /**
   * Blackholes the path (on) or lets it carry traffic again (off). Open connections neither read nor send while
   * it lasts; what they wrote meanwhile goes out when it ends, as TCP retransmits it. Connections made meanwhile
   * were never answered: they are cut when it ends (their clients gave up on them long before).
   */
  private blackhole(on: boolean): void {
    if (on === this.blackholed) return;
    this.blackholed = on;
    for (const s of this.sockets) {
      if (on) {
        s.pause();
        s.cork();
      } else {
        s.uncork();
        s.resume();
      }
    }
    if (!on) {
      for (const s of this.unanswered) s.destroy();
      this.unanswered.clear();
    }
  }

  private goDown(forMs: number): void {
    this.dropAll();
    this.opts.http.destroyAll();
    this.listener.close();
    this.sim.clock.setTimeout(() => void this.comeBack(0), forMs);
  }

  private async comeBack(attempt: number): Promise<void> {
    if (this.closed) return;
    try {
      await this.listen(this.port);
      this.lastError = null;
    } catch (err) {
      this.lastError = err as Error;
      if (attempt < 20) setTimeout(() => void this.comeBack(attempt + 1), 100 * (attempt + 1)).unref();
      else
        process.emitWarning(
          `demo host: could not listen on ${this.address}:${this.port} again after the simulated reboot: ${this.lastError.message}`,
        );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.offNetwork();
    this.dropAll();
    await new Promise<void>((resolve) =>
      this.listener.listening ? this.listener.close(() => resolve()) : resolve(),
    );
  }

  private onClient(client: Connection): void {
    let username = '';
    let sessions = 0;
    client.on('error', () => client.end());
    client.on('authentication', (ctx: AuthContext) => {
      username = ctx.username;
      if (!this.opts.users.has(ctx.username)) return ctx.reject(['publickey', 'password']);
      if (ctx.method === 'password') {
        if (ctx.password === DEMO_PASSWORD) return ctx.accept();
        return ctx.reject(['publickey', 'password']);
      }
      if (ctx.method === 'publickey') {
        const want = this.opts.keys.clientPublic;
        if (ctx.key.algo !== want.type || !sameBytes(ctx.key.data, want.getPublicSSH()))
          return ctx.reject(['publickey', 'password']);
        if (!ctx.signature || !ctx.blob) return ctx.accept();
        if (want.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true) return ctx.accept();
        return ctx.reject(['publickey', 'password']);
      }
      ctx.reject(['publickey', 'password']);
    });
    client.on('ready', () => {
      this.channels.login();
      client.on('session', (accept, reject) => {
        if (sessions >= MAX_SESSIONS) return reject();
        sessions++;
        const session = accept();
        let released = false;
        const release = (): void => {
          if (!released) sessions--;
          released = true;
        };
        session.on('pty', (ok) => ok?.());
        session.on('env', (ok) => ok?.());
        session.on('window-change', (ok) => ok?.());
        session.on('shell', (_ok, no) => {
          no?.();
          release();
        });
        session.on('subsystem', (_ok, no) => {
          no?.();
          release();
        });
        session.on('sftp', (_ok, no) => {
          no?.();
          release();
        });
        session.on('exec', (ok, _no, info) => {
          const channel = ok();
          this.channels.exec(info.command);
          const kind = `exec ${/^\S+/.exec(info.command)?.[0] ?? '?'}`;
          this.channels.channelOpened(kind);
          channel.once('close', () => this.channels.channelClosed(kind));
          this.exec(channel, info.command, username).finally(release);
        });
        session.on('close', release);
      });
      client.on('tcpip', (accept, reject, info) => {
        const port = info.destPort;
        if (!this.opts.route && isLoopbackHost(info.destIP) && hasRealForward(this.sim, port)) {
          this.channels.tcpip();
          forwardToReal(this.sim, port, accept());
          return;
        }
        const http = this.opts.route
          ? this.opts.route(info.destIP, port)
          : isLoopbackHost(info.destIP)
            ? this.opts.http
            : null;
        if (!http || !http.isOpen(port)) return reject();
        const channel = accept();
        this.channels.tcpip();
        if (!http.connect(port, channel)) return void channel.destroy();
        // Counted only once the HTTP server has the stream: with the listener added before, the fleet CLI status
        // saw its link go stale (test/demo/fleet-app.test.ts) — why is not understood yet.
        const kind = `tcpip ${info.destIP}:${port}`;
        this.channels.channelOpened(kind);
        channel.once('close', () => this.channels.channelClosed(kind));
      });
    });
  }

  private async exec(channel: ServerChannel, command: string, user: string): Promise<void> {
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    // Read stdin always: a shell takes its commands from it, and draining it lets the channel reach 'end' and so
    // 'close' when the client closes it.
    const stdin = new StdinLines((line) => this.channels.stdinLine(line));
    channel.on('data', (d: Buffer) => stdin.push(d));
    channel.once('end', () => stdin.end());
    channel.once('close', () => stdin.end());
    channel.once('close', abort);
    channel.on('error', abort);
    let code: number;
    try {
      code = await runCommand(this.opts.sim, command, user, {
        out: (c) => {
          if (!channel.destroyed) channel.write(c);
        },
        err: (c) => {
          if (!channel.destroyed) channel.stderr.write(c);
        },
        signal: controller.signal,
        canFollow: true,
        stdin,
      });
    } catch (err) {
      code = 1;
      if (!channel.destroyed)
        channel.stderr.write(
          `demo host: internal error running "${command}": ${(err as Error).stack ?? String(err)}\n`,
        );
    }
    channel.off('close', abort);
    if (channel.destroyed || controller.signal.aborted) return;
    channel.exit(code);
    channel.end();
  }
}
