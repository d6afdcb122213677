// Turns consecutive observations into timeline events: a unit changing state, health flipping,
// metrics going away or coming back. Only changes become events, so a steady deployment is quiet.
import { serviceId, type AppEvent, type Observation, type ServiceObservation } from '@shared/domain';

/**
 * How long a service's metrics must be failing before the timeline says they are gone. A probe past its
 * budget for one poll (a loaded laptop, a fleet opening 30 tunnels) reads "no answer yet" once and then
 * answers: as events that was two lines per worker per blip, a flood at every open under load, and a marker on
 * every chart of the role. The metrics-stale alert and the overview still show every poll as it is.
 */
export const METRICS_GONE_AFTER_MS = 3_000;

/** Per service (id, unit, host) whose metrics are failing: since when, and whether the timeline said so. */
export type MetricsOutages = Map<string, { since: number; said: boolean }>;

let seq = 0;
export function newEventId(ts: number): string {
  seq = (seq + 1) % 1_000_000;
  return `${ts.toString(36)}-${seq.toString(36)}`;
}

/** One deployment's timeline events: each observation against the one before it, metrics outages carried. */
export class ChangeEvents {
  private prev: Observation | undefined;
  private readonly outages: MetricsOutages = new Map();

  /** The events `obs` makes, compared with the observation before it. */
  next(obs: Observation): AppEvent[] {
    const events = diffObservations(this.prev, obs, this.outages);
    this.prev = obs;
    return events;
  }
}

export function diffObservations(
  prev: Observation | undefined,
  next: Observation,
  /** The outages of the deployment's observations before `next`; updated. */
  outages: MetricsOutages,
): AppEvent[] {
  const events: AppEvent[] = [];
  for (const s of next.services) {
    // A fleet has many services of a role (and a multi-node worker one unit per host): each is compared with
    // its own previous reading, and its events name the worker, not the role.
    const p = prev?.services.find((x) => sameService(x, s));
    const name = serviceId(s);
    const base = {
      deploymentId: next.deploymentId,
      hostId: s.hostId ?? next.hostId,
      role: s.role,
      // Names the worker for the charts that mark only their own workers' events.
      ...(s.id !== undefined ? { worker: s.id } : {}),
    };
    const stateNow = unitStateText(s);
    const stateBefore = p ? unitStateText(p) : undefined;
    if (stateNow && stateNow !== stateBefore) {
      const active = s.systemd?.activeState;
      events.push({
        ...base,
        id: newEventId(next.ts),
        ts: next.ts,
        kind: 'state-change',
        severity: active === 'failed' ? 'error' : active === 'active' ? 'info' : 'warning',
        title: `${name}: ${s.unit}${s.hostId && s.id ? ` on ${s.hostId}` : ''} ${stateBefore ? `${stateBefore} → ` : ''}${stateNow}`,
        detail:
          s.systemd?.result && s.systemd.result !== 'success' ? `Result=${s.systemd.result}` : undefined,
      });
    }
    if (s.health && p?.health && s.health.ok !== p.health.ok) {
      events.push({
        ...base,
        id: newEventId(next.ts),
        ts: next.ts,
        kind: 'health',
        severity: s.health.ok ? 'info' : 'warning',
        title: `${name}: health ${s.health.ok ? 'OK again' : 'failing'}`,
        detail: s.health.detail,
      });
    }
    if (s.metrics) {
      const key = `${name}\u0000${s.unit}\u0000${s.hostId ?? ''}`;
      const out = outages.get(key);
      if (s.metrics.ok) {
        if (out?.said)
          events.push({
            ...base,
            id: newEventId(next.ts),
            ts: next.ts,
            kind: 'info',
            severity: 'info',
            title: `${name}: metrics available again`,
            detail: `after ${seconds(next.ts - out.since)} without`,
          });
        outages.delete(key);
      } else if (out) {
        if (!out.said && next.ts - out.since >= METRICS_GONE_AFTER_MS) {
          out.said = true;
          events.push({
            ...base,
            id: newEventId(next.ts),
            ts: next.ts,
            kind: 'info',
            severity: 'warning',
            title: `${name}: metrics unavailable`,
            detail: `${s.metrics.error ?? 'no metrics'} (failing for ${seconds(next.ts - out.since)})`,
          });
        }
      } else if (p?.metrics?.ok) {
        // Metrics that were there and are now failing; metrics never read since open are not a change.
        outages.set(key, { since: next.ts, said: false });
      }
    }
  }
  return events;
}

function seconds(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

function sameService(a: ServiceObservation, b: ServiceObservation): boolean {
  return serviceId(a) === serviceId(b) && a.unit === b.unit && a.hostId === b.hostId;
}

function unitStateText(s: ServiceObservation): string | undefined {
  return s.systemd ? `${s.systemd.activeState}/${s.systemd.subState}` : undefined;
}
