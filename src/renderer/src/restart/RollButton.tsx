// The restart action of a fleet's worker or role: "Restart…" opens the roll's plan; while a roll runs on the
// deployment it shows what the roll is doing and opens its progress instead. Hidden in read-only mode and in
// review.
import type { RollTarget } from '@shared/contract';
import { isReview, useAppState } from '../state/store';
import { actionsAllowed, useRestartState } from './useRestart';
import { openRollDialog, runningRoll, showRoll, useRollState } from './useRoll';
import { rollCovers } from './roll-scope';

export function RollButton({
  deploymentId: given,
  target,
  label = 'Restart…',
  testId,
}: {
  /** Defaults to the deployment on screen. */
  deploymentId?: string;
  target: RollTarget;
  label?: string;
  testId: string;
}): React.JSX.Element | null {
  const restart = useRestartState();
  const rolls = useRollState();
  const app = useAppState();
  const deploymentId = given ?? app.activeId;
  // A recording under review restarts nothing (the settings of a live deployment opened before may be loaded).
  if (!deploymentId || isReview(app, deploymentId)) return null;
  const running = runningRoll(rolls, deploymentId);
  if (running && rollCovers(running, target)) {
    const w = running.workers.find((x) => x.workerId === running.current);
    return (
      <button
        className="restart-button running"
        data-testid={`${testId}-running`}
        onClick={() => showRoll(running.id)}
        title={running.summary}
      >
        {running.state === 'paused' ? 'Roll paused…' : `Restarting ${w?.name ?? ''}…`}
      </button>
    );
  }
  if (!actionsAllowed(restart)) return null;
  // Another role's roll: this button does not say what that roll does (the prefill card read "Restarting
  // decode-1…"); it waits, since the core runs one roll per deployment at a time.
  if (running)
    return (
      <button
        className="restart-button"
        data-testid={testId}
        disabled
        title={`One roll at a time: the roll of ${running.targetText} must end first`}
      >
        {label}
      </button>
    );
  return (
    <button
      className="restart-button"
      data-testid={testId}
      onClick={(e) => {
        e.stopPropagation();
        openRollDialog(deploymentId, target);
      }}
      title="Shows the plan first: order, exact commands, pre-flight checks"
    >
      {label}
    </button>
  );
}
