// A fleet at a glance: the verdict, each host's link, the pipeline fanned out — routers → prefill workers →
// (KV transfer) → decode workers, each role one group with its aggregate — what could not be placed, and events.
import type { DeploymentView } from '../state/store';
import { EventList } from '../components/EventList';
import { RouterLink, TransferLink, VerdictBox } from '../components/Pipeline';
import { routerRows, workerRows } from './fleet-model';
import { readingClock } from '../components/staleness';
import { HostLinks } from './HostLinks';
import { RoleGroup } from './RoleGroup';
import { RouterCards } from './RouterCards';
import { FleetProblems } from './FleetProblems';
import type { Fleet } from '@shared/fleet';
import './fleet.css';

export function FleetOverview({ view, now }: { view: DeploymentView; now: number }): React.JSX.Element {
  const { summary } = view;
  const rows = workerRows(summary, view.latest, view.dashboard, readingClock(view, now));
  const routers = routerRows(summary, view.latest, view.dashboard, readingClock(view, now));
  return (
    <div className="page overview fleet-overview" data-testid="page-overview" data-fleet="true">
      <section className="pipeline" data-testid="fleet-pipeline" aria-label="PD pipeline of the fleet">
        <VerdictBox dashboard={view.dashboard} />
        <HostLinks summary={summary} now={now} />
        <div className="fleet-row">
          <RouterCards routers={routers} />
          <RouterLink dashboard={view.dashboard} />
          <RoleGroup role="prefill" rows={rows} />
          <TransferLink dashboard={view.dashboard} latest={view.latest} />
          <RoleGroup role="decode" rows={rows} />
        </div>
      </section>
      <FleetProblems fleet={summary.fleet} />
      <RegularWorkers fleet={summary.fleet} />
      <EventList events={view.events} limit={8} />
    </div>
  );
}

/** Plain (non-PD) workers a router also lists: not part of the pipeline, but served by the same router. */
function RegularWorkers({ fleet }: { fleet?: Fleet }): React.JSX.Element | null {
  const regular = fleet?.workers.filter((w) => w.role === 'regular') ?? [];
  if (regular.length === 0) return null;
  return (
    <section className="card" data-testid="regular-workers">
      <h2>Regular (non-PD) workers the router lists</h2>
      <ul>
        {regular.map((w) => (
          <li key={w.url}>
            <b>{w.url}</b> <span className="muted">on {w.host || 'an unknown host'}</span>
            {w.unreachable ? <span className="bad"> — {w.unreachable}</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
