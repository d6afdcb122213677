// A role's tab: a role of one service is that service's page (its props, charts, GPUs and journal), as a 1P1D
// operator knows it; a role of several lists its workers — each row opens the worker's own page — with their
// KV beside the role's total, and several routers their cards.
import type { Role } from '@shared/domain';
import { serviceId } from '@shared/domain';
import type { DeploymentView } from '../state/store';
import { roleServices, routerRows, workerRows } from '../workers/fleet-model';
import { readingClock } from '../components/staleness';
import { RoleGroup } from '../workers/RoleGroup';
import { RouterCards } from '../workers/RouterCards';
import { RoleKv } from '../workers/RoleKv';
import { WorkerPage } from './WorkerPage';
import '../workers/fleet.css';

export function RolePage({
  view,
  role,
  now,
}: {
  view: DeploymentView;
  role: Role;
  now: number;
}): React.JSX.Element {
  const { services } = roleServices(view.summary, role);
  if (services.length === 0)
    return (
      <div className="page" data-testid="role-page" data-role={role}>
        <p className="error-box">
          This deployment has no {role} service; the overview shows the ones it has.
        </p>
      </div>
    );
  // One router of a fleet is also its own page: its worker list, requests, journal — not a card to click.
  if (services.length === 1) return <WorkerPage view={view} id={serviceId(services[0])} now={now} />;
  const clock = readingClock(view, now);
  const rows = workerRows(view.summary, view.latest, view.dashboard, clock);
  return (
    <div className="page role-page" data-testid="role-page" data-role={role}>
      {role === 'router' ? (
        <RouterCards routers={routerRows(view.summary, view.latest, view.dashboard, clock)} />
      ) : (
        <>
          <RoleGroup role={role} rows={rows} expandAll />
          <RoleKv role={role} rows={rows.filter((r) => r.role === role)} view={view} />
        </>
      )}
    </div>
  );
}
