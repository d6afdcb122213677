// One observation of a fleet from what each host's monitor saw: every service of the deployment, in the
// deployment's order, tagged with its id and host; a multi-node worker carries each of its units' systemd
// state (rank ≥ 1 read by its own host's monitor); a service whose host cannot be read says
// "unreachable: <reason>" where its systemd state and scrape would be, has no health reading, so the others read
// as usual, and carries what its host last saw of it (lastSeen).
import type { DeploymentConfig, Observation, ServiceConfig, ServiceObservation } from '@shared/domain';
import { serviceId } from '@shared/domain';

export interface MergeInput {
  deployment: DeploymentConfig;
  /** The host the deployment was opened from: the merged observation's hostId. */
  origin: string;
  ts: number;
  /** Each host's newest observation from its monitor. */
  latest: ReadonlyMap<string, Observation>;
  /** Why a host cannot be read now ("connection refused"), or null while its link is up. */
  unreachable: (hostId: string) => string | null;
}

export function mergeFleetObservation(input: MergeInput): Observation {
  const { deployment, latest, ts } = input;
  const find = (hostId: string, s: ServiceConfig, unit: string): ServiceObservation | undefined =>
    latest.get(hostId)?.services.find((o) => o.unit === unit && serviceId(o) === serviceId(s));
  const services = deployment.services.map((s): ServiceObservation => {
    const why = input.unreachable(s.hostId);
    const seen = s.unit === '' ? undefined : find(s.hostId, s, s.unit);
    const base: ServiceObservation =
      why !== null || seen === undefined
        ? unreachableObservation(s, ts, why ?? 'not read yet', seen, latest.get(s.hostId)?.ts)
        : { ...seen, id: serviceId(s), hostId: s.hostId, polledAt: latest.get(s.hostId)?.ts ?? ts };
    if (!s.units) return base;
    return {
      ...base,
      units: s.units.map((u) => {
        const down = input.unreachable(u.hostId);
        const o = down === null ? find(u.hostId, s, u.unit) : undefined;
        return {
          hostId: u.hostId,
          unit: u.unit,
          nodeRank: u.nodeRank,
          ...(o?.systemd ? { systemd: o.systemd } : {}),
          ...(down !== null
            ? { systemdError: `unreachable: ${down}` }
            : o?.systemdError
              ? { systemdError: o.systemdError }
              : o
                ? {}
                : { systemdError: 'not read yet' }),
        };
      }),
    };
  });
  return { deploymentId: deployment.id, hostId: input.origin, ts, services };
}

function unreachableObservation(
  s: ServiceConfig,
  ts: number,
  why: string,
  seen: ServiceObservation | undefined,
  seenAt: number | undefined,
): ServiceObservation {
  const text = why.startsWith('unreachable: ') || why === 'not read yet' ? why : `unreachable: ${why}`;
  // What the host's last reading of it saw, when that reading had its systemd state (else the one before).
  const lastSeen =
    seen?.systemd && seenAt !== undefined
      ? {
          ts: seenAt,
          systemd: seen.systemd,
          ...(seen.health ? { health: seen.health } : {}),
          ...(seen.evidence ? { evidence: seen.evidence } : {}),
        }
      : seen?.lastSeen;
  return {
    ...(lastSeen ? { lastSeen } : {}),
    role: s.role,
    id: serviceId(s),
    hostId: s.hostId,
    unit: s.unit,
    systemdError: text,
    // No /health reading now (lastSeen has the last one): not charted as a failing check through an outage.
    metrics: { ok: false, at: ts, error: text },
  };
}
