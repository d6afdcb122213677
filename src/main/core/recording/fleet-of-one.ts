// A one-host recording named as the app names its deployment now. A recording made before every service carried
// an id (of any minor, 1.4 included) names each service by its role: targets and sources `decode`, the host's GPUs
// `gpu`, the monitor's rows labelled `{role}` only, and a header without `fleet`. The same deployment opened today
// is a fleet of one: services `router`, `prefill-0`, `decode-0` (the ids fleetOfServices gives a deployment known
// by its services), each its own target and source `decode@decode-0`, the GPUs `gpu@<host>`, the monitor's rows
// labelled `{role, worker}`, the header's `fleet` the one host. Re-saving (resave.ts) renames the file's records
// this way, so review reads every 1P1D file the one way: per worker, and per role the aggregate of its workers.
import type { DeploymentConfig } from '@shared/domain';
import type { RecordingHeader, Recording } from './types';
import { fleetOfServices } from '../deployment/fleet-config';
import { GPU_TARGET, MONITOR_TARGET } from './host-series';
import { hostGpuTarget, workerTarget, type RecordedFleet } from './fleet-targets';
import { servicesNamed } from './format';

export interface FleetOfOne {
  /** The deployment with each service's id. */
  deployment: DeploymentConfig;
  /** The header's `fleet`: the deployment's one host. */
  fleet: RecordedFleet;
  /** Today's name of a recorded target or source; one that names no service of the file is kept. */
  source(recorded: string): string;
  /** A sample of the monitor target's labels with the worker its `role` names. */
  monitorLabels(labels: Record<string, string>): Record<string, string>;
  /** The ids given, in the deployment's order. */
  ids: string[];
}

/** How to name `header`'s records today, or null when its services carry their ids already. */
export function fleetOfOne(header: Pick<RecordingHeader, 'host' | 'deployment'>): FleetOfOne | null {
  if (servicesNamed(header)) return null;
  const origin = header.host.id;
  const { fleet, services } = fleetOfServices(
    origin,
    header.deployment.services.map((s) => (s.hostId ? s : { ...s, hostId: origin })),
  );
  const renamed = new Map<string, string>([[GPU_TARGET, hostGpuTarget(origin)]]);
  const idOfRole = new Map<string, string>();
  for (const s of services) {
    const id = s.id!;
    // A role of one service only: files of several services of a role named them by host (format 1.0).
    if (services.filter((x) => x.role === s.role).length === 1) {
      renamed.set(s.role, workerTarget(s.role, id));
      idOfRole.set(s.role, id);
    }
    if (s.hostId) renamed.set(`${s.hostId}/${s.role}`, workerTarget(s.role, id));
  }
  return {
    deployment: { ...header.deployment, services },
    fleet: {
      hosts: fleet.hosts.map((h) =>
        h.id === origin
          ? {
              id: origin,
              label: header.host.label,
              kind: header.host.kind,
              ...(header.host.hostname ? { hostname: header.host.hostname } : {}),
            }
          : { id: h.id, label: h.id, kind: 'ssh' as const },
      ),
      fleet,
      // The file says nothing of the link when it began; its connection events say what followed.
      links: [],
    },
    source: (recorded) => renamed.get(recorded) ?? recorded,
    monitorLabels: (labels) => {
      const id = idOfRole.get(labels.role);
      return id === undefined || labels.worker !== undefined ? labels : { ...labels, worker: id };
    },
    ids: services.map((s) => s.id!),
  };
}

/** Renames the records of `rec` (read whole) in place as `naming` says: nothing recorded is dropped. */
export function renameRecording(rec: Recording, naming: FleetOfOne): void {
  rec.header = { ...rec.header, deployment: naming.deployment, fleet: naming.fleet };
  for (const s of rec.series)
    if (s.target === MONITOR_TARGET) s.labels = naming.monitorLabels(s.labels);
    else s.target = naming.source(s.target);
  for (const u of rec.unitStates) u.source = naming.source(u.source);
  for (const h of rec.health) h.source = naming.source(h.source);
  for (const j of rec.journal) j.role = naming.source(j.role);
}
