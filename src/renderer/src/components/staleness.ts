// What is known now and what was only known then. A reading that could not read a unit (the link down, systemctl
// unanswered, the host unreachable) carries the last one that did (ServiceObservation.lastSeen); readings that
// stop arriving at all (the backend lost, a frozen poll) keep the last one on screen. Either way the unit's
// state is unknown now: it is said as "unknown — last seen healthy at 05:54:18 (1 min 10 s ago)", greyed, and
// never in the colour of what it was. Ages compare like with like: the core's times with each other (a fleet
// host's poll against the merged reading), this window's arrival times with its own clock.
import type { HealthResult, Observation, Role, ServiceObservation, UnitState } from '@shared/domain';
import { unitCondition, type ConditionKind, type UnitCondition } from '@shared/unit-condition';
import { formatClock, formatDuration } from '../format';

/** Readings older than this are not current: a poll runs every second, a fleet round as often. */
export const QUIET_AFTER_MS = 5000;

/** The screen's now, and whether readings stopped arriving in this window (none for QUIET_AFTER_MS). */
export interface ReadingClock {
  now: number;
  stalled: boolean;
}

/** A live deployment's readings stall when no observation arrived for a while; a recording's never do. */
export function readingClock(
  view: { receivedAt?: number; summary: { review?: unknown } },
  now: number,
): ReadingClock {
  return {
    now,
    stalled:
      view.summary.review === undefined &&
      view.receivedAt !== undefined &&
      now - view.receivedAt > QUIET_AFTER_MS,
  };
}

/** A unit's state now, when it cannot be known: what was seen of it last, and when. */
export interface UnknownNow {
  /** When it was last read. */
  seenAt: number;
  /** What it was doing then. */
  seen: UnitCondition;
  seenSystemd: UnitState;
  seenHealth?: HealthResult;
  /** "unknown — last seen healthy at 05:54:18 (1 min 10 s ago)". */
  text: string;
  /** For a table cell: "unknown · was healthy". */
  short: string;
  /** Why it cannot be read now: the reading's own error, or that no reading arrives. */
  why: string;
}

/** How a condition reads after "last seen": one or two words. */
const SEEN_AS: Record<ConditionKind, string> = {
  serving: 'healthy',
  loading: 'loading its model',
  'not-answering': 'failing /health',
  'crash-looping': 'crash-looping',
  failed: 'failed',
  stopped: 'stopped',
  exited: 'exited',
  starting: 'starting',
  stopping: 'stopping',
  'not-found': 'missing',
  unknown: 'in an unknown state',
};

/** When `obs` was read: its own host poll's time in a fleet, else the observation's. */
export function readAt(obs: ServiceObservation, latest: Observation): number {
  return obs.polledAt ?? latest.ts;
}

/**
 * The newest time anything of the deployment was actually read (a unit's systemd state, a scrape that
 * answered): what the figures on screen are from. Null before the first such reading.
 */
export function dataTime(latest: Observation | undefined): number | null {
  if (!latest) return null;
  let t: number | null = null;
  for (const s of latest.services) {
    const at = s.systemd || s.metrics?.ok ? readAt(s, latest) : s.lastSeen?.ts;
    if (at !== undefined && (t === null || at > t)) t = at;
  }
  return t;
}

export function ago(ts: number, now: number): string {
  return formatDuration(Math.max(0, now - ts));
}

/** "05:54:18 (1 min 10 s ago)". */
export function clockAndAge(ts: number, now: number): string {
  return `${formatClock(ts)} (${ago(ts, now)} ago)`;
}

/**
 * The unit's state now is unknown when this reading has no systemd state but an earlier one had (its lastSeen
 * says what was), when its own host's poll lags the reading by more than QUIET_AFTER_MS, or when readings stopped
 * arriving. Null: the reading is current, or none was ever made — nothing was seen, and the reading's own error
 * says why (the first poll still coming, a host unreachable since the deployment opened).
 */
export function unknownNow(i: {
  role: Role;
  obs: ServiceObservation | undefined;
  latest: Observation | undefined;
  clock: ReadingClock;
}): UnknownNow | null {
  const { obs, latest, role } = i;
  const { now, stalled } = i.clock;
  if (!obs || !latest) return null;
  const seenThen = (at: number, systemd: UnitState, health?: HealthResult, evidence = obs.evidence) => {
    const seen = unitCondition({
      role,
      systemd,
      ...(health ? { health } : {}),
      ...(evidence ? { evidence } : {}),
      now: at,
    });
    return {
      seenAt: at,
      seen,
      seenSystemd: systemd,
      ...(health ? { seenHealth: health } : {}),
      text: `unknown — last seen ${SEEN_AS[seen.kind]} at ${clockAndAge(at, now)}`,
      short: `unknown · was ${SEEN_AS[seen.kind]}`,
    };
  };
  if (obs.systemd) {
    const at = readAt(obs, latest);
    if (!stalled && latest.ts - at <= QUIET_AFTER_MS) return null;
    return { ...seenThen(at, obs.systemd, obs.health), why: `no new reading since ${formatClock(at)}` };
  }
  if (!obs.lastSeen) return null;
  const l = obs.lastSeen;
  return {
    ...seenThen(l.ts, l.systemd, l.health, l.evidence),
    why: obs.systemdError ?? 'its systemd state could not be read',
  };
}
