// A deadline for "TCP connect + SSH handshake + authentication" that stops counting while the operator is being
// asked something (unknown host key, password, keyboard-interactive). ssh2's own readyTimeout cannot pause, so a
// host-key dialog left open for 30 s would fail the attempt with a misleading "timed out".
import type {
  AnyAuthMethod,
  AuthHandlerMiddleware,
  ConnectConfig,
  HostVerifier,
  KeyboardInteractiveCallback,
  Prompt,
} from 'ssh2';

/** Even a paused deadline ends eventually: a callback that never answers must not hold the attempt forever. */
const MAX_PAUSED_MS = 10 * 60_000;

export class HandshakeDeadline {
  private timer: NodeJS.Timeout | null = null;
  private pauseTimer: NodeJS.Timeout | null = null;
  private remaining: number;
  private startedAt = 0;
  private pauses = 0;
  private started = false;
  private finished = false;

  constructor(
    readonly totalMs: number,
    private readonly onExpire: () => void,
    private readonly maxPausedMs = MAX_PAUSED_MS,
  ) {
    this.remaining = totalMs;
  }

  start(): void {
    if (this.finished || this.started) return;
    this.started = true;
    if (this.pauses === 0) this.arm();
  }

  /** Stop the clock (nested calls allowed; each pause needs one resume). */
  pause(): void {
    if (this.finished) return;
    if (this.pauses++ !== 0) return;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.remaining = Math.max(0, this.remaining - (Date.now() - this.startedAt));
    }
    this.pauseTimer = setTimeout(() => this.expire(), this.maxPausedMs);
    this.pauseTimer.unref?.();
  }

  resume(): void {
    if (this.finished || this.pauses === 0) return;
    if (--this.pauses !== 0) return;
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    this.pauseTimer = null;
    if (this.started) this.arm();
  }

  cancel(): void {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    this.timer = null;
    this.pauseTimer = null;
  }

  /** Returns a copy of the config whose operator-facing callbacks pause this deadline while they wait. */
  wrap(config: ConnectConfig): ConnectConfig {
    const out: ConnectConfig = { ...config };
    if (typeof config.hostVerifier === 'function' && config.hostHash === undefined) {
      // ssh2 accepts both forms: return a boolean, or call `verify` later.
      const inner = config.hostVerifier as (key: Buffer, verify: (ok: boolean) => void) => boolean | void;
      out.hostVerifier = ((key: Buffer, verify: (ok: boolean) => void) => {
        this.pause();
        let answered = false;
        const answer = (ok: boolean): void => {
          if (answered) return;
          answered = true;
          this.resume();
          verify(ok);
        };
        const ret = inner(key, answer);
        if (typeof ret === 'boolean') answer(ret);
      }) as HostVerifier;
    }
    if (typeof config.authHandler === 'function') {
      const inner = config.authHandler;
      out.authHandler = ((left, partial, next) => {
        this.pause();
        let resumed = false;
        inner(left, partial, (m) => {
          if (!resumed) {
            resumed = true;
            this.resume();
          }
          next(typeof m === 'object' && m !== null ? this.wrapMethod(m) : m);
        });
      }) as AuthHandlerMiddleware;
    }
    return out;
  }

  private wrapMethod(m: AnyAuthMethod): AnyAuthMethod {
    if (m.type !== 'keyboard-interactive') return m;
    const inner = m.prompt;
    return {
      ...m,
      prompt: (
        name: string,
        instructions: string,
        lang: string,
        prompts: Prompt[],
        finish: KeyboardInteractiveCallback,
      ) => {
        this.pause();
        let resumed = false;
        inner(name, instructions, lang, prompts, (answers) => {
          if (!resumed) {
            resumed = true;
            this.resume();
          }
          finish(answers);
        });
      },
    };
  }

  private arm(): void {
    this.startedAt = Date.now();
    this.timer = setTimeout(() => this.expire(), this.remaining);
    this.timer.unref?.();
  }

  private expire(): void {
    if (this.finished) return;
    this.cancel();
    this.onExpire();
  }
}
