// One role's KV when it has several workers: the tokens each holds, fullest first, and one line per worker
// beside the role's total (the unscoped key sums the role's tokens), a large role's lines spread over several
// charts (kv-charts.ts). Shown on the KV page and the role's page.
import { memo, useMemo } from 'react';
import type { DeploymentView } from '../state/store';
import type { ServerRole } from '@shared/signals/spec';
import { TimeChart } from '../charts/TimeChart';
import { kvCharts } from './kv-charts';
import { formatPct, formatTokens } from '../format';
import { navigate } from '../state/ui';
import { kvTone } from '../components/kv-headline';
import { roleAggregate, sortByFullest, type WorkerRow } from './fleet-model';
import { WorkerHosts } from './WorkerHosts';
import './fleet.css';

/**
 * A chart re-renders only when its own props change: the page re-renders on every observation, while a
 * chart's lines are fed by the signals push itself (TimeChart appends in place), so those renders were waste.
 */
const KvChart = memo(TimeChart);

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
