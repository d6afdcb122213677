// A role's tab in a fleet: the role is many workers, so its page lists them (each row opens the worker's own
// page) instead of describing one service.
import type { Role } from '@shared/domain';
import type { DeploymentView } from '../state/store';
import { routerRows, workerRows } from './fleet-model';
import { RoleGroup } from './RoleGroup';
import { RouterCards } from './RouterCards';
import { RoleKv } from './FleetKv';
import './fleet.css';

export function FleetRolePage({ view, role }: { view: DeploymentView; role: Role }): React.JSX.Element {
  const rows = workerRows(view.summary, view.latest, view.dashboard);
  return (
    <div className="page fleet-role-page" data-testid="fleet-role-page" data-role={role}>
      {role === 'router' ? (
        <RouterCards routers={routerRows(view.summary, view.latest)} />
      ) : (
        <>
          <RoleGroup role={role} rows={rows} expandAll />
          <RoleKv role={role} rows={rows.filter((r) => r.role === role)} view={view} />
        </>
      )}
    </div>
  );
}
