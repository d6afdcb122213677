// What restarting a service cuts off, as list items: the in-place restart's plan and the roll's plan of each
// worker show the same figures (the monitor's latest scrapes of it and of the router), with why one is missing.
import type { RestartImpact } from '@shared/contract';
import type { Role } from '@shared/domain';

function count(n: number | null, what: string): string {
  return n === null ? `${what}: unknown` : `${n} ${what}`;
}

/** `notes` false: the caller lists the notes itself, after its own items. */
export function ImpactItems({
  role,
  impact,
  notes = true,
}: {
  role: Role;
  impact: RestartImpact;
  notes?: boolean;
}): React.JSX.Element {
  return (
    <>
      {role === 'router' ? (
        <li>{count(impact.inFlightAtRouter, 'request(s) in flight at the router')} will get errors</li>
      ) : (
        <>
          <li>{count(impact.runningOnWorker, 'running request(s)')} on the worker will be cut off</li>
          <li>{count(impact.queuedOnWorker, 'queued request(s)')}</li>
          <li>{count(impact.inFlightAtRouter, 'request(s) in flight to it at the router')}</li>
        </>
      )}
      {notes &&
        impact.notes.map((n) => (
          <li key={n} className="muted">
            {n}
          </li>
        ))}
    </>
  );
}
