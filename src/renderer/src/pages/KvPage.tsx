// KV usage in depth: per server the token breakdown, forecast, source, and history with the capacity line.
import type { DeploymentView } from '../state/store';
import { KvUsagePanel } from '../components/KvUsagePanel';

export function KvPage({ view }: { view: DeploymentView }): React.JSX.Element {
  const { deployment } = view.summary;
  return (
    <div className="page kv-page" data-testid="page-kv">
      <div className="kv-row">
        {deployment.services
          .filter((s) => s.role !== 'router')
          .map((s) => (
            <KvUsagePanel
              key={s.role}
              deploymentId={deployment.id}
              role={s.role}
              obs={view.latest?.services.find((o) => o.role === s.role)}
              dashboard={view.dashboard}
              events={view.events}
              detailed
            />
          ))}
      </div>
    </div>
  );
}
