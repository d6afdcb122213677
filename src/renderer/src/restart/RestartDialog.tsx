// The confirmation before a restart: the plan from the core (planRestart) — host, unit, exact command, order,
// what will break, last restart, drain, timeouts — and one button that starts exactly that.
import { useEffect, useState } from 'react';
import type { RestartPlan, RestartTarget } from '@shared/contract';
import type { Role } from '@shared/domain';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { formatDateTime, formatDuration } from '../format';
import { closeRestartDialog, restartStarted, showRestart, openRestartSettings } from './useRestart';
import { ImpactItems } from './ImpactItems';
import { RestartModal } from './RestartModal';
import './restart.css';

type ErrorText = { message: string; hint?: string };

export function RestartDialog({
  deploymentId,
  initialTarget,
}: {
  deploymentId: string;
  initialTarget: RestartTarget;
}): React.JSX.Element {
  const [target, setTarget] = useState<RestartTarget>(initialTarget);
  const [drain, setDrain] = useState(false);
  // The plan answers one (target, drain) question; a stale answer to an earlier question is never shown.
  const key = `${deploymentId}:${target}:${drain}`;
  const [answer, setAnswer] = useState<{ key: string; plan?: RestartPlan; error?: ErrorText } | null>(null);
  const [startError, setStartError] = useState<ErrorText | null>(null);
  const [starting, setStarting] = useState(false);
  const service: Role | null = initialTarget === 'stack' ? null : initialTarget;

  useEffect(() => {
    let live = true;
    api
      .planRestart({ deploymentId, target, drain })
      .then((plan) => live && setAnswer({ key, plan }))
      .catch((err: unknown) => live && setAnswer({ key, error: errorText(err) }));
    return () => {
      live = false;
    };
  }, [deploymentId, target, drain, key]);
  const plan = answer?.key === key ? (answer.plan ?? null) : null;
  const error = startError ?? (answer?.key === key ? (answer.error ?? null) : null);

  const start = (): void => {
    setStarting(true);
    setStartError(null);
    api
      .startRestart({ deploymentId, target, drain: drain && (plan?.drainAvailable ?? false) })
      .then((r) => restartStarted(r.operation))
      .catch((err: unknown) => {
        setStartError(errorText(err));
        setStarting(false);
      });
  };

  return (
    <RestartModal
      onClose={closeRestartDialog}
      className="restart-dialog"
      modal
      label="Restart plan"
      testId="restart-dialog"
    >
      <header>
        <h2>Restart {target === 'stack' ? 'the PD stack' : target}</h2>
        {service && (
          <div className="restart-target" role="radiogroup" aria-label="What to restart">
            <label>
              <input
                type="radio"
                name="restart-target"
                data-testid="restart-target-service"
                checked={target === service}
                onChange={() => setTarget(service)}
              />{' '}
              only {service}
            </label>
            <label>
              <input
                type="radio"
                name="restart-target"
                data-testid="restart-target-stack"
                checked={target === 'stack'}
                onChange={() => setTarget('stack')}
              />{' '}
              the PD stack (prefill + decode, then router)
            </label>
          </div>
        )}
      </header>
      {!plan && !error && <p className="muted">Asking the host for the plan…</p>}
      {plan && <PlanView plan={plan} />}
      {plan && (
        <label className={`restart-drain ${plan.drainAvailable ? '' : 'disabled'}`}>
          <input
            type="checkbox"
            data-testid="restart-drain"
            disabled={!plan.drainAvailable}
            checked={drain && plan.drainAvailable}
            onChange={(e) => setDrain(e.target.checked)}
          />{' '}
          Drain first: stop new work to the worker and wait for its running requests to finish
          {!plan.drainAvailable && (
            <span className="muted" data-testid="restart-drain-reason">
              {' '}
              —{' '}
              {plan.services.find((s) => s.role !== 'router' && !s.drain.supported)?.drain.detail ??
                'only prefill and decode workers can be drained'}
            </span>
          )}
        </label>
      )}
      {error && (
        <p className="error-box" role="alert" data-testid="restart-dialog-error">
          {error.message}
          {error.hint ? <span className="hint"> — {error.hint}</span> : null}
        </p>
      )}
      <footer>
        <button
          className="link"
          onClick={() => openRestartSettings(true)}
          data-testid="restart-open-settings"
        >
          Restart settings…
        </button>
        <span className="spacer" />
        <button onClick={closeRestartDialog} data-testid="restart-dismiss">
          Cancel
        </button>
        {plan?.running ? (
          <button
            className="primary"
            data-testid="restart-follow"
            onClick={() => showRestart(plan.running!.operationId)}
          >
            Follow the running restart
          </button>
        ) : (
          <button
            className="primary danger"
            data-testid="restart-confirm"
            disabled={!plan || !!plan.blockedReason || starting}
            title={plan?.blockedReason}
            onClick={start}
          >
            {starting ? 'Starting…' : `Restart ${target === 'stack' ? 'PD stack' : target}`}
          </button>
        )}
      </footer>
    </RestartModal>
  );
}

function PlanView({ plan }: { plan: RestartPlan }): React.JSX.Element {
  return (
    <div className="restart-plan" data-testid="restart-plan">
      <p>
        On <b data-testid="restart-plan-host">{plan.hostLabel}</b>
        {plan.connectedAs ? (
          <>
            {' '}
            as <b>{plan.connectedAs.user}</b>
            {plan.connectedAs.uid === 0 ? ' (root)' : ''}
          </>
        ) : null}
        . Order:{' '}
        <span data-testid="restart-plan-order">{plan.stages.map((s) => s.join(' + ')).join(' → ')}</span>
        {plan.routerInFlight !== null && (
          <>
            {' '}
            · the router has <b>{plan.routerInFlight}</b> request(s) in flight
          </>
        )}
      </p>
      {plan.blockedReason && (
        <p className="error-box" data-testid="restart-blocked">
          {plan.blockedReason}
        </p>
      )}
      {plan.running && (
        <p className="warn-box" data-testid="restart-plan-running">
          A restart of {plan.running.target === 'stack' ? 'the PD stack' : plan.running.target} is already
          running (operation {plan.running.operationId})
          {plan.running.target === plan.target
            ? '; starting again joins it.'
            : ': follow it, or cancel it before starting another.'}
        </p>
      )}
      {plan.services.map((s) => (
        <section key={s.role} className="restart-plan-service" data-testid={`restart-plan-${s.role}`}>
          <h3>
            {s.role} · <span className="unit">{s.unit}</span>{' '}
            <span className="muted">
              now {s.activeState ?? '?'}/{s.subState ?? '?'}
            </span>
          </h3>
          <code className="restart-command" data-testid={`restart-command-${s.role}`}>
            {s.command}
          </code>
          <ul className="restart-impact" data-testid={`restart-impact-${s.role}`}>
            <ImpactItems role={s.role} impact={s.impact} notes={false} />
            <li data-testid={`restart-last-${s.role}`}>
              last restart:{' '}
              {s.lastRestartAt === null
                ? 'unknown'
                : `${formatDateTime(s.lastRestartAt)} (${formatDuration(plan.plannedAt - s.lastRestartAt)} ago)`}
              {s.nRestarts ? ` · ${s.nRestarts} automatic restart(s) so far` : ''}
            </li>
            {s.impact.notes.map((n) => (
              <li key={n} className="muted">
                {n}
              </li>
            ))}
          </ul>
          <p className="muted small">
            Steps: {s.steps.map((st) => st.label).join(' → ')}. Gives up after{' '}
            {formatDuration(s.timeouts.activeMs)} to become active, {formatDuration(s.timeouts.healthMs)} for
            /health, {formatDuration(s.timeouts.routerMs)} for the router.
          </p>
        </section>
      ))}
      {plan.warnings.map((w) => (
        <p key={w} className="warn-box" data-testid="restart-warning">
          {w}
        </p>
      ))}
    </div>
  );
}
