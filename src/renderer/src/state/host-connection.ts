// A link's state as the core pushes it, per host: a fleet's view keeps each host's own link (the host list reads
// it) and takes the deployment's link from its origin host only — gpu-b going silent is gpu-b's state, not the
// whole fleet's. A one-host deployment's every push is its link.
import type { ConnectionStatus, DeploymentSummary } from '@shared/domain';

export interface LinkHolder {
  summary: DeploymentSummary;
  connection: ConnectionStatus;
}

export function withHostConnection<T extends LinkHolder>(
  view: T,
  hostId: string,
  status: ConnectionStatus,
): T {
  const hosts = view.summary.hosts;
  if (!hosts) return { ...view, connection: status };
  const known = hosts.some((h) => h.host.id === hostId);
  const origin = hostId === view.summary.host.id;
  if (!known && !origin) return view;
  return {
    ...view,
    connection: origin ? status : view.connection,
    summary: {
      ...view.summary,
      ...(origin ? { connection: status } : {}),
      hosts: hosts.map((h) => (h.host.id === hostId ? { ...h, connection: status } : h)),
    },
  };
}
