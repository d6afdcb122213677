// One SSH connection per host that carries everything: commands over `exec` (bounded by a semaphore), the
// periodic reads through persistent shells (`execInShell`), long-lived commands such as a journal follow on
// channels of their own (`openStream`, counted by the same semaphore), HTTP scrapes over `forwardOut` with a
// keep-alive agent. It reconnects by itself with exponential backoff and jitter, and its status is never
// optimistic: it says `connected` only after the handshake, and drops to `reconnecting` the moment ssh2 reports
// the link closed or keepalives go unanswered (keepalive every 10 s, 2 unanswered → dead within 30 s, unless
// ServerAliveInterval/CountMax say otherwise).
// Credentials and host-key refusals are not retried: that would hammer the host and cannot succeed.
import { EventEmitter } from 'node:events';
import { Client, type ConnectConfig, type ClientChannel } from 'ssh2';
import type { ConnectionStatus } from '@shared/domain';
import { systemClock, type Clock, type ClockTimer } from '../clock';
import { Semaphore } from './semaphore';
import { ForwardingAgent } from './http-agent';
import {
  explainSshError,
  PERMANENT_CODES,
  PERMANENT_UNTIL_CONNECTED_CODES,
  SshError,
  type ExplainedError,
} from './errors';
import { HandshakeDeadline } from './handshake-deadline';
import { hasDiagnostics } from './diagnostics';
import { CommandShell, type CommandShellStats } from './command-shell';

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal?: string;
}

export interface ExecOptions {
  /** Real-time limit; the command's channel is closed when it passes. */
  timeoutMs?: number;
  /** Output cap per stream; past it the channel is closed and the call fails. */
  maxBytes?: number;
}

export interface SshConnectionOptions {
  /** Human name used in every message: the alias or user@host:port. */
  label: string;
  /** Produces the ssh2 config for each attempt (re-resolves keys, agent, jump hosts). */
  configure: () => Promise<ConnectConfig>;
  clock?: Clock;
  /** At most this many concurrent exec channels; OpenSSH's MaxSessions defaults to 10. */
  maxSessions?: number;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  readyTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Closes the connection when it goes quiet for this long without any successful traffic. */
  staleAfterMs?: number;
}

/** Where a long-lived command's output goes (see `openStream`). */
export interface StreamHandlers {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  /** The channel is gone: the command exited (its code or signal) or the link dropped (both null). */
  closed(exitCode: number | null, signal: string | null): void;
}

/** A command that keeps running on its own channel: a persistent shell, a journal follow. */
export interface CommandStream {
  /** To the command's stdin. */
  write(data: string): void;
  /** Ends the command (TERM where the server honours signal requests) and closes its channel. */
  close(): void;
}

interface Events {
  status: [ConnectionStatus];
  connected: [];
}

const DEFAULT_EXEC_MAX_BYTES = 8 * 1024 * 1024;

export class SshConnection extends EventEmitter<Events> {
  private client: Client | null = null;
  private agent: ForwardingAgent | null = null;
  private readonly sessions: Semaphore;
  private readonly clock: Clock;
  private current: ConnectionStatus = { state: 'idle' };
  /** Consecutive failed attempts since the last successful login. */
  private failures = 0;
  /** Bumped per attempt; an attempt that finds it changed was superseded (reconnectNow, stop). */
  private generation = 0;
  private everConnected = false;
  private outageSince: number | null = null;
  private failedCode: string | null = null;
  private releaseAttempt: (() => void) | null = null;
  private retryTimer: ClockTimer | null = null;
  private stopped = true;
  private readyWaiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  /**
   * The link's persistent shells for periodic reads; they outlive link drops and reopen on the next command. Two,
   * so a slow nvidia-smi (a second on a busy 8-GPU host) does not hold back the next systemctl: the second opens
   * only when a command finds the first busy.
   */
  private readonly shells: CommandShell[];

  constructor(private readonly opts: SshConnectionOptions) {
    super();
    this.clock = opts.clock ?? systemClock;
    this.sessions = new Semaphore(opts.maxSessions ?? 8);
    this.shells = [1, 2].map(
      () =>
        new CommandShell({
          label: opts.label,
          open: (command, handlers) => this.openStream(command, handlers),
          exec: (command, o) => this.exec(command, o),
          isConnected: () => this.isConnected,
        }),
    );
  }

  /** How the periodic reads went: through the persistent shells or, after trouble with them, plain exec. */
  get shellStats(): CommandShellStats {
    const [a, b] = this.shells.map((s) => s.stats);
    return {
      shells: a.shells + b.shells,
      viaShell: a.viaShell + b.viaShell,
      viaExec: a.viaExec + b.viaExec,
      ...((b.lastTrouble ?? a.lastTrouble) ? { lastTrouble: b.lastTrouble ?? a.lastTrouble } : {}),
    };
  }

  get status(): ConnectionStatus {
    return this.current;
  }

  get label(): string {
    return this.opts.label;
  }

  get isConnected(): boolean {
    return (this.current.state === 'connected' || this.current.state === 'stale') && this.client !== null;
  }

  /** Start connecting; resolves after the first attempt, whatever its outcome (see `status`). */
  start(): Promise<void> {
    this.stopped = false;
    this.failures = 0;
    this.everConnected = false;
    this.outageSince = null;
    this.failedCode = null;
    return this.connectOnce();
  }

  /** Waits until connected, or rejects with the failure reason when the connection fails permanently or the wait times out. */
  waitConnected(timeoutMs: number): Promise<void> {
    if (this.isConnected) return Promise.resolve();
    if (this.current.state === 'failed')
      return Promise.reject(
        new SshError({
          code: this.failedCode ?? 'failed',
          message: this.current.reason,
          hint: this.current.hint,
        }),
      );
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: () => {
          systemClock.clearTimeout(timer);
          resolve();
        },
        reject: (e: Error) => {
          systemClock.clearTimeout(timer);
          reject(e);
        },
      };
      const timer = systemClock.setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== waiter);
        const s = this.current;
        const why = s.state === 'reconnecting' ? `: ${s.lastError}` : '';
        reject(
          new SshError({
            code: 'timeout',
            message: `could not connect to ${this.label} within ${timeoutMs / 1000} s${why}`,
          }),
        );
      }, timeoutMs);
      this.readyWaiters.push(waiter);
    });
  }

  /**
   * Reconnect now instead of waiting for the backoff or for keepalives to notice: after resume from sleep or a
   * network change the old TCP connection is usually dead. `automatic` triggers (NetworkWatcher) leave alone a
   * connection that failed on credentials or host keys — that needs the operator, not another attempt.
   * Returns false when nothing was done (stopped, an attempt already in flight, or such a failure).
   */
  reconnectNow(reason: string, opts: { automatic?: boolean } = {}): boolean {
    if (this.stopped || this.current.state === 'connecting') return false;
    if (
      opts.automatic &&
      this.current.state === 'failed' &&
      this.failedCode &&
      PERMANENT_CODES.has(this.failedCode)
    )
      return false;
    if (this.retryTimer) {
      this.clock.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this.failures = 0;
    this.teardown(reason);
    void this.connectOnce();
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    if (this.retryTimer) this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.teardown('closed by the user');
    for (const s of this.shells) s.close();
    this.setStatus({ state: 'idle' });
    for (const w of this.readyWaiters.splice(0))
      w.reject(new SshError({ code: 'closed', message: `${this.label}: connection closed` }));
  }

  /** The link is up but traffic stopped flowing (a scrape or command timed out): say so until it recovers. */
  markStale(reason: string): void {
    if (this.current.state === 'connected')
      this.setStatus({ state: 'stale', since: this.clock.now(), reason });
  }

  /** Traffic flowed again after `markStale`. */
  markFresh(): void {
    if (this.current.state === 'stale' && this.client)
      this.setStatus({ state: 'connected', since: this.clock.now() });
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.sessions.run(() => this.execNow(command, options));
  }

  /**
   * A short command that runs every few seconds (systemctl show, nvidia-smi): sent to the link's one persistent
   * shell instead of opening a channel each time; same command text, same result as `exec`. On any trouble with
   * the shell it runs over plain exec (and says so under NODE_DEBUG=pdc-ssh).
   */
  async execInShell(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (!this.client || !this.isConnected)
      throw new SshError({ code: 'not-connected', message: `not connected to ${this.label}` });
    return (this.shells.find((s) => !s.busy) ?? this.shells[0]).run(command, options);
  }

  /**
   * Starts a command that keeps its channel (a persistent shell, `journalctl -f`). The channel counts against
   * the session limit for as long as it is open. Resolves once the host accepted the command.
   */
  async openStream(command: string, handlers: StreamHandlers): Promise<CommandStream> {
    const release = await this.sessions.hold();
    const client = this.client;
    if (!client || !this.isConnected) {
      release();
      throw new SshError({ code: 'not-connected', message: `not connected to ${this.label}` });
    }
    return new Promise<CommandStream>((resolve, reject) => {
      let settled = false;
      const timer = systemClock.setTimeout(() => {
        settled = true;
        release();
        reject(
          new SshError({
            code: 'exec-timeout',
            message: `${this.label}: the host did not start "${command.slice(0, 120)}" within 15 s`,
          }),
        );
      }, 15_000);
      client.exec(command, (err, ch) => {
        if (settled) {
          // Gave up waiting already: the late channel belongs to nobody.
          ch?.close();
          return;
        }
        settled = true;
        systemClock.clearTimeout(timer);
        if (err) {
          release();
          reject(new SshError(explainSshError(err, this.label)));
          return;
        }
        let exitCode: number | null = null;
        let signal: string | null = null;
        let closed = false;
        ch.on('data', (d: Buffer) => handlers.stdout(d));
        ch.stderr.on('data', (d: Buffer) => handlers.stderr(d));
        ch.on('exit', (code: number | null, sig?: string) => {
          exitCode = code ?? null;
          signal = sig ?? null;
        });
        // 'close' follows every channel error, and is where the owner hears about it.
        ch.on('error', () => undefined);
        ch.on('close', () => {
          if (closed) return;
          closed = true;
          release();
          handlers.closed(exitCode, signal);
        });
        resolve({
          write: (data) => {
            if (!closed) ch.write(data);
          },
          close: () => {
            if (closed) return;
            // Without a signal a quiet `journalctl -f` would linger on the host until it next writes.
            try {
              ch.signal('TERM');
            } catch {
              // ssh2 refuses a request on a channel that is already closing; closing it is all that is left.
            }
            ch.close();
          },
        });
      });
    });
  }

  /** GET over a forwarded TCP connection from the host's point of view (e.g. http://127.0.0.1:30200/metrics). */
  httpAgent(): ForwardingAgent {
    if (!this.agent || !this.client || !this.isConnected)
      throw new SshError({ code: 'not-connected', message: `not connected to ${this.label}` });
    return this.agent;
  }

  private execNow(command: string, options: ExecOptions): Promise<ExecResult> {
    const client = this.client;
    if (!client || !this.isConnected)
      return Promise.reject(
        new SshError({ code: 'not-connected', message: `not connected to ${this.label}` }),
      );
    const maxBytes = options.maxBytes ?? DEFAULT_EXEC_MAX_BYTES;
    const timeoutMs = options.timeoutMs ?? 15_000;
    return new Promise<ExecResult>((resolve, reject) => {
      let settled = false;
      let channel: ClientChannel | null = null;
      const finish = (err: Error | null, result?: ExecResult): void => {
        if (settled) return;
        settled = true;
        systemClock.clearTimeout(timer);
        if (err) {
          channel?.close();
          reject(err);
        } else resolve(result!);
      };
      const timer = systemClock.setTimeout(
        () =>
          finish(
            new SshError({
              code: 'exec-timeout',
              message: `${this.label}: command did not finish within ${timeoutMs / 1000} s: ${command.slice(0, 120)}`,
            }),
          ),
        timeoutMs,
      );
      client.exec(command, (err, ch) => {
        if (err) {
          finish(new SshError(explainSshError(err, this.label)));
          return;
        }
        channel = ch;
        const out: Buffer[] = [];
        const errOut: Buffer[] = [];
        let outBytes = 0;
        let errBytes = 0;
        let exitCode: number | null = null;
        let signal: string | undefined;
        const tooBig = (): void =>
          finish(
            new SshError({
              code: 'output-too-large',
              message: `${this.label}: output of "${command.slice(0, 80)}" exceeded ${Math.round(maxBytes / 1024)} KiB; stopped reading`,
            }),
          );
        ch.on('data', (d: Buffer) => {
          outBytes += d.length;
          if (outBytes > maxBytes) return tooBig();
          out.push(d);
        });
        ch.stderr.on('data', (d: Buffer) => {
          errBytes += d.length;
          if (errBytes > maxBytes) return tooBig();
          errOut.push(d);
        });
        ch.on('exit', (code: number | null, sig?: string) => {
          exitCode = code;
          signal = sig ?? undefined;
        });
        ch.on('close', () =>
          finish(null, {
            // Hosts print whatever bytes they like; invalid UTF-8 becomes U+FFFD instead of failing the call.
            stdout: Buffer.concat(out).toString('utf8'),
            stderr: Buffer.concat(errOut).toString('utf8'),
            exitCode,
            signal,
          }),
        );
        ch.on('error', (e: Error) => finish(new SshError(explainSshError(e, this.label))));
      });
    });
  }

  private async connectOnce(): Promise<void> {
    if (this.stopped) return;
    const generation = ++this.generation;
    const attempt = this.failures + 1;
    this.setStatus({ state: 'connecting', since: this.clock.now(), attempt });
    let config: ConnectConfig;
    try {
      config = await this.opts.configure();
    } catch (err) {
      if (generation !== this.generation || this.stopped) return;
      this.afterFailure(explainSshError(err, this.label), false);
      return;
    }
    const diagnostics = hasDiagnostics(config) ? config.diagnostics : null;
    if (generation !== this.generation || this.stopped) {
      diagnostics?.release();
      return;
    }
    const client = new Client();
    this.client = client;
    this.releaseAttempt = () => diagnostics?.release();
    await new Promise<void>((resolve) => {
      let ready = false;
      let tcpUp = false;
      let lastError: ExplainedError | null = null;
      let expired = false;
      const handshakeMs = config.readyTimeout ?? this.opts.readyTimeoutMs ?? 20_000;
      const deadline = new HandshakeDeadline(handshakeMs, () => {
        expired = true;
        lastError = {
          code: 'timeout',
          message: tcpUp
            ? `${this.label}: the SSH handshake and login did not complete within ${handshakeMs / 1000} s`
            : `${this.label}: no TCP connection within ${handshakeMs / 1000} s`,
          hint: tcpUp
            ? 'The host accepted the connection but sshd did not answer in time: it may be overloaded or hung.'
            : 'The host did not answer: check the network/VPN; a firewall may be dropping packets.',
        };
        client.destroy();
      });
      client.on('connect', () => {
        tcpUp = true;
      });
      client.on('ready', () => {
        ready = true;
        deadline.cancel();
        this.failures = 0;
        this.everConnected = true;
        this.outageSince = null;
        this.agent = new ForwardingAgent(client, this.label);
        this.setStatus({ state: 'connected', since: this.clock.now() });
        this.emit('connected');
        for (const w of this.readyWaiters.splice(0)) w.resolve();
        resolve();
      });
      client.on('error', (err) => {
        // ssh2 emits 'error' then 'close'; remember the reason for the close handler. The resolver's
        // diagnostics know what was offered and what the host-key check decided, so they explain best.
        // After our deadline destroyed the socket, ssh2's follow-up error ("connection lost") says less.
        if (!expired) lastError = diagnostics?.explain(err) ?? explainSshError(err, this.label);
      });
      client.on('close', () => {
        deadline.cancel();
        diagnostics?.release();
        if (this.client !== client) return resolve();
        this.client = null;
        this.releaseAttempt = null;
        this.agent?.destroy();
        this.agent = null;
        if (this.stopped) return resolve();
        const why = lastError ?? { code: 'closed', message: `${this.label} closed the connection` };
        this.afterFailure(why, ready);
        resolve();
      });
      try {
        client.connect({
          ...deadline.wrap(config),
          keepaliveInterval: config.keepaliveInterval ?? this.opts.keepaliveIntervalMs ?? 10_000,
          keepaliveCountMax: config.keepaliveCountMax ?? this.opts.keepaliveCountMax ?? 2,
          // The deadline above replaces ssh2's readyTimeout, which cannot pause while the operator answers a prompt.
          readyTimeout: 0,
        });
        deadline.start();
      } catch (err) {
        // ssh2 throws synchronously for bad key material or options.
        deadline.cancel();
        diagnostics?.release();
        this.client = null;
        this.releaseAttempt = null;
        this.afterFailure(explainSshError(err, this.label), false);
        resolve();
      }
    });
  }

  /** Decide between giving up (credentials, host keys, config, unknown names) and retrying with backoff. */
  private afterFailure(why: ExplainedError, wasConnected: boolean): void {
    const permanent =
      !wasConnected &&
      (PERMANENT_CODES.has(why.code) ||
        (!this.everConnected && PERMANENT_UNTIL_CONNECTED_CODES.has(why.code)));
    if (permanent) this.fail(why);
    else this.scheduleRetry(why);
  }

  private scheduleRetry(why: ExplainedError): void {
    const { initialMs, maxMs } = this.opts.backoff ?? { initialMs: 1000, maxMs: 30_000 };
    this.failures++;
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.failures - 1, 16));
    // Jitter within [base/2, base]: many clients reconnecting after a VPN blip do not stampede sshd.
    const delay = Math.round(base / 2 + Math.random() * (base / 2));
    const now = this.clock.now();
    this.outageSince ??= now;
    this.setStatus({
      state: 'reconnecting',
      attempt: this.failures + 1,
      nextAttemptAt: now + delay,
      lastError: why.message,
      since: this.outageSince,
    });
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = null;
      void this.connectOnce();
    }, delay);
  }

  private fail(why: ExplainedError): void {
    this.failedCode = why.code;
    this.setStatus({ state: 'failed', reason: why.message, hint: why.hint, at: this.clock.now() });
    for (const w of this.readyWaiters.splice(0)) w.reject(new SshError(why));
  }

  private teardown(reason: string): void {
    const c = this.client;
    this.client = null;
    this.releaseAttempt?.();
    this.releaseAttempt = null;
    this.agent?.destroy();
    this.agent = null;
    if (c) {
      // this.client no longer points at c, so its close handler only settles its pending attempt.
      c.on('error', () => undefined); // late errors from a client we are discarding carry no information
      c.end();
      c.destroy();
    }
    void reason;
  }

  private setStatus(s: ConnectionStatus): void {
    this.current = s;
    this.emit('status', s);
  }
}
