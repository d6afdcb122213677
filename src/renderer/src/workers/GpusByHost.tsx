// The GPUs of a deployment by host, each GPU with the worker (unit, node rank) that runs on it and its latest
// nvidia-smi figures; a GPU no worker claims reads "unassigned", and a host whose nvidia-smi cannot be read says
// why and what to do. The host is named where the deployment spans several.
import type { DeploymentView } from '../state/store';
import type { GpuReading, GpuStatus } from '@shared/contract';
import { formatBytes, formatValue } from '../format';
import { gpusByHost, hostOrder, spansHosts, workerRows, type HostGpus } from './fleet-model';

type Owner = HostGpus['workers'][number];

export function GpusByHost({
  view,
  only,
}: {
  view: DeploymentView;
  /** Show this worker's GPUs only (its page). */
  only?: string;
}): React.JSX.Element {
  const all = workerRows(view.summary, view.latest, view.dashboard);
  // The only worker of its role is named by its role, as on its card.
  const perRole = new Map<string, number>();
  for (const r of all) perRole.set(r.role, (perRole.get(r.role) ?? 0) + 1);
  const nameOf = (w: Owner): string => (perRole.get(w.role) === 1 ? w.role : w.id);
  const rows = all.filter((r) => !only || r.id === only);
  const hosts = gpusByHost(rows, only ? [] : hostOrder(view.summary)).filter(
    (h) => h.workers.length > 0 || !only,
  );
  const named = spansHosts(view.summary);
  return (
    <div className="fleet-gpus" data-testid="fleet-gpus">
      {hosts.map((h) => (
        <HostGpuTable
          key={h.host}
          hg={h}
          status={view.dashboard?.gpu[h.host]}
          named={named}
          nameOf={nameOf}
          onlyOwned={only !== undefined}
        />
      ))}
    </div>
  );
}

function HostGpuTable({
  hg,
  status,
  named,
  nameOf,
  onlyOwned,
}: {
  hg: HostGpus;
  status: GpuStatus | undefined;
  named: boolean;
  nameOf: (w: Owner) => string;
  onlyOwned: boolean;
}): React.JSX.Element {
  const reading = new Map<number, GpuReading>((status?.gpus ?? []).map((g) => [g.index, g]));
  const owner = new Map<number, Owner>();
  for (const w of hg.workers) for (const g of w.gpus) if (!owner.has(g)) owner.set(g, w);
  const indices = [...new Set([...(onlyOwned ? [] : reading.keys()), ...owner.keys()])].sort((a, b) => a - b);
  const unknownGpus = hg.workers.filter((w) => w.gpus.length === 0);
  const mib = (x: number | null | undefined): number | null =>
    x === null || x === undefined ? null : x * 1024 * 1024;
  return (
    <section className="gpu-host card" data-testid={`gpu-host-${hg.host}`}>
      {named && <h3 className="subsection">{hg.host}</h3>}
      {status?.error && (
        <div className="error-box" data-testid="gpu-error">
          <strong>{status.error}</strong>
          {status.hint && <p>{status.hint}</p>}
        </div>
      )}
      {!status?.error && !status?.gpus.length && (
        <p className="muted" data-testid="gpu-waiting">
          {hg.workers.length === 0 && !status
            ? 'No worker of this deployment runs on this host.'
            : 'Waiting for the first nvidia-smi reading (every 5 s)…'}
        </p>
      )}
      {(indices.length > 0 || unknownGpus.length > 0) && (
        <table className="gpu-table" data-testid="gpu-table">
          <thead>
            <tr>
              <th>GPU</th>
              <th>worker</th>
              <th>util</th>
              <th>memory</th>
              <th>temp</th>
              <th>power</th>
            </tr>
          </thead>
          <tbody>
            {indices.map((i) => {
              const g = reading.get(i);
              const w = owner.get(i);
              return (
                <tr key={i} data-testid={`gpu-row-${i}`}>
                  <td>
                    {i} {g?.name && <span className="muted">{g.name}</span>}
                  </td>
                  <td>
                    {w ? (
                      <>
                        <b>{nameOf(w)}</b>{' '}
                        <span className="muted">
                          {w.unit}
                          {w.nodeRank > 0 ? ` · node rank ${w.nodeRank}` : ''}
                        </span>
                      </>
                    ) : (
                      <span className="muted">unassigned</span>
                    )}
                  </td>
                  <td>{formatValue('percent', g?.utilPct ?? null)}</td>
                  <td>
                    {formatBytes(mib(g?.memUsedMiB))} / {formatBytes(mib(g?.memTotalMiB))}
                  </td>
                  <td>{formatValue('celsius', g?.tempC ?? null)}</td>
                  <td>{formatValue('watts', g?.powerW ?? null)}</td>
                </tr>
              );
            })}
            {unknownGpus.map((w) => (
              <tr key={`${w.id}-${w.unit}`} data-testid={`gpu-unknown-${w.id}`}>
                <td>—</td>
                <td>
                  <b>{nameOf(w)}</b> <span className="muted">{w.unit}</span>
                </td>
                <td colSpan={4} className="muted">
                  GPUs not known (no CUDA_VISIBLE_DEVICES / --base-gpu-id discovery could read)
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
