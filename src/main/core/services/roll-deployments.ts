// Where the roll service finds what a roll needs of an open deployment (its workers, one link per host, its
// clock). A one-host deployment is read from the core: each service one worker on the one link. Fleets add
// their own source (every host's link, the discovered workers) behind the same interface.
import type { HostConfig } from '@shared/domain';
import type { Core } from '../core';
import type { Clock } from '../clock';
import type { RollContext } from '../actions/roll-session';
import { rollWorkersOf } from '../actions/roll-fleet';

export type RollDeploymentContext = Omit<RollContext, 'settings' | 'pollMs' | 'minRealGapMs'>;

export interface RollDeployments {
  /** The deployment as a roll sees it; rejects with an ApiError when it is not open. */
  contextOf(deploymentId: string): Promise<RollDeploymentContext>;
  /** Whether every host link the roll would use is up now (a roll is not started over a dropped link). */
  linksDown(deploymentId: string): string[];
}

export function coreRollDeployments(core: Core, clockFor: (host: HostConfig) => Clock): RollDeployments {
  return {
    async contextOf(deploymentId) {
      const { host, deployment } = core.deploymentOf(deploymentId);
      const conn = core.connectionOf(deploymentId);
      return {
        deploymentId,
        workers: await rollWorkersOf(deployment, host, conn),
        links: new Map([[host.id, conn]]),
        hosts: new Map([[host.id, host]]),
        clock: clockFor(host),
        journalOf: (_hostId, unit) => core.journalTail(deploymentId, unit),
      };
    },
    linksDown(deploymentId) {
      const conn = core.connectionOf(deploymentId);
      return conn.isConnected ? [] : [conn.label];
    },
  };
}
