// The restart action on a service card and the service page: "Restart…" opens the plan; while a restart of
// this service runs it shows the current step and opens its progress instead. Hidden in read-only mode and
// in review.
import type { Role } from '@shared/domain';
import { isReview, useAppState } from '../state/store';
import { actionsAllowed, openRestartDialog, runningFor, showRestart, useRestartState } from './useRestart';

export function RestartButton({
  deploymentId: given,
  role,
  compact = false,
}: {
  /** Defaults to the deployment on screen. */
  deploymentId?: string;
  role: Role;
  compact?: boolean;
}): React.JSX.Element | null {
  const s = useRestartState();
  const app = useAppState();
  const deploymentId = given ?? app.activeId;
  // A recording under review restarts nothing (the settings of a live deployment opened before may be loaded).
  if (!deploymentId || isReview(app, deploymentId)) return null;
  const running = runningFor(s, deploymentId, role);
  if (running) {
    const step = running.services.find((x) => x.role === role)?.steps.find((x) => x.state === 'running');
    return (
      <button
        className="restart-button running"
        data-testid={`restart-running-${role}`}
        onClick={() => showRestart(running.id)}
        title={running.summary}
      >
        Restarting… {compact ? '' : (step?.label ?? 'waiting for its turn')}
      </button>
    );
  }
  if (!actionsAllowed(s)) return null;
  return (
    <button
      className="restart-button"
      data-testid={`restart-button-${role}`}
      onClick={() => openRestartDialog(deploymentId, role)}
      title={`Restart ${role} (or the whole PD stack): shows the plan first`}
    >
      Restart…
    </button>
  );
}
