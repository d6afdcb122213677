// One service in detail — a worker or a router, by its service id: its condition (the card's, with the same
// evidence), systemd properties of node rank 0 and its command line, how the router sees it and its KV, its own
// series (beside its role's total where the role has several workers), its GPUs, and the journal of every one of
// its units. Where it runs on several hosts or nodes, a table of its units with each host's link; the journal
// lines are then labelled with their host and node rank.
import { PropList } from '../components/PropList';
import { unitRows } from '../components/unit-rows';
import type { DeploymentView } from '../state/store';
import { signalKey } from '@shared/signals/spec';
import { formatBytes, formatPct, formatTokens } from '../format';
import { TimeChart } from '../charts/TimeChart';
import { RouterWorkers } from '../components/RouterWorkers';
import { connectionText } from '../components/ConnectionIndicator';
import {
  hostLinks,
  observationOf,
  roleServices,
  routerRows,
  spansHosts,
  workerRows,
} from '../workers/fleet-model';
import { GpusByHost } from '../workers/GpusByHost';
import { workerKey } from '../workers/keys';
import { ServiceRestartButton } from '../restart/ServiceRestartButton';
import { JournalView } from '../components/JournalView';
import { healthText } from '../components/health-text';
import { readingClock } from '../components/staleness';
import '../workers/fleet.css';

export function WorkerPage({
  view,
  id,
  now,
}: {
  view: DeploymentView;
  id: string;
  now: number;
}): React.JSX.Element {
  const { deployment } = view.summary;
  const svc = deployment.services.find((s) => (s.id ?? s.role) === id);
  if (!svc)
    return (
      <div className="page" data-testid="worker-page">
        <p className="error-box">
          This deployment has no worker or router named {id}; the overview lists the ones it has.
        </p>
      </div>
    );
  const obs = observationOf(view.latest, svc);
  const clock = readingClock(view, now);
  const sd = obs?.systemd;
  const health = healthText(obs?.health, sd, now);
  const links = hostLinks(view.summary);
  const row =
    svc.role === 'router'
      ? undefined
      : workerRows(view.summary, view.latest, view.dashboard, clock).find((r) => r.id === id);
  const router =
    svc.role === 'router'
      ? routerRows(view.summary, view.latest, view.dashboard, clock).find((r) => r.id === id)
      : undefined;
  const unreachable = row?.unreachable ?? router?.unreachable;
  const units = row?.units ?? [
    { host: svc.hostId, unit: svc.unit, nodeRank: 0, activeState: sd?.activeState },
  ];
  const ev = view.events;
  const role = svc.role;
  const norm = (u: string): string => u.trim().toLowerCase().replace(/\/+$/, '');
  const atRouter =
    svc.workerUrl === undefined
      ? undefined
      : view.dashboard?.routerWorkers?.find((w) => norm(w.url) === norm(svc.workerUrl!));
  const unit = unitRows({ role: svc.role, obs, latest: view.latest, clock, worker: id });
  // Where it runs says itself in the heading on one host; on several hosts or nodes, its units' table does.
  const manyHosts = spansHosts(view.summary);
  const unitTable = manyHosts || units.length > 1;
  // The only one of its role: its series are the role's, named by the role as on its card.
  const alone = roleServices(view.summary, role).services.length === 1;
  const name = alone ? role : `${id} · ${role}`;
  const of = alone ? '' : ` (${id})`;
  // A unit that cannot be read now: its command line as last read.
  const shownSd = sd ?? obs?.lastSeen?.systemd;
  const props: Array<[string, React.ReactNode]> = [
    ...(unitTable ? [] : ([['Unit', svc.unit]] as Array<[string, React.ReactNode]>)),
    ['URL', svc.workerUrl ?? svc.apiUrl],
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
          : health.stale
            ? health.text
            : `${obs.health.ok ? 'ok' : 'failing'} — ${obs.health.detail}`,
    ],
  ];
  // How the router sees a worker, and the worker's KV: a router has neither.
  if (role !== 'router')
    props.push(
      [
        'Router',
        atRouter
          ? [
              atRouter.removed
                ? 'removed'
                : atRouter.healthy === null
                  ? 'health not reported'
                  : atRouter.healthy
                    ? 'healthy'
                    : 'unhealthy',
              atRouter.cbState ? `breaker ${atRouter.cbState}` : null,
              atRouter.activeRequests !== undefined ? `${atRouter.activeRequests} in flight` : null,
            ]
              .filter(Boolean)
              .join(' · ')
          : '—',
      ],
      [
        'KV',
        row?.kv
          ? `${formatPct(row.kv.ratio)} · ${formatTokens(row.kv.usedTokens)} / ${formatTokens(row.kv.capacityTokens)}`
          : '—',
      ],
    );
  return (
    <div
      className="page service-page worker-page"
      data-testid="worker-page"
      data-worker={id}
      data-role={role}
    >
      <section className="card" data-testid="worker-props" data-stale={unit.stale ? 'true' : 'false'}>
        <h2>
          {[name, manyHosts ? svc.hostId : null, svc.unit].filter(Boolean).join(' · ')}{' '}
          <ServiceRestartButton deploymentId={deployment.id} service={svc} services={deployment.services} />
        </h2>
        {unit.condition}
        {!sd && !unit.stale && !unreachable && (
          <p className="muted">{obs?.systemdError ?? 'Waiting for the first systemctl show…'}</p>
        )}
        {unreachable && !unit.stale && (
          <p className="error-box" data-testid="worker-unreachable">
            {unreachable}
          </p>
        )}
        {unitTable && (
          <table className="worker-units" data-testid="worker-units">
            <thead>
              <tr>
                <th>host</th>
                <th>unit</th>
                <th>node rank</th>
                <th>state</th>
                <th>GPUs</th>
                <th>link</th>
              </tr>
            </thead>
            <tbody>
              {units.map((u) => {
                const link = links.get(u.host);
                return (
                  <tr key={`${u.host}/${u.unit}`} data-testid={`worker-unit-${u.host}`}>
                    <td>{u.host}</td>
                    <td>{u.unit}</td>
                    <td>{u.nodeRank}</td>
                    <td>
                      {/* A unit on a host that cannot be read now: its state as discovered is not its state now. */}
                      {link && link.state !== 'connected' ? (
                        <span className="muted">unknown</span>
                      ) : (
                        (u.activeState ?? (u.nodeRank === 0 ? (sd?.activeState ?? '—') : '—'))
                      )}
                    </td>
                    <td>{u.gpus?.join(', ') ?? '—'}</td>
                    <td>{link ? connectionText(link, now).text : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        <PropList props={props} />
      </section>
      {role === 'router' && (
        <RouterWorkers workers={view.dashboard?.routerWorkers} services={deployment.services} />
      )}
      <div className="chart-grid">
        {role === 'router' ? (
          <TimeChart
            id={`worker-${id}-rps`}
            title={`Requests and 5xx${of}`}
            deploymentId={deployment.id}
            series={[
              { key: workerKey('router.router_requests_per_s', id), label: 'requests/s', color: '--router' },
              { key: workerKey('router.router_errors_per_s', id), label: '5xx/s', color: '--bad' },
            ]}
            unit="requests_per_s"
            role={role}
            events={ev}
          />
        ) : (
          <>
            <TimeChart
              id={`worker-${id}-reqs`}
              title={`Running and queued requests${of}`}
              deploymentId={deployment.id}
              series={[
                { key: workerKey(signalKey(role, 'running'), id), label: 'running', color: `--${role}` },
                { key: workerKey(signalKey(role, 'queued'), id), label: 'queued', color: '--warn' },
              ]}
              unit="requests"
              role={role}
              events={ev}
            />
            <TimeChart
              id={`worker-${id}-kv`}
              title={alone ? 'KV usage' : `KV usage: ${id} and all ${role} workers`}
              deploymentId={deployment.id}
              series={[
                {
                  key: workerKey(signalKey(role, 'kv_ratio'), id),
                  label: alone ? 'KV %' : `${id} KV %`,
                  color: `--${role}`,
                  fill: true,
                },
                ...(alone
                  ? []
                  : [
                      {
                        key: signalKey(role, 'kv_ratio'),
                        label: `all ${role} KV %`,
                        color: '--muted',
                        dash: [4, 3],
                      },
                    ]),
              ]}
              unit="ratio"
              yMin={0}
              yMax={1}
              role={role}
              events={ev}
            />
          </>
        )}
        <TimeChart
          id={`worker-${id}-up`}
          title={`Active and healthy${of}`}
          deploymentId={deployment.id}
          series={[
            { key: workerKey(signalKey(role, 'active'), id), label: 'active', color: '--ok' },
            {
              key: workerKey(signalKey(role, 'health_ok'), id),
              label: 'healthy',
              color: '--accent',
              dash: [4, 3],
            },
          ]}
          unit="bool"
          yMin={0}
          yMax={1.05}
          role={role}
          events={ev}
        />
      </div>
      {role !== 'router' && (
        <>
          <h2 className="section">GPUs</h2>
          <GpusByHost view={view} only={id} />
        </>
      )}
      {/* Live only: a review reads journals from the recording's own pane. */}
      {!view.summary.review && <JournalView deploymentId={deployment.id} role={role} worker={id} />}
    </div>
  );
}

/** systemctl show prints ExecStart as "{ path=… ; argv[]=… ; … }": the argv is what an operator reads. */
function commandLine(execStart: string): string {
  const m = /argv\[\]=(.*?) ; (?:ignore_errors|start_time)=/.exec(execStart);
  return m ? m[1] : execStart;
}
