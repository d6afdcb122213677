// Waiting for something on the host, honestly. A probe result counts only when the SSH link was up before
// and after it; while the link is down the wait keeps trying (the connection reconnects by itself), and if
// a deadline passes while the link is down the outcome is "lost contact", never a failure we did not see.
import type { RestartFailure } from '@shared/contract';
import { sleep, systemClock, type Clock } from '../clock';
import type { SshConnection } from '../ssh/connection';
import type { RestartRun, StepHandle } from './operation';

export type ProbeResult<T> =
  | { kind: 'done'; value: T; detail?: string }
  | { kind: 'failed'; failure: Omit<RestartFailure, 'step' | 'role'> }
  | { kind: 'pending'; detail: string };

export type WaitOutcome<T> =
  | { kind: 'done'; value: T; detail?: string }
  | { kind: 'failed'; failure: Omit<RestartFailure, 'step' | 'role'> }
  | { kind: 'timeout'; lastDetail: string }
  | { kind: 'lost-contact'; lastDetail: string; downSince: number }
  | { kind: 'cancelled'; lastDetail: string };

/** Polling cadence: `pollMs` on the deployment's clock, but never faster than `minRealGapMs` of real time. */
export interface Pacer {
  clock: Clock;
  pollMs: number;
  minRealGapMs: number;
}

export function pace(p: Pacer, ms = p.pollMs): Promise<void> {
  return Promise.all([sleep(p.clock, ms), sleep(systemClock, p.minRealGapMs)]).then(() => undefined);
}

/** How long `pace(p, ms)` lasts in real time: for a listener whose cadence is kept on the wall clock. */
export function realPaceMs(p: Pacer, ms = p.pollMs): number {
  const now = p.clock.now();
  const wall = p.clock.wallTimeOf ? p.clock.wallTimeOf(now + ms) - p.clock.wallTimeOf(now) : ms;
  return Math.max(p.minRealGapMs, wall);
}

/** True when an error means "no answer from the host" rather than an answer we must judge. */
export function isLinkError(err: unknown, conn: Pick<SshConnection, 'isConnected'>): boolean {
  if (!conn.isConnected) return true;
  const code = (err as { explained?: { code?: string } })?.explained?.code;
  return (
    code === 'not-connected' ||
    code === 'exec-timeout' ||
    code === 'closed' ||
    code === 'reset' ||
    code === 'keepalive' ||
    code === 'timeout'
  );
}

export async function waitUntil<T>(opts: {
  run: RestartRun;
  step: StepHandle;
  conn: SshConnection;
  pacer: Pacer;
  deadlineAt: number;
  probe: () => Promise<ProbeResult<T>>;
  intervalMs?: number;
  /** Whether a cancel request stops this wait (true for every wait; false only for must-finish cleanups). */
  cancellable?: boolean;
}): Promise<WaitOutcome<T>> {
  const { run, step, conn, pacer, deadlineAt, probe } = opts;
  let last = '';
  let downSince: number | null = null;
  for (;;) {
    if ((opts.cancellable ?? true) && run.cancelRequested) return { kind: 'cancelled', lastDetail: last };
    let result: ProbeResult<T> | null = null;
    let problem = '';
    if (conn.isConnected) {
      try {
        result = await probe();
      } catch (err) {
        if (!isLinkError(err, conn)) {
          // The host answered but not as expected: keep the message and try again until the deadline.
          result = { kind: 'pending', detail: `could not check: ${(err as Error).message}` };
        } else problem = (err as Error).message;
      }
    }
    if (result && conn.isConnected) {
      downSince = null;
      run.setLink(true);
      if (result.kind === 'done') return { kind: 'done', value: result.value, detail: result.detail };
      if (result.kind === 'failed') return result;
      last = result.detail;
      step.note(result.detail);
    } else {
      downSince ??= pacer.clock.now();
      run.setLink(false);
      step.note(
        `lost contact with ${conn.label}${problem ? ` (${problem})` : ''}; reconnecting — last seen: ${last || 'nothing yet'}`,
      );
    }
    if (pacer.clock.now() >= deadlineAt)
      return downSince !== null
        ? { kind: 'lost-contact', lastDetail: last, downSince }
        : { kind: 'timeout', lastDetail: last };
    await pace(pacer, opts.intervalMs);
  }
}
