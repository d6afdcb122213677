// The deployment at a glance: the PD pipeline with its verdict, KV usage of both servers, recent events.
import type { DeploymentView } from '../state/store';
import { Pipeline } from '../components/Pipeline';
import { KvUsagePanel } from '../components/KvUsagePanel';
import { EventList } from '../components/EventList';
import { FleetOverview } from '../fleet/FleetOverview';
import { isFleetDeployment } from '../fleet/fleet-model';
import { readingClock } from '../components/staleness';

export function Overview({ view, now }: { view: DeploymentView; now: number }): React.JSX.Element {
  // A fleet fans out into groups of workers; the one-host pair keeps its three cards.
  if (isFleetDeployment(view.summary)) return <FleetOverview view={view} now={now} />;
  const { deployment } = view.summary;
  const obsFor = (role: string) => view.latest?.services.find((s) => s.role === role);
  return (
    <div className="page overview" data-testid="page-overview">
      <Pipeline
        deployment={deployment}
        latest={view.latest}
        dashboard={view.dashboard}
        clock={readingClock(view, now)}
      />
      <div className="kv-row">
        {deployment.services
          .map((s) => s.role)
          .filter((role) => role !== 'router')
          .map((role) => (
            <KvUsagePanel
              key={role}
              deploymentId={deployment.id}
              role={role}
              obs={obsFor(role)}
              dashboard={view.dashboard}
              events={view.events}
            />
          ))}
      </div>
      <EventList events={view.events} limit={12} />
    </div>
  );
}
