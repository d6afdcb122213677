// Turns consecutive observations into timeline events: a unit changing state, health flipping,
// metrics going away or coming back. Only changes become events, so a steady deployment is quiet.
import { serviceId, type AppEvent, type Observation, type ServiceObservation } from '@shared/domain';

let seq = 0;
export function newEventId(ts: number): string {
  seq = (seq + 1) % 1_000_000;
  return `${ts.toString(36)}-${seq.toString(36)}`;
}

export function diffObservations(prev: Observation | undefined, next: Observation): AppEvent[] {
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
    if (s.metrics && p?.metrics && s.metrics.ok !== p.metrics.ok) {
      events.push({
        ...base,
        id: newEventId(next.ts),
        ts: next.ts,
        kind: 'info',
        severity: s.metrics.ok ? 'info' : 'warning',
        title: `${name}: metrics ${s.metrics.ok ? 'available again' : 'unavailable'}`,
        detail: s.metrics.ok ? undefined : s.metrics.error,
      });
    }
  }
  return events;
}

function sameService(a: ServiceObservation, b: ServiceObservation): boolean {
  return serviceId(a) === serviceId(b) && a.unit === b.unit && a.hostId === b.hostId;
}

function unitStateText(s: ServiceObservation): string | undefined {
  return s.systemd ? `${s.systemd.activeState}/${s.systemd.subState}` : undefined;
}
