// KV usage in depth: per server the token breakdown, forecast, source, and history with the capacity line; with
// DP attention one line per dp rank; and decode's retractions, which is what a full KV pool turns into.
import type { DeploymentView } from '../state/store';
import { KvUsagePanel } from '../components/KvUsagePanel';
import { TimeChart } from '../charts/TimeChart';
import type { SignalKey } from '@shared/signals/spec';
import { FleetKv } from '../fleet/FleetKv';
import { isFleetDeployment } from '../fleet/fleet-model';

export function KvPage({ view }: { view: DeploymentView }): React.JSX.Element {
  if (isFleetDeployment(view.summary)) return <FleetKv view={view} />;
  const { deployment } = view.summary;
  const hasDecode = deployment.services.some((s) => s.role === 'decode');
  const src = (k: SignalKey): string | undefined => view.catalog?.[k]?.source;
  return (
    <div className="page kv-page" data-testid="page-kv">
      <div className="kv-row">
        {deployment.services
          .map((s) => s.role)
          .filter((role) => role !== 'router')
          .map((role) => (
            <KvUsagePanel
              key={role}
              deploymentId={deployment.id}
              role={role}
              obs={view.latest?.services.find((o) => o.role === role)}
              dashboard={view.dashboard}
              events={view.events}
              detailed
            />
          ))}
      </div>
      {hasDecode && (
        <div className="kv-row">
          <TimeChart
            id="retractions-decode"
            title="decode retractions per minute (KV cache full)"
            deploymentId={deployment.id}
            series={[{ key: 'decode.retracted_per_min', label: 'retractions / min', color: '--bad' }]}
            unit="per_min"
            yMin={0}
            role="decode"
            events={view.events}
            height={160}
            source={src('decode.retracted_per_min')}
          />
          <TimeChart
            id="retracted-interval-decode"
            title="decode retracted in the last log interval (not a queue)"
            deploymentId={deployment.id}
            series={[{ key: 'decode.retracted', label: 'retracted in the interval', color: '--warn' }]}
            unit="requests"
            yMin={0}
            role="decode"
            events={view.events}
            height={160}
            source={src('decode.retracted')}
          />
        </div>
      )}
    </div>
  );
}
