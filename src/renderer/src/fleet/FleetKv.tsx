// The KV page of a fleet: per role one line per worker beside the role's total (the unscoped key sums the
// role's tokens), the tokens each worker holds, fullest first, and decode's retractions for the whole role.
// A large role's lines are spread over several charts (kv-charts.ts).
import { memo, useMemo } from 'react';
import type { DeploymentView } from '../state/store';
import type { ServerRole } from '@shared/signals/spec';
import { TimeChart, type SeriesSpec } from '../charts/TimeChart';
import { kvCharts } from './kv-charts';
import { formatPct, formatTokens } from '../format';
import { navigate } from '../state/ui';
import { kvTone } from '../components/kv-headline';
import { roleAggregate, sortByFullest, workerRows, type WorkerRow } from './fleet-model';
import { WorkerHosts } from './WorkerHosts';
import './fleet.css';

const ROLES: ServerRole[] = ['prefill', 'decode'];
const RETRACTIONS: SeriesSpec[] = [
  { key: 'decode.retracted_per_min', label: 'retractions / min', color: '--bad' },
];

/**
 * A chart re-renders only when its own props change: the page re-renders on every observation, while a
 * chart's lines are fed by the signals push itself (TimeChart appends in place), so those renders were waste.
 */
const KvChart = memo(TimeChart);

export function FleetKv({ view }: { view: DeploymentView }): React.JSX.Element {
  const { deployment } = view.summary;
  const rows = workerRows(view.summary, view.latest, view.dashboard);
  return (
    <div className="page kv-page fleet-kv" data-testid="page-kv" data-fleet="true">
      {ROLES.filter((role) => rows.some((r) => r.role === role)).map((role) => (
        <RoleKv key={role} role={role} rows={rows.filter((r) => r.role === role)} view={view} />
      ))}
      {rows.some((r) => r.role === 'decode') && (
        <div className="kv-row">
          <KvChart
            id="retractions-decode"
            title="decode retractions per minute, all workers (KV cache full)"
            deploymentId={deployment.id}
            series={RETRACTIONS}
            unit="per_min"
            yMin={0}
            role="decode"
            events={view.events}
            height={160}
          />
        </div>
      )}
    </div>
  );
}

/** One role's KV: its workers' tokens, fullest first, and one line per worker beside the role's total. */
export function RoleKv({
  role,
  rows,
  view,
}: {
  role: ServerRole;
  rows: WorkerRow[];
  view: DeploymentView;
}): React.JSX.Element {
  const agg = roleAggregate(rows, role);
  // The charts' series depend on the workers' ids only: the same arrays from one observation to the next.
  const ids = rows.map((r) => r.id).join('\n');
  const charts = useMemo(() => kvCharts(role, ids ? ids.split('\n') : []), [role, ids]);
  return (
    <section className="card fleet-kv-role" data-testid={`fleet-kv-${role}`}>
      <header>
        <h2>{role} KV cache</h2>
        <span data-testid="fleet-kv-total">
          all {agg.workers} workers: {formatPct(agg.ratio)} · {formatTokens(agg.usedTokens)} /{' '}
          {formatTokens(agg.capacityTokens)} tokens
        </span>
      </header>
      <div className="kv-row">
        <table className="worker-rows" data-testid={`fleet-kv-table-${role}`}>
          <thead>
            <tr>
              <th>worker</th>
              <th>host</th>
              <th>KV</th>
              <th>used / capacity</th>
            </tr>
          </thead>
          <tbody>
            {sortByFullest(rows).map((r) => (
              <tr
                key={r.id}
                className={`worker-row tone-${r.tone}`}
                data-testid={`fleet-kv-row-${r.id}`}
                onClick={() => navigate({ name: 'worker', id: r.id })}
              >
                <td className="w-id">{r.id}</td>
                <td>
                  <WorkerHosts row={r} />
                </td>
                {r.unreachable ? (
                  <td colSpan={2} className="bad">
                    {r.unreachable}
                  </td>
                ) : (
                  <>
                    <td className={r.kv ? `tone-${kvTone(r.kv.ratio)}` : 'muted'}>
                      {formatPct(r.kv?.ratio)}
                    </td>
                    <td>
                      {formatTokens(r.kv?.usedTokens)} / {formatTokens(r.kv?.capacityTokens)}
                    </td>
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
        <div className="fleet-kv-charts">
          {charts.map((c) => (
            <KvChart
              key={c.id}
              id={c.id}
              title={c.title}
              deploymentId={view.summary.deployment.id}
              series={c.series}
              unit="ratio"
              yMin={0}
              yMax={1}
              role={role}
              events={view.events}
              height={200}
            />
          ))}
        </div>
      </div>
    </section>
  );
}
