// The deployment at a glance: the verdict over the PD pipeline — router → prefill → (KV transfer) → decode —
// where a role of one service is that service's card, as a 1P1D operator knows it, and a role of several is
// its group (the aggregate over one row per worker); each host's link where there are several, the KV usage of
// each role shown as a card, what discovery could not place, and recent events.
import type { DeploymentView } from '../state/store';
import type { Role } from '@shared/domain';
import type { Fleet } from '@shared/fleet';
import type { ServerRole } from '@shared/signals/spec';
import { RouterLink, TransferLink, VerdictBox } from '../components/Pipeline';
import { ServiceCard } from '../components/ServiceCard';
import { KvUsagePanel } from '../components/KvUsagePanel';
import { EventList } from '../components/EventList';
import { readingClock } from '../components/staleness';
import { observationOf, roleServices, routerRows, spansHosts, workerRows } from '../workers/fleet-model';
import { HostLinks } from '../workers/HostLinks';
import { RoleGroup } from '../workers/RoleGroup';
import { RouterCards } from '../workers/RouterCards';
import { FleetProblems } from '../workers/FleetProblems';
import '../workers/fleet.css';

const SERVER_ROLES: ServerRole[] = ['prefill', 'decode'];

export function Overview({ view, now }: { view: DeploymentView; now: number }): React.JSX.Element {
  const { summary } = view;
  const { deployment } = summary;
  const clock = readingClock(view, now);
  const manyHosts = spansHosts(summary);
  const rows = workerRows(summary, view.latest, view.dashboard, clock);
  const routers = routerRows(summary, view.latest, view.dashboard, clock);
  const alone = (role: Role) => roleServices(summary, role).one;
  // A row of cards keeps the cards' proportions; groups need the width.
  const grouped = (['router', ...SERVER_ROLES] as Role[]).some((r) => !alone(r));
  const slot = (role: Role): React.JSX.Element => {
    const one = alone(role);
    if (one)
      return (
        <ServiceCard
          service={one}
          services={deployment.services}
          obs={observationOf(view.latest, one)}
          latest={view.latest}
          clock={clock}
          dashboard={view.dashboard}
          host={manyHosts ? one.hostId : undefined}
          routerLists={role === 'router' ? routers[0]?.lists : undefined}
        />
      );
    return role === 'router' ? <RouterCards routers={routers} /> : <RoleGroup role={role} rows={rows} />;
  };
  const kvCards = SERVER_ROLES.filter((role) => alone(role));
  return (
    <div className="page overview" data-testid="page-overview" data-fleet={grouped ? 'true' : 'false'}>
      <section className="pipeline" data-testid="pipeline" aria-label="PD pipeline">
        <VerdictBox dashboard={view.dashboard} />
        {manyHosts && <HostLinks summary={summary} now={now} />}
        <div className={grouped ? 'fleet-row' : 'pipe-row'}>
          {slot('router')}
          <RouterLink dashboard={view.dashboard} />
          {slot('prefill')}
          <TransferLink dashboard={view.dashboard} latest={view.latest} />
          {slot('decode')}
        </div>
      </section>
      <FleetProblems fleet={summary.fleet} />
      <RegularWorkers fleet={summary.fleet} />
      {kvCards.length > 0 && (
        <div className="kv-row">
          {kvCards.map((role) => (
            <KvUsagePanel
              key={role}
              deploymentId={deployment.id}
              role={role}
              obs={observationOf(view.latest, alone(role)!)}
              dashboard={view.dashboard}
              events={view.events}
            />
          ))}
        </div>
      )}
      <EventList events={view.events} limit={grouped ? 8 : 12} />
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
