import type { WorkerRow } from './fleet-model';

/** A worker's host, and the other hosts a multi-node worker runs node ranks ≥ 1 on ("gpu-b +gpu-c"). */
export function WorkerHosts({ row }: { row: WorkerRow }): React.JSX.Element {
  return (
    <>
      {row.host}
      {[...new Set(row.units.map((u) => u.host))]
        .filter((h) => h !== row.host)
        .map((h) => (
          <span key={h} className="muted" title={`also runs node rank ≥ 1 on ${h}`}>
            {' '}
            +{h}
          </span>
        ))}
    </>
  );
}
