// The restart action of one service, wherever it is shown (its card, its page): in place where the deployment
// restarts in place (one of each role on one host), else a roll of that one worker — the core decides the same
// way (hasWorkerGroups), so the button never offers what the core would refuse.
import type { ServiceConfig } from '@shared/domain';
import { hasWorkerGroups } from '@shared/fleet';
import { RestartButton } from './RestartButton';
import { RollButton } from './RollButton';

export function ServiceRestartButton({
  deploymentId,
  service,
  services,
  compact = false,
}: {
  deploymentId?: string;
  service: ServiceConfig;
  /** Every service of the deployment: whether it restarts in place is read from their shape. */
  services: readonly ServiceConfig[];
  compact?: boolean;
}): React.JSX.Element | null {
  if (!hasWorkerGroups(services))
    return <RestartButton deploymentId={deploymentId} role={service.role} compact={compact} />;
  return (
    <RollButton
      deploymentId={deploymentId}
      target={{
        kind: 'worker',
        worker: service.role === 'router' ? service.unit : (service.workerUrl ?? service.unit),
      }}
      testId="worker-restart"
    />
  );
}
