// What the restart and roll services share about an operation they run: who asked, its entries on the
// deployment's timeline, how its progress is pushed (each change at most every 200 ms, urgent ones at once, and
// a heartbeat every second while it runs so clients show the elapsed time), and the one register of what runs
// on each deployment, so neither starts beside the other.
import os from 'node:os';
import type { ServiceHost, TimelineEntry } from './service-host';
import type { RestartingUnit } from '../actions/restarting';

const PUSH_EVERY_MS = 200;
const HEARTBEAT_MS = 1000;

/** The OS user running PD Console: who acts, for the record. */
export function osUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    // No passwd entry for this uid (containers): the environment is the next best witness.
    return process.env.USER ?? process.env.USERNAME ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** Writes an operation's event on its deployment's timeline, at the core's now. */
export function recordOperationEvent(
  core: Pick<ServiceHost, 'addEvent' | 'clock'>,
  deploymentId: string,
  e: TimelineEntry,
): void {
  try {
    // The timeline is on the core's clock. A demo run faster than real time waits on the demo's clock,
    // whose timestamps would land minutes after the recorded data; the event happens now.
    core.addEvent(deploymentId, { ...e, ts: core.clock.now() });
  } catch (err) {
    // The deployment was closed while its operation ended; the event has no timeline left to go on.
    if ((err as { code?: string }).code !== 'unknown-deployment') throw err;
  }
}

/** Pushes one operation's snapshots: throttled, urgent ones at once, a heartbeat while it runs. */
export class ProgressPush {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private heartbeat: ReturnType<typeof setInterval> | null;

  constructor(private readonly emit: () => void) {
    this.heartbeat = setInterval(() => this.changed(false), HEARTBEAT_MS);
    this.heartbeat.unref?.();
  }

  changed(urgent: boolean): void {
    if (urgent) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.emit();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.emit();
      }, PUSH_EVERY_MS);
      this.timer.unref?.();
    }
  }

  /** The operation ended: no more heartbeats (a last urgent push is the caller's). */
  ended(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  dispose(): void {
    this.ended();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * What runs on each deployment now, in words ("a restart of decode (operation r-…)", "a rolling restart of …"):
 * one register for restarts and rolls, so a restart never takes down a worker a roll counts on and a roll never
 * starts beside a restart.
 */
export class RunningActions {
  private readonly byDeployment = new Map<
    string,
    Map<string, { what: string; units: () => RestartingUnit[] }>
  >();

  /**
   * Registers an operation, with the units it restarts (read at each ask: a roll moves on); the returned
   * function ends it.
   */
  begin(deploymentId: string, operationId: string, what: string, units: () => RestartingUnit[]): () => void {
    let m = this.byDeployment.get(deploymentId);
    if (!m) this.byDeployment.set(deploymentId, (m = new Map()));
    m.set(operationId, { what, units });
    return () => {
      m.delete(operationId);
      if (!m.size) this.byDeployment.delete(deploymentId);
    };
  }

  /** What runs on the deployment other than `except`, or null. */
  other(deploymentId: string, except?: (operationId: string) => boolean): string | null {
    for (const [id, a] of this.byDeployment.get(deploymentId) ?? []) if (!except?.(id)) return a.what;
    return null;
  }

  /** The units restarts and rolls restart on the deployment now: what the alerts expect to go down. */
  restarting(deploymentId: string): RestartingUnit[] {
    return [...(this.byDeployment.get(deploymentId)?.values() ?? [])].flatMap((a) => a.units());
  }
}
