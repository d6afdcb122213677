// One SSH connection per host that carries everything: commands over `exec`, the periodic reads through a
// persistent shell (`execInShell`), long-lived commands such as a journal follow on channels of their own
// (`openStream`), HTTP scrapes over `forwardOut` with a keep-alive agent. All of them take slots of one channel
// budget (8 per host, below OpenSSH's MaxSessions of 10), so the bound holds by construction; a full budget
// takes back an idle spare shell or kept-alive tunnel before anyone waits. It reconnects by itself with
// exponential backoff and jitter, and its status is never optimistic: it says `connected` only after the
// handshake, and drops to `reconnecting` the moment ssh2 reports the link closed or keepalives go unanswered
// (keepalive every 10 s, 2 unanswered → dead within 30 s, unless ServerAliveInterval/CountMax say otherwise).
// Credentials and host-key refusals are not retried: that would hammer the host and cannot succeed.
import { EventEmitter } from 'node:events';
import { Client, type ConnectConfig, type ClientChannel } from 'ssh2';
import type { ConnectionStatus } from '@shared/domain';
import { systemClock, type Clock, type ClockTimer } from '../clock';
import { Semaphore } from './semaphore';
import { ForwardingAgent, SESSION, TUNNEL } from './http-agent';
import {
  explainSshError,
  sessionRefused,
  PERMANENT_CODES,
  PERMANENT_UNTIL_CONNECTED_CODES,
  SshError,
  type ExplainedError,
} from './errors';
import { HandshakeDeadline } from './handshake-deadline';
import { hasDiagnostics } from './diagnostics';
import { CommandShell, type CommandShellStats } from './command-shell';
import type { CommandStream, ExecOptions, ExecResult, StreamHandlers } from './exec-types';

export type { CommandStream, ExecOptions, ExecResult, StreamHandlers } from './exec-types';

export interface SshConnectionOptions {
  /** Human name used in every message: the alias or user@host:port. */
  label: string;
  /** Produces the ssh2 config for each attempt (re-resolves keys, agent, jump hosts). */
  configure: () => Promise<ConnectConfig>;
  clock?: Clock;
  /** At most this many channels open at once, of every kind (default 8; OpenSSH's MaxSessions is 10). */
  maxChannels?: number;
  /** How long a periodic read waits for the busy shell before it takes the spare one. Default 1 s. */
  spareShellAfterMs?: number;
  /** How long the spare shell stays open with nothing to do. Default 15 s. */
  spareShellIdleMs?: number;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  readyTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Closes the connection when it goes quiet for this long without any successful traffic. */
  staleAfterMs?: number;
}

interface Events {
  status: [ConnectionStatus];
  connected: [];
}

const DEFAULT_EXEC_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Waits before asking again for a session sshd refused with "open failed". The budget keeps us below
 * MaxSessions, but sshd frees a closed session only on its next pass over its channels: when our close and the
 * next open reach it in one read (a burst of commands ending and starting together), it still counts the old
 * one and refuses the new. A refusal that lasts past these waits is real (MaxSessions below our budget).
 */
const SESSION_REFUSED_RETRY_MS = [50, 150, 400];

export class SshConnection extends EventEmitter<Events> {
  private client: Client | null = null;
  private agent: ForwardingAgent | null = null;
  private readonly channels: Semaphore;
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
   * The link's persistent shells for periodic reads; they outlive link drops and reopen on the next command.
   * The first carries them all; the spare opens only for a read that waited past `spareShellAfterMs` behind a
   * slow one (an nvidia-smi can take seconds on a busy 8-GPU host, and the 1 Hz systemctl must not wait for
   * it), and closes again once idle, so the steady state holds one shell.
   */
  private readonly shells: [CommandShell, CommandShell];
  private spareIdleTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly opts: SshConnectionOptions) {
    super();
    this.clock = opts.clock ?? systemClock;
    // A tunnel may only take the idle spare shell's place; a command may also take an idle tunnel's (the
    // longest unused), which its endpoint's next request opens again.
    this.channels = new Semaphore(
      opts.maxChannels ?? 8,
      (kind) => this.shells[1].closeIfIdle() || (kind !== TUNNEL && (this.agent?.closeIdle() ?? false)),
    );
    const shell = (): CommandShell =>
      new CommandShell({
        label: opts.label,
        open: (command, handlers) => this.openStream(command, handlers),
        exec: (command, o) => this.exec(command, o),
        isConnected: () => this.isConnected,
      });
    this.shells = [shell(), shell()];
  }

  /** Channels open now and at most at once (since the start or `resetChannelPeak`), of every kind. */
  get channelStats(): { open: number; max: number; limit: number } {
    return { open: this.channels.inUse, max: this.channels.maxInUse, limit: this.channels.limit };
  }

  resetChannelPeak(): void {
    this.channels.resetPeak();
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
    if (this.spareIdleTimer) clearTimeout(this.spareIdleTimer);
    this.spareIdleTimer = null;
    this.setStatus({ state: 'idle' });
    for (const w of this.readyWaiters.splice(0))
      w.reject(new SshError({ code: 'closed', message: `${this.label}: connection closed` }));
  }

  /**
   * The link is up but traffic stopped flowing (a scrape or command timed out): say so until it recovers.
   * `since`: when traffic last flowed (the outage began there, not when it was noticed).
   */
  markStale(reason: string, since = this.clock.now()): void {
    if (this.current.state === 'connected') this.setStatus({ state: 'stale', since, reason });
  }

  /** Traffic flowed again after `markStale`. */
  markFresh(): void {
    if (this.current.state === 'stale' && this.client)
      this.setStatus({ state: 'connected', since: this.clock.now() });
  }

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const release = await this.channels.hold(SESSION);
    return this.execNow(command, options, release);
  }

  /**
   * A short command that runs every few seconds (systemctl show, nvidia-smi): sent to the link's persistent
   * shell instead of opening a channel each time; same command text, same result as `exec`. On any trouble with
   * the shell it runs over plain exec (and says so under NODE_DEBUG=pdc-ssh).
   */
  async execInShell(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (!this.client || !this.isConnected)
      throw new SshError({ code: 'not-connected', message: `not connected to ${this.label}` });
    const [first, spare] = this.shells;
    const deadline = Date.now() + (this.opts.spareShellAfterMs ?? 1000);
    // Callers woken together by an idle first shell race for it: the losers wait again, up to the deadline.
    for (;;) {
      if (!first.busy) return first.run(command, options);
      const left = deadline - Date.now();
      if (left <= 0 || !(await first.whenIdle(left))) break;
    }
    if (this.spareIdleTimer) clearTimeout(this.spareIdleTimer);
    this.spareIdleTimer = null;
    try {
      return await spare.run(command, options);
    } finally {
      // Given back at once to a channel that waits for the budget, else after a quiet while.
      if (!spare.busy && this.channels.queued > 0) spare.closeIfIdle();
      else if (!spare.busy) {
        this.spareIdleTimer = setTimeout(() => {
          this.spareIdleTimer = null;
          spare.closeIfIdle();
        }, this.opts.spareShellIdleMs ?? 15_000);
        this.spareIdleTimer.unref?.();
      }
    }
  }

  /**
   * Starts a command that keeps its channel (a persistent shell, `journalctl -f`). The channel counts against
   * the session limit for as long as it is open. Resolves once the host accepted the command.
   */
  async openStream(command: string, handlers: StreamHandlers): Promise<CommandStream> {
    const release = await this.channels.hold(SESSION);
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
      this.openSession(client, command, (err, ch) => {
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

  /** `release` gives back the channel's budget slot: once the host confirmed its close, not when we gave up. */
  private execNow(command: string, options: ExecOptions, release: () => void): Promise<ExecResult> {
    const client = this.client;
    if (!client || !this.isConnected) {
      release();
      return Promise.reject(
        new SshError({ code: 'not-connected', message: `not connected to ${this.label}` }),
      );
    }
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
      const opened = (err: Error | undefined, ch: ClientChannel): void => {
        if (err) {
          release();
          finish(new SshError(explainSshError(err, this.label)));
          return;
        }
        ch.once('close', release);
        // Timed out before the host opened it: nobody wants its output.
        if (settled) ch.close();
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
      };
      this.openSession(client, command, opened);
    });
  }

  /** `client.exec`, asked again a few times while sshd refuses the session (see SESSION_REFUSED_RETRY_MS). */
  private openSession(
    client: Client,
    command: string,
    done: (err: Error | undefined, ch: ClientChannel) => void,
    attempt = 0,
  ): void {
    try {
      client.exec(command, (err, ch) => {
        const wait = SESSION_REFUSED_RETRY_MS[attempt];
        if (err && sessionRefused(err) && wait !== undefined && this.client === client && this.isConnected) {
          systemClock.setTimeout(() => this.openSession(client, command, done, attempt + 1), wait);
          return;
        }
        done(err, ch);
      });
    } catch (err) {
      // ssh2 throws once the link is gone. As in ssh2's own callback, the channel means nothing beside an error.
      done(err as Error, undefined as never);
    }
  }

  private async connectOnce(): Promise<void> {
    if (this.stopped) return;
    const generation = ++this.generation;
    const attempt = this.failures + 1;
    this.setStatus({
      state: 'connecting',
      since: this.clock.now(),
      attempt,
      ...(this.outageSince !== null ? { lostSince: this.outageSince } : {}),
    });
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
        this.agent = new ForwardingAgent(client, this.label, this.channels);
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
    // A link that went stale before it dropped was lost when it stopped answering.
    this.outageSince ??= this.current.state === 'stale' ? this.current.since : now;
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
