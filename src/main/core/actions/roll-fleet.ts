// The workers of an open deployment as a roll sees them. Today's deployments are one host with one
// service per role: each service is one worker with one unit (node rank 0) on that host; a prefill's
// bootstrap port is read from its ExecStart. A fleet model with several hosts maps onto the same RollWorker.
import type { RollWorker } from '@shared/contract';
import type { DeploymentConfig, HostConfig } from '@shared/domain';
import type { SshConnection } from '../ssh/connection';
import { shellCommand, assertUnitName } from '../ssh/shell';
import { parseShowExec } from '../discovery/unit-text';
import { parseServerFlags } from '../discovery/sglang-flags';

async function bootstrapPortOf(conn: SshConnection, unit: string): Promise<number | undefined> {
  try {
    const res = await conn.exec(
      shellCommand(['systemctl', 'show', '--no-pager', '--property=ExecStart', assertUnitName(unit)]),
      { timeoutMs: 15_000, maxBytes: 256 * 1024 },
    );
    const argv = parseShowExec(res.stdout).execStart[0]?.split(' ');
    if (!argv?.length) return undefined;
    const flags = parseServerFlags(argv);
    return flags.mode === 'prefill' ? flags.bootstrapPort : undefined;
  } catch {
    // Without it the roll checks the HTTP port only; the plan shows which ports it checks.
    return undefined;
  }
}

export async function rollWorkersOf(
  deployment: DeploymentConfig,
  host: HostConfig,
  conn: SshConnection,
): Promise<RollWorker[]> {
  return Promise.all(
    deployment.services.map(async (s): Promise<RollWorker> => {
      const bootstrapPort = s.role === 'prefill' ? await bootstrapPortOf(conn, s.unit) : undefined;
      return {
        id: s.apiUrl,
        name: s.role,
        role: s.role,
        apiUrl: s.apiUrl,
        ...(s.healthUrl && s.role !== 'router' ? { healthUrl: s.healthUrl } : {}),
        ...(s.metricsUrl ? { metricsUrl: s.metricsUrl } : {}),
        ...(bootstrapPort !== undefined ? { bootstrapPort } : {}),
        units: [{ hostId: s.hostId, hostLabel: host.label, unit: s.unit, nodeRank: 0, gpus: s.gpus ?? [] }],
      };
    }),
  );
}
