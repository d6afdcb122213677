// What an emulated command gets: the simulation, who runs it, and where its output goes.
import type { DemoMachine } from '../machine';

export interface CommandIO {
  out(chunk: string | Buffer): void;
  err(chunk: string | Buffer): void;
  /** Aborted when the client closes the channel (ends `journalctl -f` and waits). */
  signal: AbortSignal;
  /** False for the buffered emulateCommand: `journalctl -f` then prints its backlog and returns. */
  canFollow: boolean;
  /** What the client writes to the channel, line by line (a shell reading commands); absent: stdin is empty. */
  stdin?: LineSource;
}

export interface LineSource {
  /** The next line without its newline; null at end of input. */
  next(): Promise<string | null>;
}

export interface CommandContext {
  /** The host the command runs on. */
  sim: DemoMachine;
  /** Effective user: 'root' under sudo. */
  user: string;
  /** The SSH login user. */
  loginUser: string;
  io: CommandIO;
}

export type CommandImpl = (argv: string[], ctx: CommandContext) => Promise<number> | number;

/** Waits for `ms` of simulated time, or until the signal aborts. Resolves false when aborted. */
export function simSleep(ctx: CommandContext, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (ctx.io.signal.aborted) return resolve(false);
    const onAbort = (): void => {
      ctx.sim.clock.clearTimeout(timer);
      resolve(false);
    };
    const timer = ctx.sim.clock.setTimeout(() => {
      ctx.io.signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    ctx.io.signal.addEventListener('abort', onAbort, { once: true });
  });
}
