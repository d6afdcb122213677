// KV usage in depth, per server role: a role of one service its token breakdown, forecast, source, and history
// with the capacity line (with DP attention one line per dp rank); a role of several workers each worker's
// tokens beside the role's total. Then decode's retractions, which is what a full KV pool turns into.
import { memo } from 'react';
import type { DeploymentView } from '../state/store';
import { KvUsagePanel } from '../components/KvUsagePanel';
import { TimeChart } from '../charts/TimeChart';
import type { ServerRole, SignalKey } from '@shared/signals/spec';
import { observationOf, roleServices, workerRows } from '../workers/fleet-model';
import { RoleKv } from '../workers/RoleKv';

const ROLES: ServerRole[] = ['prefill', 'decode'];

/** The page re-renders on every observation; a chart only when its own props change (its lines are pushed). */
const KvChart = memo(TimeChart);

export function KvPage({ view }: { view: DeploymentView }): React.JSX.Element {
  const { summary } = view;
  const { deployment } = summary;
  const rows = workerRows(summary, view.latest, view.dashboard);
  const src = (k: SignalKey): string | undefined => view.catalog?.[k]?.source;
  // Each server role with its services, read once: one service is its panel, several are the role's KV.
  const shapes = ROLES.map((role) => ({ role, ...roleServices(summary, role) })).filter(
    (r) => r.services.length > 0,
  );
  const singles = shapes.filter((r) => r.one);
  const decode = shapes.find((r) => r.role === 'decode');
  return (
    <div className="page kv-page" data-testid="page-kv">
      {singles.length > 0 && (
        <div className="kv-row">
          {singles.map(({ role, one }) => (
            <KvUsagePanel
              key={role}
              deploymentId={deployment.id}
              role={role}
              obs={observationOf(view.latest, one!)}
              dashboard={view.dashboard}
              events={view.events}
              detailed
            />
          ))}
        </div>
      )}
      {shapes
        .filter((r) => !r.one)
        .map(({ role }) => (
          <RoleKv key={role} role={role} rows={rows.filter((r) => r.role === role)} view={view} />
        ))}
      {decode && (
        <div className="kv-row">
          <KvChart
            id="retractions-decode"
            title={`decode retractions per minute${decode.one ? '' : ', all workers'} (KV cache full)`}
            deploymentId={deployment.id}
            series={RETRACTIONS}
            unit="per_min"
            yMin={0}
            role="decode"
            events={view.events}
            height={160}
            source={src('decode.retracted_per_min')}
          />
          {/* A log line's count over its own interval: one server's, it does not add up across workers. */}
          {decode.one && (
            <KvChart
              id="retracted-interval-decode"
              title="decode retracted in the last log interval (not a queue)"
              deploymentId={deployment.id}
              series={RETRACTED}
              unit="requests"
              yMin={0}
              role="decode"
              events={view.events}
              height={160}
              source={src('decode.retracted')}
            />
          )}
        </div>
      )}
    </div>
  );
}

const RETRACTIONS = [
  { key: 'decode.retracted_per_min' as const, label: 'retractions / min', color: '--bad' },
];
const RETRACTED = [{ key: 'decode.retracted' as const, label: 'retracted in the interval', color: '--warn' }];
