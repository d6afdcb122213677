// A restart as it happens: each service's steps with what was seen and when each gives up, the load's
// progress as the log reveals it, the journal as it arrives, the link state — and at the end the total time,
// or the failed step with systemd's Result, the last journal lines and what to do next.
import { useEffect, useRef, useState } from 'react';
import type { RestartOperation, RestartStepView, ServiceRestartView } from '@shared/contract';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { formatDuration } from '../format';
import { hideRestart } from './useRestart';
import { RestartModal } from './RestartModal';
import './restart.css';

/** The mark of a step's (or a roll worker's) state. */
export const STEP_MARK: Record<RestartStepView['state'], string> = {
  pending: '○',
  running: '◔',
  succeeded: '✓',
  failed: '✗',
  skipped: '–',
  cancelled: '■',
  unknown: '?',
};

const TITLE: Record<RestartOperation['state'], string> = {
  running: 'Restarting',
  succeeded: 'Restarted',
  failed: 'Restart failed',
  cancelled: 'Restart cancelled',
  unknown: 'Restart outcome unknown',
};

export function RestartProgress({ op }: { op: RestartOperation }): React.JSX.Element {
  const [cancelError, setCancelError] = useState<string | null>(null);
  const what = op.target === 'stack' ? 'the PD stack' : op.target;
  const cancel = (): void => {
    setCancelError(null);
    api.cancelRestart({ operationId: op.id }).catch((err: unknown) => setCancelError(errorText(err).message));
  };
  return (
    <RestartModal
      onClose={hideRestart}
      backdropClassName="modal-backdrop restart-progress-backdrop"
      className={`restart-progress state-${op.state}`}
      label={`${TITLE[op.state]} ${what}`}
      testId="restart-progress"
      data={{ 'data-operation': op.id, 'data-state': op.state }}
    >
      <header>
        <h2>
          <span className={`pill pill-${tone(op.state)}`} data-testid="restart-state">
            {op.state}
          </span>{' '}
          {TITLE[op.state]} {what} on {op.hostLabel}
        </h2>
        <span className="muted" data-testid="restart-elapsed">
          {formatDuration(op.elapsedMs)}
        </span>
      </header>
      <p className="restart-summary" data-testid="restart-summary">
        {op.summary}
      </p>
      <p className="muted small">
        Requested by {op.requestedBy} · operation {op.id}
        {op.drain ? ' · with drain' : ''}
      </p>
      {op.link === 'down' && op.state === 'running' && (
        <p className="warn-box" role="status" data-testid="restart-link-down">
          Lost contact with {op.hostLabel}. Reconnecting and following on; nothing is claimed until it is seen
          again.
        </p>
      )}
      {op.failure && <FailureView op={op} />}
      <div className="restart-services">
        {op.stages.flat().map((role) => {
          const s = op.services.find((x) => x.role === role);
          return s ? <ServiceRun key={role} s={s} op={op} /> : null;
        })}
      </div>
      {cancelError && <p className="error-box">{cancelError}</p>}
      <footer>
        <span className="spacer" />
        {op.state === 'running' && (
          <button data-testid="restart-cancel" disabled={op.cancelRequested} onClick={cancel}>
            {op.cancelRequested ? 'Cancelling before the next step…' : 'Cancel restart'}
          </button>
        )}
        <button className="primary" data-testid="restart-close" onClick={hideRestart}>
          {op.state === 'running' ? 'Hide (keeps running)' : 'Close'}
        </button>
      </footer>
    </RestartModal>
  );
}

function tone(state: RestartOperation['state']): 'ok' | 'warn' | 'bad' | 'idle' {
  return state === 'succeeded' ? 'ok' : state === 'failed' ? 'bad' : state === 'running' ? 'idle' : 'warn';
}

function ServiceRun({ s, op }: { s: ServiceRestartView; op: RestartOperation }): React.JSX.Element {
  const now = op.startedAt + op.elapsedMs;
  return (
    <section className="restart-service" data-testid={`restart-service-${s.role}`} data-state={s.state}>
      <h3>
        {s.role} · <span className="unit">{s.unit}</span>{' '}
        {s.unitState && (
          <span className="muted" data-testid={`restart-unit-state-${s.role}`}>
            systemd: {s.unitState}
          </span>
        )}
      </h3>
      <ol className="restart-steps">
        {s.steps.map((st) => (
          <li
            key={st.kind}
            className={`step-${st.state}`}
            data-testid={`restart-step-${s.role}-${st.kind}`}
            data-state={st.state}
          >
            <span className="mark" aria-hidden>
              {STEP_MARK[st.state]}
            </span>
            <span className="label">{st.label}</span>
            <span className="timing muted">
              {st.startedAt !== undefined && st.endedAt !== undefined
                ? formatDuration(st.endedAt - st.startedAt)
                : st.state === 'running' && st.startedAt !== undefined
                  ? `${formatDuration(now - st.startedAt)}${st.deadlineAt ? ` · gives up in ${formatDuration(Math.max(0, st.deadlineAt - now))}` : ''}`
                  : ''}
            </span>
            {st.detail && <div className="detail">{st.detail}</div>}
          </li>
        ))}
      </ol>
      {s.progress && (
        <div
          className="restart-load"
          data-testid={`restart-progress-${s.role}`}
          data-phase={s.progress.phase}
        >
          <span className="bar" aria-hidden>
            <span
              className={`fill ${s.progress.fraction === null ? 'indeterminate' : ''}`}
              style={{ width: `${Math.round((s.progress.fraction ?? 1) * 100)}%` }}
            />
          </span>
          <span>{s.progress.label}</span>
        </div>
      )}
      <Journal s={s} />
    </section>
  );
}

/** A service's journal as it arrives, following the newest line unless scrolled up. */
export function Journal({ s }: { s: ServiceRestartView }): React.JSX.Element | null {
  const box = useRef<HTMLPreElement>(null);
  // Follow the newest line unless the operator scrolled up to read.
  const follow = useRef(true);
  const lines = s.journal.slice(-60);
  const last = lines.at(-1);
  useEffect(() => {
    const el = box.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [last?.ts, last?.text]);
  if (!lines.length) return null;
  return (
    <pre
      className="restart-journal"
      ref={box}
      data-testid={`restart-journal-${s.role}`}
      onScroll={(e) => {
        const el = e.currentTarget;
        follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {lines.map((l, i) => (
        <div key={`${l.ts}-${i}`} className={l.priority !== undefined && l.priority <= 3 ? 'bad' : undefined}>
          {l.text}
        </div>
      ))}
    </pre>
  );
}

function FailureView({ op }: { op: RestartOperation }): React.JSX.Element {
  const f = op.failure!;
  const [copied, setCopied] = useState(false);
  const copy = (text: string): void => {
    void navigator.clipboard
      ?.writeText(text)
      .then(() => setCopied(true))
      .catch(() => setCopied(false));
  };
  return (
    <div
      className={op.state === 'unknown' ? 'warn-box' : 'error-box'}
      role="alert"
      data-testid="restart-failure"
    >
      <p data-testid="restart-failure-message">
        <b>
          {f.role ? `${f.role}: ` : ''}
          {f.step === 'start' ? '' : `${f.step} step — `}
        </b>
        {f.message}
      </p>
      {f.result && <p data-testid="restart-failure-result">systemd Result={f.result}</p>}
      {f.hint && (
        <p className="hint" data-testid="restart-failure-hint">
          Next: {f.hint}
        </p>
      )}
      {f.sudoersLine && (
        <div className="restart-sudoers">
          <code data-testid="restart-sudoers">{f.sudoersLine}</code>
          <button className="link" onClick={() => copy(f.sudoersLine!)} data-testid="restart-copy-sudoers">
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      )}
      {f.journalTail && f.journalTail.length > 0 && (
        <details open data-testid="restart-failure-journal">
          <summary>Last journal lines</summary>
          <pre>{f.journalTail.join('\n')}</pre>
        </details>
      )}
    </div>
  );
}
