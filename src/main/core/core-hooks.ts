// The core's internal notifications to feature services inside main (recording, signals, alerts, restarts):
// never exposed to clients. Its own file so a service can listen without depending on the Core that emits them.
import type { DeploymentConfig, HostConfig, Observation, Role } from '@shared/domain';
import type { GpuStatus } from '@shared/contract';
import type { Exposition } from './probes/exposition/types';

export interface CoreHooks {
  /**
   * Every successful scrape, parsed, with the deployment it belongs to and the id of the service it scraped.
   */
  scrape: [
    { deploymentId: string; hostId: string; ts: number; role: Role; id?: string; exposition: Exposition },
  ];
  /** A deployment was opened (its connection exists; its first observation may not). */
  opened: [{ deploymentId: string; host: HostConfig; deployment: DeploymentConfig }];
  /** A deployment was closed. */
  closed: [{ deploymentId: string }];
  /** Each observation, after the core has stored it (same object the API pushes). */
  observed: [Observation];
  /** Each nvidia-smi reading of a deployment's host (readings, or why there are none). */
  gpu: [{ deploymentId: string; hostId: string; status: GpuStatus }];
}
