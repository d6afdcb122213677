// The confirmation before a rolling restart: the core's plan (planRoll) — the workers in the order they go,
// each one's exact commands and what the router says of it now, the pre-flight checks, warnings, and why the
// roll would be refused — and one button that starts exactly that. A check that could not be read (who holds
// the workers' GPUs) keeps the button off until the operator ticks the box to roll without it.
import { useEffect, useState } from 'react';
import type { RollPlan, RollTarget } from '@shared/contract';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { openRestartSettings } from './useRestart';
import { closeRollDialog, rollStarted, rollTargetTitle, showRoll } from './useRoll';
import { ImpactItems } from './ImpactItems';
import { RestartModal } from './RestartModal';
import './restart.css';

type ErrorText = { message: string; hint?: string };

export function RollDialog({
  deploymentId,
  target,
}: {
  deploymentId: string;
  target: RollTarget;
}): React.JSX.Element {
  const [plan, setPlan] = useState<RollPlan | null>(null);
  const [error, setError] = useState<ErrorText | null>(null);
  const [starting, setStarting] = useState(false);
  const [withoutGpuCheck, setWithoutGpuCheck] = useState(false);
  useEffect(() => {
    let live = true;
    api
      .planRoll({ deploymentId, target })
      .then((p) => live && setPlan(p))
      .catch((err: unknown) => live && setError(errorText(err)));
    return () => {
      live = false;
    };
  }, [deploymentId, target]);

  const start = (): void => {
    setStarting(true);
    setError(null);
    api
      .startRoll({ deploymentId, target, ...(withoutGpuCheck ? { withoutGpuCheck: true } : {}) })
      .then((op) => rollStarted(deploymentId, op))
      .catch((err: unknown) => {
        const e = errorText(err);
        setError(e);
        setStarting(false);
        // A roll already running is where the operator wants to go.
        const running = /\(roll (roll-[a-z0-9-]+)\)/.exec(e.message)?.[1];
        if (running) showRoll(running);
      });
  };

  return (
    <RestartModal
      onClose={closeRollDialog}
      className="restart-dialog"
      modal
      label="Rolling restart plan"
      testId="roll-dialog"
    >
      <header>
        <h2>Restart {plan?.targetText ?? rollTargetTitle(target)}</h2>
      </header>
      {!plan && !error && <p className="muted">Asking the router and the hosts for the plan…</p>}
      {plan && <RollPlanView plan={plan} />}
      {plan && !plan.refused && unreadable(plan) > 0 && (
        <label className="roll-without-check">
          <input
            type="checkbox"
            data-testid="roll-without-gpu-check"
            checked={withoutGpuCheck}
            onChange={(e) => setWithoutGpuCheck(e.target.checked)}
          />{' '}
          Roll without the GPU check where it cannot be read ({unreadable(plan)}{' '}
          {unreadable(plan) === 1 ? 'worker' : 'workers'}) — only if you know nothing else runs on those GPUs:
          stopping a worker whose GPUs another process holds frees nothing, and the roll would stop with it
          down.
        </label>
      )}
      {error && (
        <p className="error-box" role="alert" data-testid="roll-dialog-error">
          {error.message}
          {error.hint ? <span className="hint"> — {error.hint}</span> : null}
        </p>
      )}
      <footer>
        <button className="link" onClick={() => openRestartSettings(true)}>
          Restart settings…
        </button>
        <span className="spacer" />
        <button onClick={closeRollDialog} data-testid="roll-dismiss">
          Cancel
        </button>
        <button
          className="primary danger"
          data-testid="roll-start"
          disabled={!plan || Boolean(plan.refused) || starting || (unreadable(plan) > 0 && !withoutGpuCheck)}
          title={
            plan?.refused
              ? `Refused: ${plan.refused}`
              : plan && unreadable(plan) > 0 && !withoutGpuCheck
                ? 'The GPU check could not be read: tick the box to roll without it'
                : undefined
          }
          onClick={start}
        >
          {starting ? 'Starting…' : plan?.workers.length === 1 ? 'Restart it' : 'Start the roll'}
        </button>
      </footer>
    </RestartModal>
  );
}

function unreadable(plan: RollPlan): number {
  return plan.checks.filter((c) => c.unreadable).length;
}

function RollPlanView({ plan }: { plan: RollPlan }): React.JSX.Element {
  return (
    <div className="roll-plan" data-testid="roll-plan">
      {plan.refused && (
        <p className="error-box" role="alert" data-testid="roll-refused">
          <b>Refused:</b> {plan.refused}
          {plan.refusedHint && <span className="hint"> — {plan.refusedHint}</span>}
        </p>
      )}
      {plan.workers.length > 1 && (
        <p data-testid="roll-order">
          Order, one at a time: <b>{plan.workers.map((w) => w.name).join(' → ')}</b>. The next worker starts
          only after the router reports the previous one healthy again.
        </p>
      )}
      {plan.checks.length > 0 && (
        <ul className="roll-checks" data-testid="roll-checks">
          {plan.checks.map((c) => (
            <li
              key={c.name}
              className={c.unreadable ? 'unknown' : c.ok ? 'ok' : 'bad'}
              data-testid="roll-check"
            >
              <span aria-hidden>{c.unreadable ? '?' : c.ok ? '✔' : '✖'}</span> {c.name}
              {c.unreadable ? ' — cannot be read' : ''}: <span className="muted">{c.detail}</span>
            </li>
          ))}
        </ul>
      )}
      {plan.warnings.map((w) => (
        <p key={w} className="warn-box" data-testid="roll-warning">
          {w}
        </p>
      ))}
      {plan.workers.map((w) => (
        <details key={w.workerId} className="roll-worker-plan" data-testid={`roll-plan-${w.name}`}>
          <summary>
            <b>{w.name}</b> <span className="muted">({w.role})</span> — the router says{' '}
            <span className={`pill pill-${w.healthNow.state === 'healthy' ? 'ok' : 'warn'}`}>
              {w.healthNow.state}
            </span>{' '}
            <span className="muted small">{w.healthNow.detail}</span>
          </summary>
          {w.impact && (
            <ul className="restart-impact" data-testid={`roll-impact-${w.name}`}>
              <ImpactItems role={w.role} impact={w.impact} />
            </ul>
          )}
          <ol className="roll-plan-steps">
            {w.steps.map((s, i) => (
              <li key={i}>
                <span className="label">{s.label}</span>
                {s.command && <code className="command">{s.command}</code>}
              </li>
            ))}
          </ol>
        </details>
      ))}
    </div>
  );
}
