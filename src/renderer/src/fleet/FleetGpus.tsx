// A fleet's GPUs grouped by host, and within a host by the worker (unit, node rank) that runs on them, with
// each GPU's latest nvidia-smi figures (the per-host series `gpu.3.util@gpu-b`).
import type { DeploymentView } from '../state/store';
import { formatBytes, formatValue } from '../format';
import { gpusByHost, hostOrder, workerRows, type HostGpus } from './fleet-model';
import { workerKey } from './keys';
import type { GpuField } from '@shared/signals/spec';

export function FleetGpus({
  view,
  only,
}: {
  view: DeploymentView;
  /** Show this worker's GPUs only (the worker page). */
  only?: string;
}): React.JSX.Element {
  const rows = workerRows(view.summary, view.latest, view.dashboard).filter((r) => !only || r.id === only);
  const hosts = gpusByHost(rows, only ? [] : hostOrder(view.summary)).filter(
    (h) => h.workers.length > 0 || !only,
  );
  return (
    <div className="fleet-gpus" data-testid="fleet-gpus">
      {hosts.map((h) => (
        <HostGpuTable key={h.host} hg={h} view={view} />
      ))}
    </div>
  );
}

function HostGpuTable({ hg, view }: { hg: HostGpus; view: DeploymentView }): React.JSX.Element {
  // The snapshot's own GPU table is the origin's reading: it answers for the origin until its series arrive.
  const reading =
    hg.host === view.summary.host.id
      ? (i: number) => view.dashboard?.gpu.gpus.find((g) => g.index === i)
      : () => undefined;
  const fromReading = (i: number, field: GpuField): number | null | undefined => {
    const g = reading(i);
    if (!g) return undefined;
    const mib = (x: number | null) => (x === null ? null : x * 1024 * 1024);
    return {
      util: g.utilPct,
      mem_used: mib(g.memUsedMiB),
      mem_total: mib(g.memTotalMiB),
      temp: g.tempC,
      power: g.powerW,
    }[field];
  };
  const v = (i: number, field: GpuField): number | null => {
    const x = view.dashboard?.values[workerKey(`gpu.${i}.${field}`, hg.host)] ?? fromReading(i, field);
    return x === undefined || x === null || !Number.isFinite(x) ? null : x;
  };
  return (
    <section className="gpu-host card" data-testid={`gpu-host-${hg.host}`}>
      <h3 className="subsection">{hg.host}</h3>
      {hg.workers.length === 0 ? (
        <p className="muted">No worker of this deployment runs on this host.</p>
      ) : (
        <table className="gpu-table">
          <thead>
            <tr>
              <th>worker</th>
              <th>GPU</th>
              <th>util</th>
              <th>memory</th>
              <th>temp</th>
              <th>power</th>
            </tr>
          </thead>
          <tbody>
            {hg.workers.flatMap((w) =>
              (w.gpus.length ? w.gpus : [null]).map((g, i) => (
                <tr
                  key={`${w.id}-${w.unit}-${g ?? 'none'}`}
                  data-testid={`gpu-${hg.host}-${w.id}-${g ?? 'none'}`}
                >
                  <td>
                    {i === 0 ? (
                      <>
                        <b>{w.id}</b>{' '}
                        <span className="muted">
                          {w.unit}
                          {w.nodeRank > 0 ? ` · node rank ${w.nodeRank}` : ''}
                        </span>
                      </>
                    ) : null}
                  </td>
                  {g === null ? (
                    <td colSpan={5} className="muted">
                      GPUs not known (no CUDA_VISIBLE_DEVICES / --base-gpu-id discovery could read)
                    </td>
                  ) : (
                    <>
                      <td>{g}</td>
                      <td>{formatValue('percent', v(g, 'util'))}</td>
                      <td>
                        {formatBytes(v(g, 'mem_used'))} / {formatBytes(v(g, 'mem_total'))}
                      </td>
                      <td>{formatValue('celsius', v(g, 'temp'))}</td>
                      <td>{formatValue('watts', v(g, 'power'))}</td>
                    </>
                  )}
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}
