// One persistent `sh` per link for the commands the monitor runs every second or few (systemctl show,
// nvidia-smi): each command is written to the shell's stdin and its answer read back framed by a token only this
// shell knows, so steady state opens no channel per command. A command runs as `"$SHELL" -c '<command>'
// </dev/null`, the way sshd runs an exec request (the user's login shell, which sshd puts in $SHELL, started
// afresh), so its text, output, messages and exit code are those of exec.
// Framing: after the command the shell prints "<token> <exit status>" on stdout and "<token>" on stderr; the
// answer is complete when both arrived, and everything before them is the command's output, byte for byte.
// Any trouble with the shell itself (it cannot start, exits, prints what the framing does not expect) runs the
// command over plain exec instead, keeps doing so for a while, and says so under NODE_DEBUG=pdc-ssh.
import { randomBytes } from 'node:crypto';
import { debuglog } from 'node:util';
import { systemClock } from '../clock';
import type { CommandStream, ExecOptions, ExecResult, StreamHandlers } from './exec-types';
import { SshError } from './errors';
import { shellQuote } from './shell';

const log = debuglog('pdc-ssh');

export interface CommandShellOptions {
  /** Human name of the link, for messages. */
  label: string;
  open: (command: string, handlers: StreamHandlers) => Promise<CommandStream>;
  /** Plain exec, used when the shell is in trouble. */
  exec: (command: string, options: ExecOptions) => Promise<ExecResult>;
  /** False while the link is down: a shell lost with the link is not the shell's fault. */
  isConnected: () => boolean;
  /** How long commands go over exec after trouble with the shell. Default 60 s. */
  fallbackMs?: number;
}

export interface CommandShellStats {
  /** Shell channels opened. */
  shells: number;
  /** Commands answered through the shell. */
  viaShell: number;
  /** Commands sent over exec because the shell was in trouble. */
  viaExec: number;
  /** Why the shell was last given up on, if ever. */
  lastTrouble?: string;
}

interface Request {
  command: string;
  timeoutMs: number;
  maxBytes: number;
  resolve: (r: ExecResult) => void;
  reject: (e: Error) => void;
}

interface Active {
  req: Request;
  token: string;
  out: Buffer;
  err: Buffer;
  /** Exit status once the stdout sentinel arrived. */
  exitCode: number | null;
  errDone: boolean;
  timer: ReturnType<typeof setTimeout>;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
/** Longest a sentinel line can be; output after the token beyond this is not a sentinel. */
const SENTINEL_LINE_MAX = 32;

/** One command as the shell is given it: run like exec, then its status on stdout and the end mark on stderr. */
export function framed(command: string, token: string): string {
  // The name after the command is its $0, which shells put in their messages: sshd starts the login shell as
  // its basename ("bash: line 1: x: command not found"), and so do we. `:=` so that an unset $SHELL names
  // the /bin/sh that runs ("sh: 1: x: not found"), not an empty $0; the assignment is not exported.
  return `"\${SHELL:=/bin/sh}" -c ${shellQuote(command)} "\${SHELL##*/}" </dev/null; echo "${token} $?"; echo ${token} >&2\n`;
}

export class CommandShell {
  private stream: CommandStream | null = null;
  private opening: Promise<CommandStream> | null = null;
  /** Bumped per shell channel: output of a shell already given up belongs to nobody. */
  private streamId = 0;
  private readonly queue: Request[] = [];
  private current: Active | null = null;
  private seq = 0;
  private readonly tokenBase = `__pdc_${randomBytes(8).toString('hex')}`;
  private fallbackUntil = 0;
  /** Callers waiting for the shell to have nothing to do (`whenIdle`). */
  private idleWaiters: Array<() => void> = [];
  readonly stats: CommandShellStats = { shells: 0, viaShell: 0, viaExec: 0 };

  constructor(private readonly opts: CommandShellOptions) {}

  /** Runs one command; answers come back in the order asked (the shell runs one command at a time). */
  run(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    if (systemClock.now() < this.fallbackUntil) {
      this.stats.viaExec++;
      return this.opts.exec(command, { timeoutMs, maxBytes });
    }
    return new Promise<ExecResult>((resolve, reject) => {
      this.queue.push({ command, timeoutMs, maxBytes, resolve, reject });
      void this.pump();
    });
  }

  /** Running or waiting for a command: a caller in a hurry is better served by another shell. */
  get busy(): boolean {
    return this.current !== null || this.opening !== null || this.queue.length > 0;
  }

  /**
   * Resolves true once the shell has nothing running or queued, false if that did not happen within `ms`: a
   * caller that cannot wait longer takes another shell.
   */
  whenIdle(ms: number): Promise<boolean> {
    if (!this.busy) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== done);
        resolve(false);
      }, ms);
      this.idleWaiters.push(done);
    });
  }

  /** Whether the shell holds a channel now. */
  get open(): boolean {
    return this.stream !== null || this.opening !== null;
  }

  /** Gives back the shell's channel if it has nothing to do; says whether it did. */
  closeIfIdle(): boolean {
    if (this.busy || !this.stream) return false;
    this.dropStream();
    return true;
  }

  /**
   * The link is closing: end the shell; what is queued goes over exec (which then says why it fails). The next
   * command, on a link started again, opens a new shell.
   */
  close(): void {
    this.dropStream();
    const pending = this.queue.splice(0);
    if (this.current) pending.unshift(this.finishCurrent());
    for (const req of pending) this.viaExec(req);
  }

  private async pump(): Promise<void> {
    if (this.current || this.opening) return;
    if (this.queue.length === 0) {
      for (const w of this.idleWaiters.splice(0)) w();
      return;
    }
    let stream: CommandStream;
    try {
      stream = await this.ensureStream();
    } catch (err) {
      this.trouble(`could not start the shell: ${(err as Error).message}`);
      return;
    }
    const req = this.queue.shift();
    if (!req || this.current) {
      if (req) this.queue.unshift(req);
      return;
    }
    const token = `${this.tokenBase}_${++this.seq}`;
    const active: Active = {
      req,
      token,
      out: Buffer.alloc(0),
      err: Buffer.alloc(0),
      exitCode: null,
      errDone: false,
      timer: setTimeout(() => this.timedOut(active), req.timeoutMs),
    };
    this.current = active;
    stream.write(framed(req.command, token));
  }

  private ensureStream(): Promise<CommandStream> {
    if (this.stream) return Promise.resolve(this.stream);
    const id = ++this.streamId;
    const opening = this.opts
      .open('sh', {
        stdout: (d) => id === this.streamId && this.onStdout(d),
        stderr: (d) => id === this.streamId && this.onStderr(d),
        closed: (code, signal) => id === this.streamId && this.onClosed(code, signal),
      })
      .then((s) => {
        this.stats.shells++;
        if (id !== this.streamId) {
          s.close();
          throw new Error('the shell was given up while it started');
        }
        this.stream = s;
        return s;
      })
      .finally(() => {
        if (this.opening === opening) this.opening = null;
      });
    this.opening = opening;
    return opening;
  }

  private onStdout(chunk: Buffer): void {
    const a = this.current;
    if (!a || a.exitCode !== null) {
      this.trouble(`the shell printed ${chunk.length} bytes outside any command`);
      return;
    }
    const from = Math.max(0, a.out.length - a.token.length - SENTINEL_LINE_MAX);
    a.out = Buffer.concat([a.out, chunk]);
    const at = a.out.indexOf(`${a.token} `, from);
    if (at < 0) {
      if (a.out.length > a.req.maxBytes) this.tooLarge(a);
      return;
    }
    const nl = a.out.indexOf(0x0a, at);
    if (nl < 0) return;
    const status = /^(\d{1,3})$/.exec(a.out.subarray(at + a.token.length + 1, nl).toString('latin1'));
    if (!status || nl !== a.out.length - 1) {
      this.trouble(`the shell's answer to "${a.req.command.slice(0, 80)}" did not end with its status line`);
      return;
    }
    a.exitCode = Number(status[1]);
    a.out = a.out.subarray(0, at);
    this.completeIfDone(a);
  }

  private onStderr(chunk: Buffer): void {
    const a = this.current;
    if (!a || a.errDone) {
      this.trouble(`the shell wrote ${chunk.length} bytes to stderr outside any command`);
      return;
    }
    const from = Math.max(0, a.err.length - a.token.length - 1);
    a.err = Buffer.concat([a.err, chunk]);
    const at = a.err.indexOf(`${a.token}\n`, from);
    if (at < 0) {
      if (a.err.length > a.req.maxBytes) this.tooLarge(a);
      return;
    }
    if (at + a.token.length + 1 !== a.err.length) {
      this.trouble(`the shell wrote to stderr after the end of "${a.req.command.slice(0, 80)}"`);
      return;
    }
    a.err = a.err.subarray(0, at);
    a.errDone = true;
    this.completeIfDone(a);
  }

  private completeIfDone(a: Active): void {
    if (a.exitCode === null || !a.errDone || this.current !== a) return;
    this.finishCurrent();
    this.stats.viaShell++;
    a.req.resolve({
      // As exec does: invalid UTF-8 becomes U+FFFD instead of failing the call.
      stdout: a.out.toString('utf8'),
      stderr: a.err.toString('utf8'),
      exitCode: a.exitCode,
    });
    void this.pump();
  }

  private finishCurrent(): Request {
    const a = this.current!;
    clearTimeout(a.timer);
    this.current = null;
    return a.req;
  }

  /** The command itself is slow, not the shell: fail it as exec would, and start a fresh shell for the next. */
  private timedOut(a: Active): void {
    if (this.current !== a) return;
    this.finishCurrent();
    this.dropStream();
    a.req.reject(
      new SshError({
        code: 'exec-timeout',
        message: `${this.opts.label}: command did not finish within ${a.req.timeoutMs / 1000} s: ${a.req.command.slice(0, 120)}`,
      }),
    );
    void this.pump();
  }

  private tooLarge(a: Active): void {
    this.finishCurrent();
    this.dropStream();
    a.req.reject(
      new SshError({
        code: 'output-too-large',
        message: `${this.opts.label}: output of "${a.req.command.slice(0, 80)}" exceeded ${Math.round(a.req.maxBytes / 1024)} KiB; stopped reading`,
      }),
    );
    void this.pump();
  }

  private onClosed(code: number | null, signal: string | null): void {
    this.stream = null;
    this.streamId++;
    if (!this.current) return;
    if (!this.opts.isConnected()) {
      // The link went, not the shell: exec answers with the connection's own explanation.
      this.viaExec(this.finishCurrent());
      void this.pump();
      return;
    }
    this.trouble(`the shell exited (${signal ? `signal ${signal}` : `exit code ${code}`}) during a command`);
  }

  /** Gives up on the shell for a while: what it was running and what waits go over exec. */
  private trouble(why: string): void {
    this.stats.lastTrouble = why;
    const ms = this.opts.fallbackMs ?? 60_000;
    this.fallbackUntil = systemClock.now() + ms;
    log('%s: %s; running commands over exec for %d s', this.opts.label, why, ms / 1000);
    this.dropStream();
    const pending = this.queue.splice(0);
    if (this.current) pending.unshift(this.finishCurrent());
    for (const req of pending) this.viaExec(req);
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private viaExec(req: Request): void {
    this.stats.viaExec++;
    this.opts
      .exec(req.command, { timeoutMs: req.timeoutMs, maxBytes: req.maxBytes })
      .then(req.resolve, req.reject);
  }

  private dropStream(): void {
    this.streamId++;
    this.stream?.close();
    this.stream = null;
  }
}
