// Each service's condition for the verdict, from the monitor's observation (systemd, /health, journal evidence)
// through the one reading of shared/unit-condition.ts. /health is read every few polls and the last answer is
// kept: an ok read before the unit's main process changed belongs to the process that is gone, so it is not
// taken as the new one being healthy — a server that came back would otherwise read "serving" for the seconds
// until the next check while it still loads its model, and its outage would seem to end early.
import type { Observation, ServiceConfig, ServiceObservation } from '@shared/domain';
import { serviceId } from '@shared/domain';
import { unitCondition } from '@shared/unit-condition';
import { normalizeWorkerUrl } from '@shared/worker-url';
import type { UnitReading } from './verdict';

/** Bounded: one entry per service of the open deployment. */
const MAX_UNITS = 4096;

export class UnitReadings {
  /** Per service: its main process, and when this reader first saw it (the observation's clock). */
  private readonly pids = new Map<string, { pid: number; seenAt: number }>();

  /** The conditions of an observation's services (a fleet's node rank ≥ 1 units are their worker's). */
  read(obs: Observation, services: readonly ServiceConfig[]): UnitReading[] {
    return obs.services.map((s) => this.one(obs.ts, s, services));
  }

  private one(ts: number, s: ServiceObservation, services: readonly ServiceConfig[]): UnitReading {
    const key = s.id ?? s.role;
    const cfg = services.find((c) => serviceId(c) === key && c.role === s.role);
    const pid = s.systemd?.mainPid;
    let health = s.health;
    if (pid !== undefined) {
      const known = this.pids.get(key);
      if (!known || known.pid !== pid) {
        if (this.pids.size >= MAX_UNITS && !known) this.pids.clear();
        // The first sight of a process: an answer from before it is the previous process's (none at start).
        this.pids.set(key, { pid, seenAt: known ? ts : -Infinity });
      }
      const seenAt = this.pids.get(key)!.seenAt;
      if (health && health.checkedAt < seenAt) health = undefined;
    }
    const condition = unitCondition({
      role: s.role,
      ...(s.systemd ? { systemd: s.systemd } : {}),
      ...(health ? { health } : {}),
      ...(s.evidence ? { evidence: s.evidence } : {}),
      now: ts,
    });
    const url = cfg?.workerUrl ?? cfg?.apiUrl;
    return {
      key,
      role: s.role,
      ...((s.hostId ?? cfg?.hostId) ? { hostId: s.hostId ?? cfg?.hostId } : {}),
      ...(url ? { url: normalizeWorkerUrl(url) } : {}),
      condition,
      ...(s.metrics && !s.metrics.ok ? { metricsError: s.metrics.error } : {}),
    };
  }
}
