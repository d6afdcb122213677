// A rolling restart as it happens: every worker in its turn with its steps (stop, GPUs free, ports free,
// start, the router's verdict), the current worker's load progress and journal, a pause while a host link is
// down — and at the end the total time, or the worker and step that stopped it and what still serves.
import { useState } from 'react';
import type { RollOperation, RollWorkerView } from '@shared/contract';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { formatDuration } from '../format';
import { Journal, STEP_MARK } from './RestartProgress';
import { hideRoll, isRunning } from './useRoll';
import { RestartModal } from './RestartModal';
import './restart.css';

const TITLE: Record<RollOperation['state'], string> = {
  running: 'Restarting',
  paused: 'Paused:',
  succeeded: 'Restarted',
  failed: 'Roll failed:',
  cancelled: 'Roll cancelled:',
  unknown: 'Outcome unknown:',
};

function tone(state: RollOperation['state']): 'ok' | 'warn' | 'bad' | 'idle' {
  return state === 'succeeded' ? 'ok' : state === 'failed' ? 'bad' : state === 'running' ? 'idle' : 'warn';
}

export function RollProgress({
  deploymentId,
  op,
}: {
  deploymentId: string;
  op: RollOperation;
}): React.JSX.Element {
  const [cancelError, setCancelError] = useState<string | null>(null);
  const cancel = (): void => {
    setCancelError(null);
    api
      .cancelRoll({ deploymentId, rollId: op.id })
      .catch((err: unknown) => setCancelError(errorText(err).message));
  };
  const f = op.failure;
  return (
    <RestartModal
      onClose={hideRoll}
      backdropClassName="modal-backdrop restart-progress-backdrop"
      className={`restart-progress state-${op.state}`}
      label={`${TITLE[op.state]} ${op.targetText}`}
      testId="roll-progress"
      data={{ 'data-roll': op.id, 'data-state': op.state }}
    >
      <header>
        <h2>
          <span className={`pill pill-${tone(op.state)}`} data-testid="roll-state">
            {op.state}
          </span>{' '}
          {TITLE[op.state]} {op.targetText}
        </h2>
        <span className="muted">{formatDuration(op.elapsedMs)}</span>
      </header>
      <p className="restart-summary" data-testid="roll-summary">
        {op.summary}
      </p>
      {op.paused && (
        <p className="warn-box" role="status" data-testid="roll-paused">
          Paused — {op.paused.reason}. Nothing is claimed until {op.paused.hostLabel} is seen again; stop and
          start are sent again after the reconnect.
        </p>
      )}
      {f && (
        <div
          className={op.state === 'unknown' ? 'warn-box' : 'error-box'}
          role="alert"
          data-testid="roll-failure"
        >
          <p>
            <b>
              {f.worker}, step {f.step}:
            </b>{' '}
            {f.message}
          </p>
          {f.hint && <p className="hint">Next: {f.hint}</p>}
          <p data-testid="roll-still-serving">
            Still serving (the router reports healthy): {f.stillServing.join(', ') || 'none seen'}
          </p>
          {f.journalTail && f.journalTail.length > 0 && (
            <details open>
              <summary>Last journal lines</summary>
              <pre>{f.journalTail.join('\n')}</pre>
            </details>
          )}
        </div>
      )}
      <div className="restart-services">
        {op.workers.map((w) => (
          <WorkerRun key={w.workerId} w={w} current={op.current === w.workerId} />
        ))}
      </div>
      {cancelError && <p className="error-box">{cancelError}</p>}
      <footer>
        <span className="spacer" />
        {isRunning(op) && (
          <button data-testid="roll-cancel" disabled={op.cancelRequested} onClick={cancel}>
            {op.cancelRequested ? 'Stopping after the worker being restarted…' : 'Cancel the roll'}
          </button>
        )}
        <button className="primary" data-testid="roll-close" onClick={hideRoll}>
          {isRunning(op) ? 'Hide (keeps running)' : 'Close'}
        </button>
      </footer>
    </RestartModal>
  );
}

function WorkerRun({ w, current }: { w: RollWorkerView; current: boolean }): React.JSX.Element {
  const load = w.follow?.services[0];
  return (
    <section
      className={`restart-service ${current ? 'current' : ''}`}
      data-testid={`roll-worker-${w.name}`}
      data-state={w.state}
    >
      <h3>
        <span aria-hidden>{STEP_MARK[w.state]}</span> {w.name} <span className="muted">({w.role})</span>
      </h3>
      {(current || w.state === 'failed') && (
        <ol className="restart-steps">
          {w.steps.map((s, i) => (
            <li key={i} className={`step-${s.state}`} data-state={s.state}>
              <span className="mark" aria-hidden>
                {STEP_MARK[s.state]}
              </span>
              <span className="label">{s.label}</span>
              {s.detail && <div className="detail">{s.detail}</div>}
            </li>
          ))}
        </ol>
      )}
      {current && load?.progress && (
        <div className="restart-load" data-testid={`roll-load-${w.name}`}>
          <span className="bar" aria-hidden>
            <span
              className={`fill ${load.progress.fraction === null ? 'indeterminate' : ''}`}
              style={{ width: `${Math.round((load.progress.fraction ?? 1) * 100)}%` }}
            />
          </span>
          <span>{load.progress.label}</span>
        </div>
      )}
      {current && load && <Journal s={load} />}
    </section>
  );
}
