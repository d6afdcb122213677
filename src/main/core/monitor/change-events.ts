// Turns consecutive observations into timeline events: a unit changing state, health flipping,
// metrics going away or coming back. Only changes become events, so a steady deployment is quiet.
import type { AppEvent, Observation, ServiceObservation } from '@shared/domain';

let seq = 0;
export function newEventId(ts: number): string {
  seq = (seq + 1) % 1_000_000;
  return `${ts.toString(36)}-${seq.toString(36)}`;
}

export function diffObservations(prev: Observation | undefined, next: Observation): AppEvent[] {
  const events: AppEvent[] = [];
  for (const s of next.services) {
    const p = prev?.services.find((x) => x.role === s.role);
    const base = { deploymentId: next.deploymentId, hostId: next.hostId, role: s.role };
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
        title: `${s.role}: ${s.unit} ${stateBefore ? `${stateBefore} → ` : ''}${stateNow}`,
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
        title: `${s.role}: health ${s.health.ok ? 'OK again' : 'failing'}`,
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
        title: `${s.role}: metrics ${s.metrics.ok ? 'available again' : 'unavailable'}`,
        detail: s.metrics.ok ? undefined : s.metrics.error,
      });
    }
  }
  return events;
}

function unitStateText(s: ServiceObservation): string | undefined {
  return s.systemd ? `${s.systemd.activeState}/${s.systemd.subState}` : undefined;
}
