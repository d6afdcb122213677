// A role's tab in a fleet: the role is many workers, so its page lists them (each row opens the worker's own
// page) instead of describing one service. With one router — the common case — the Router tab is that router's
// own page (its worker list, requests, latency, journal), not a card to click through.
import type { Role } from '@shared/domain';
import type { DeploymentView } from '../state/store';
import { routerRows, workerRows } from './fleet-model';
import { readingClock } from '../components/staleness';
import { RoleGroup } from './RoleGroup';
import { RouterCards } from './RouterCards';
import { RoleKv } from './FleetKv';
import { WorkerPage } from './WorkerPage';
import './fleet.css';

export function FleetRolePage({
  view,
  role,
  now,
}: {
  view: DeploymentView;
  role: Role;
  now: number;
}): React.JSX.Element {
  const rows = workerRows(view.summary, view.latest, view.dashboard, readingClock(view, now));
  const routers =
    role === 'router' ? routerRows(view.summary, view.latest, view.dashboard, readingClock(view, now)) : [];
  if (routers.length === 1) return <WorkerPage view={view} id={routers[0].id} now={now} />;
  return (
    <div className="page fleet-role-page" data-testid="fleet-role-page" data-role={role}>
      {role === 'router' ? (
        <RouterCards routers={routers} />
      ) : (
        <>
          <RoleGroup role={role} rows={rows} expandAll />
          <RoleKv role={role} rows={rows.filter((r) => r.role === role)} view={view} />
        </>
      )}
    </div>
  );
}
