// The deployment's timeline: alerts, restarts, state changes, connection changes, newest first.
import type { AppEvent } from '@shared/domain';
import { formatClock } from '../format';
import { showAround } from '../state/ui';

export function EventList({
  events,
  limit,
  kinds,
  title = 'Events',
  testid = 'event-log',
  empty = 'No events yet. Alerts, restarts and state changes appear here and on every chart.',
}: {
  events: AppEvent[];
  limit: number;
  kinds?: AppEvent['kind'][];
  title?: string;
  testid?: string;
  empty?: string;
}): React.JSX.Element {
  const shown = events
    .filter((e) => !kinds || kinds.includes(e.kind))
    .slice(-limit)
    .reverse();
  return (
    <section className="card events" data-testid={testid}>
      <h2>{title}</h2>
      {shown.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <ul>
          {shown.map((e) => (
            <li key={e.id} className={`sev-${e.severity}`} data-testid="event-item" data-kind={e.kind}>
              <button
                className="link time"
                title="Show the journal around this moment"
                onClick={() => showAround(e.ts, e.role)}
              >
                {formatClock(e.ts)}
              </button>{' '}
              <span className="kind">{e.kind}</span> {e.title}
              {e.detail ? <span className="muted"> — {e.detail}</span> : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
