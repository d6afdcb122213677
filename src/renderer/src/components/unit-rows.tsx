// The head of a service page and of a fleet worker's page: the unit's condition with its next step, or — when it
// cannot be read now — what was last seen of it and when; the last error its journal printed with the way to the
// journal at the crash; then its systemd state rows, read as of the reading they come from.
import type { ReactNode } from 'react';
import type { Observation, ServiceObservation, Role } from '@shared/domain';
import { conditionOfObservation } from './condition';
import { clockAndAge, unknownNow, type ReadingClock } from './staleness';
import { unitFacts } from './unit-facts';
import { unitStateProps } from './unit-props';
import { CrashLink } from './CrashLink';
import { formatClock } from '../format';

export function unitRows(i: {
  role: Role;
  obs: ServiceObservation | undefined;
  latest: Observation | undefined;
  clock: ReadingClock;
  /** A fleet's worker (its service id): the journal opened at the crash is its units'. */
  worker?: string;
}): { condition: ReactNode; rows: [string, ReactNode][]; stale: boolean } {
  const { role, obs, latest, clock } = i;
  const { now } = clock;
  const unknown = unknownNow({ role, obs, latest, clock });
  const condition = conditionOfObservation(role, obs, latest, now);
  const facts = unitFacts(condition, obs);
  const rows: [string, ReactNode][] = [];
  if (unknown) {
    const line = (
      <p className="condition muted" data-testid="condition" data-kind="unknown">
        {unknown.text}
        <span className="hint"> — {unknown.why}</span>
      </p>
    );
    // What systemd said when it was last read, said as then.
    rows.push(['Read at', <span key="r">{clockAndAge(unknown.seenAt, now)}</span>]);
    for (const [k, v] of unitStateProps(unknown.seenSystemd, now, unknown.seen))
      rows.push([
        k,
        <span key={k} className="muted">
          {v}
        </span>,
      ]);
    return { condition: line, rows, stale: true };
  }
  const line = (
    <p className={`condition ${condition.tone}`} data-testid="condition" data-kind={condition.kind}>
      {condition.text}
      {condition.nextStep ? <span className="hint"> — {condition.nextStep}</span> : null}
    </p>
  );
  if (facts.crashAt !== undefined)
    rows.push([
      facts.lastError ? 'Last error' : 'Exited',
      <span key="e" data-testid="last-error">
        {facts.lastError && !facts.errorInCondition ? (
          <>
            <span className="error-line">{facts.lastError.text}</span>{' '}
          </>
        ) : null}
        <span className="muted">{formatClock(facts.crashAt)}</span>{' '}
        <CrashLink ts={facts.crashAt} role={role} worker={i.worker} />
      </span>,
    ]);
  rows.push(...unitStateProps(obs?.systemd, now, condition));
  return { condition: line, rows, stale: false };
}
