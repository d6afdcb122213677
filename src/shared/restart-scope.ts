// How a deployment's restarts go: a deployment of one service per role on one host (1P1D on one box) restarts a
// role as that one service, in place (`systemctl restart`, the stack in its configured order); any other — a role
// with several workers, workers on several hosts, a worker spanning nodes — restarts by rolling its workers one
// at a time, so the router keeps a healthy worker of each role. Read from the services' shape, not from whether
// they carry ids, so a one-host pair restarts the same way whichever way it was discovered.
import type { DeploymentConfig } from './domain';

export function restartsAsRoll(d: Pick<DeploymentConfig, 'services'>): boolean {
  const roles = d.services.map((s) => s.role);
  const hosts = new Set(d.services.flatMap((s) => [s.hostId, ...(s.units ?? []).map((u) => u.hostId)]));
  return (
    hosts.size > 1 || new Set(roles).size < roles.length || d.services.some((s) => (s.units?.length ?? 0) > 1)
  );
}
