// What discovery could not place: workers a router lists that no unit backs (with the exact fix, copyable), and
// units that run SGLang but no router lists. Both stay on the overview until the fleet changes.
import { useState } from 'react';
import type { Fleet } from '@shared/fleet';

export function FleetProblems({ fleet }: { fleet?: Fleet }): React.JSX.Element | null {
  if (!fleet || (fleet.unplaced.length === 0 && fleet.unrouted.length === 0)) return null;
  return (
    <section className="card fleet-problems" data-testid="fleet-problems">
      {fleet.unplaced.length > 0 && (
        <>
          <h2>Workers the console could not place</h2>
          <ul>
            {fleet.unplaced.map((u) => (
              <li key={`${u.url}|${u.listedBy.join(',')}`} data-testid="unplaced-worker" data-url={u.url}>
                <span className="bad" data-testid="unplaced-reason">
                  {u.reason}
                </span>
                <FixLine fix={u.fix} />
              </li>
            ))}
          </ul>
        </>
      )}
      {fleet.unrouted.length > 0 && (
        <>
          <h2>SGLang units no router lists</h2>
          <ul>
            {fleet.unrouted.map((u) => (
              <li key={`${u.host}/${u.unit}`} data-testid="unrouted-unit" data-unit={`${u.host}/${u.unit}`}>
                <b>
                  {u.host}/{u.unit}
                </b>{' '}
                <span className="muted">
                  ({u.role}, {u.apiUrl})
                </span>{' '}
                — <span className="warn">{u.reason}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function FixLine({ fix }: { fix: string }): React.JSX.Element {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = (): void => {
    // The clipboard needs a secure context and focus; when it refuses, the line stays selectable.
    navigator.clipboard
      .writeText(fix)
      .then(() => setCopied('yes'))
      .catch(() => setCopied('failed'));
  };
  return (
    <div className="fix-line">
      <span className="muted">fix:</span> <code data-testid="unplaced-fix">{fix}</code>{' '}
      <button className="link" data-testid="copy-fix" onClick={copy}>
        {copied === 'yes' ? 'copied' : copied === 'failed' ? 'select and copy it' : 'copy'}
      </button>
    </div>
  );
}
