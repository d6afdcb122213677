// One service in detail: its condition (the card's, with the same evidence), systemd properties, its signals
// over time, and its live journal.
import { PropList } from '../components/PropList';
import { unitRows } from '../components/unit-rows';
import { healthText } from '../components/health-text';
import { readingClock } from '../components/staleness';
import type { Role } from '@shared/domain';
import { signalKey } from '@shared/signals/spec';
import type { DeploymentView } from '../state/store';
import { formatBytes } from '../format';
import { JournalView } from '../components/JournalView';
import { TimeChart } from '../charts/TimeChart';
import { RestartButton } from '../restart/RestartButton';
import { RouterWorkers } from '../components/RouterWorkers';

export function ServicePage({
  view,
  role,
  now,
}: {
  view: DeploymentView;
  role: Role;
  now: number;
}): React.JSX.Element {
  const { deployment } = view.summary;
  const svc = deployment.services.find((s) => s.role === role);
  const obs = view.latest?.services.find((s) => s.role === role);
  const sd = obs?.systemd;
  if (!svc)
    return (
      <div className="page" data-testid="service-page">
        <p className="error-box">This deployment has no {role} service.</p>
      </div>
    );
  const unit = unitRows({ role, obs, latest: view.latest, clock: readingClock(view, now) });
  const health = healthText(obs?.health, sd, now);
  // A unit that cannot be read now: its command line as last read.
  const shownSd = sd ?? obs?.lastSeen?.systemd;
  const props: Array<[string, React.ReactNode]> = [
    ['Unit', svc.unit],
    ...unit.rows,
    ['Memory', unit.stale ? '—' : formatBytes(sd?.memoryCurrentBytes ?? null)],
    [
      'ExecStart',
      shownSd?.execStart ? (
        <code className="exec" title={shownSd.execStart}>
          {commandLine(shownSd.execStart)}
        </code>
      ) : (
        '—'
      ),
    ],
    [
      'Health',
      unit.stale
        ? 'unknown'
        : !obs?.health
          ? '—'
          : // An ok read before the unit left the active state says when, as on the card.
            health.stale
            ? health.text
            : `${obs.health.ok ? 'ok' : 'failing'} — ${obs.health.detail}`,
    ],
  ];
  const ev = view.events;
  return (
    <div className="page service-page" data-testid="service-page" data-role={role}>
      <section className="card" data-testid="systemd-props" data-stale={unit.stale ? 'true' : 'false'}>
        <h2>
          {role} · {svc.unit} <RestartButton deploymentId={deployment.id} role={role} />
        </h2>
        {unit.condition}
        {!sd && !unit.stale && (
          <p className="muted">{obs?.systemdError ?? 'Waiting for the first systemctl show…'}</p>
        )}
        <PropList props={props} />
      </section>
      {role === 'router' && (
        <RouterWorkers workers={view.dashboard?.routerWorkers} services={deployment.services} />
      )}
      <div className="chart-grid">
        {role === 'router' ? (
          <TimeChart
            id={`svc-${role}-rps`}
            title="Requests and 5xx"
            deploymentId={deployment.id}
            series={[
              { key: 'router.router_requests_per_s', label: 'requests/s', color: '--router' },
              { key: 'router.router_errors_per_s', label: '5xx/s', color: '--bad' },
            ]}
            unit="requests_per_s"
            role={role}
            events={ev}
          />
        ) : (
          <>
            <TimeChart
              id={`svc-${role}-reqs`}
              title="Running and queued requests"
              deploymentId={deployment.id}
              series={[
                { key: signalKey(role, 'running'), label: 'running', color: `--${role}` },
                { key: signalKey(role, 'queued'), label: 'queued', color: '--warn' },
              ]}
              unit="requests"
              role={role}
              events={ev}
            />
            <TimeChart
              id={`svc-${role}-kv`}
              title="KV usage"
              deploymentId={deployment.id}
              series={[{ key: signalKey(role, 'kv_ratio'), label: 'KV %', color: `--${role}`, fill: true }]}
              unit="ratio"
              yMin={0}
              yMax={1}
              role={role}
              events={ev}
            />
          </>
        )}
        <TimeChart
          id={`svc-${role}-up`}
          title="Active and healthy"
          deploymentId={deployment.id}
          series={[
            { key: signalKey(role, 'active'), label: 'active', color: '--ok' },
            { key: signalKey(role, 'health_ok'), label: 'healthy', color: '--accent', dash: [4, 3] },
          ]}
          unit="bool"
          yMin={0}
          yMax={1.05}
          role={role}
          events={ev}
        />
      </div>
      <JournalView deploymentId={deployment.id} role={role} />
    </div>
  );
}

/** systemctl show prints ExecStart as "{ path=… ; argv[]=… ; … }": the argv is what an operator reads. */
function commandLine(execStart: string): string {
  const m = /argv\[\]=(.*?) ; (?:ignore_errors|start_time)=/.exec(execStart);
  return m ? m[1] : execStart;
}
