// The deployment at a glance: connection, the three services, KV usage and its history.
import { useEffect, useState } from 'react';
import type { DeploymentView } from '../state/store';
import { removeDeployment } from '../state/store';
import { api } from '../api/client';
import { ConnectionIndicator } from '../components/ConnectionIndicator';
import { ServiceCard } from '../components/ServiceCard';
import { KvUsagePanel } from '../components/KvUsagePanel';
import { formatClock } from '../format';

export function Overview({ view }: { view: DeploymentView }): React.JSX.Element {
  const { deployment, host } = view.summary;
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const obsFor = (role: string) => view.latest?.services.find((s) => s.role === role);
  const close = (): void => {
    void api.closeDeployment({ deploymentId: deployment.id }).finally(() => removeDeployment(deployment.id));
  };
  return (
    <main className="overview">
      <header className="topbar">
        <div>
          <h1>{deployment.name}</h1>
          <span className="muted">
            {host.label}
            {view.latest ? ` · updated ${formatClock(view.latest.ts)}` : ''}
          </span>
        </div>
        <ConnectionIndicator status={view.connection} />
        <button onClick={close} data-testid="close-deployment">
          Close
        </button>
      </header>
      <div className="cards">
        {deployment.services.map((s) => (
          <ServiceCard key={s.role} service={s} obs={obsFor(s.role)} now={now} />
        ))}
      </div>
      <div className="kv-row">
        {deployment.services
          .filter((s) => s.role !== 'router')
          .map((s) => (
            <KvUsagePanel key={s.role} deploymentId={deployment.id} role={s.role} obs={obsFor(s.role)} />
          ))}
      </div>
      <section className="card events" data-testid="event-log">
        <h2>Events</h2>
        {view.events.length === 0 ? (
          <p className="muted">No events yet.</p>
        ) : (
          <ul>
            {view.events
              .slice(-12)
              .reverse()
              .map((e) => (
                <li key={e.id} className={`sev-${e.severity}`}>
                  <time>{formatClock(e.ts)}</time> {e.title}
                  {e.detail ? <span className="muted"> — {e.detail}</span> : null}
                </li>
              ))}
          </ul>
        )}
      </section>
    </main>
  );
}
