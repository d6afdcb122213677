// One PD service at a glance: unit, systemd state, uptime, restarts, health, metrics — and, as a stage of
// the pipeline, its running and queued requests, its PD queues and its KV usage. A failing unit shows why (exit
// status, restarts, since when, its journal's last error and a way to the journal at the crash); a unit that
// cannot be read now shows what was last seen of it and when, greyed — never its old state as if current.
import type { Observation, ServiceConfig, ServiceObservation } from '@shared/domain';
import type { DashboardSnapshot } from '@shared/contract';
import { signalKey, type SignalKey } from '@shared/signals/spec';
import { formatClock, formatDuration, formatPct, formatTokens } from '../format';
import { navigate } from '../state/ui';
import { ServiceRestartButton } from '../restart/ServiceRestartButton';
import { QUEUE_LABEL, stageQueues } from './stage-queues';
import { healthText } from './health-text';
import { conditionOfObservation, conditionTone } from './condition';
import { unknownNow, clockAndAge, type ReadingClock } from './staleness';
import { unitFacts } from './unit-facts';
import { CrashLink } from './CrashLink';

export function ServiceCard({
  service,
  services,
  obs,
  latest,
  clock,
  dashboard,
  host,
  routerLists,
}: {
  service: ServiceConfig;
  /** Every service of the deployment (how it restarts is read from their shape). */
  services: readonly ServiceConfig[];
  obs?: ServiceObservation;
  latest?: Observation;
  clock: ReadingClock;
  dashboard?: DashboardSnapshot;
  /** The host it runs on, said where the deployment spans several. */
  host?: string;
  /** A router's own worker list, as discovery read it. */
  routerLists?: { prefill: number; decode: number; regular: number } | null;
}): React.JSX.Element {
  const role = service.role;
  const { now } = clock;
  const unknown = unknownNow({ role, obs, latest, clock });
  const sd = obs?.systemd;
  const health = healthText(obs?.health, sd, now);
  const up =
    sd?.activeState === 'active' && sd.activeEnterTimestamp
      ? formatDuration(now - sd.activeEnterTimestamp)
      : '—';
  const condition = conditionOfObservation(role, obs, latest, now);
  const facts = unitFacts(condition, obs);
  const tone = unknown ? 'idle' : conditionTone(condition);
  const v = (k: SignalKey): number | null | undefined => dashboard?.values[k];
  const ne = (k: SignalKey) => dashboard?.notExposed[k];
  const count = (k: SignalKey): React.ReactNode => {
    // Figures of a unit that cannot be read now are not shown as current, whatever the last push held.
    if (unknown) return <span className="muted">—</span>;
    const miss = ne(k);
    if (miss)
      return (
        <span
          className="muted"
          title={`not in this server's /metrics (${miss.why}); expected ${miss.expected.join(' or ')}`}
        >
          n/e
        </span>
      );
    const x = v(k);
    return x === null || x === undefined ? '—' : Math.round(x);
  };
  const kv = dashboard?.kv.find((k) => k.role === role);
  return (
    <section
      className={`card service-card tone-${tone}${unknown ? ' stale' : ''}`}
      data-testid={`service-card-${role}`}
      data-stale={unknown ? 'true' : 'false'}
      data-host={obs?.hostId ?? service.hostId}
    >
      <header>
        <h2>{role}</h2>
        <span className="unit" title={host ? 'systemd unit, and the host it runs on' : 'systemd unit'}>
          {service.unit}
          {host ? ` on ${host}` : ''}
        </span>
        <ServiceRestartButton service={service} services={services} compact />
      </header>
      {unknown ? (
        <p className="condition muted" data-testid="condition" data-kind="unknown" title={unknown.why}>
          {unknown.text}
          <span className="hint" data-testid="stale-why">
            {' '}
            — {unknown.why}
          </span>
        </p>
      ) : (
        <p className={`condition ${condition.tone}`} data-testid="condition" data-kind={condition.kind}>
          {condition.text}
          {condition.nextStep ? (
            <span className="hint" data-testid="condition-next">
              {' '}
              — {condition.nextStep}
            </span>
          ) : null}
        </p>
      )}
      <dl>
        <dt>State</dt>
        <dd data-testid="active-state">
          {unknown ? (
            <span className="muted">
              unknown — was {unknown.seenSystemd.activeState} {unknown.seenSystemd.subState}
            </span>
          ) : sd ? (
            <>
              <span className={`pill pill-${tone}`}>{sd.activeState}</span> {sd.subState}
              {sd.result && sd.result !== 'success' ? ` (Result=${sd.result})` : ''}
            </>
          ) : (
            <span className="muted">{obs?.systemdError ?? 'waiting for the first poll…'}</span>
          )}
        </dd>
        {facts.failing && !unknown ? (
          <>
            <dt>Since</dt>
            <dd data-testid="state-since">{facts.since !== null ? clockAndAge(facts.since, now) : '—'}</dd>
          </>
        ) : (
          <>
            <dt>Uptime</dt>
            <dd data-testid="uptime">{unknown ? <span className="muted">unknown</span> : up}</dd>
          </>
        )}
        <dt>Restarts</dt>
        <dd data-testid="restarts">
          {unknown ? (
            <span className="muted">
              {unknown.seenSystemd.nRestarts} at {formatClock(unknown.seenAt)}
            </span>
          ) : sd ? (
            sd.nRestarts
          ) : (
            '—'
          )}
        </dd>
        {facts.exitStatus !== undefined && !unknown && (
          <>
            <dt>Exit</dt>
            <dd data-testid="exit-status" className="bad">
              {/^\d+$/.test(facts.exitStatus) ? `status ${facts.exitStatus}` : facts.exitStatus}
            </dd>
          </>
        )}
        {facts.crashAt !== undefined && !unknown && (
          <>
            <dt>{facts.lastError ? 'Last error' : 'Exited'}</dt>
            <dd data-testid="last-error">
              {/* Said once: the condition's line quotes the error when it is the loop's. */}
              {facts.lastError && !facts.errorInCondition ? (
                <span className="error-line" title={facts.lastError.text}>
                  {facts.lastError.text}
                </span>
              ) : null}
              <span className="muted">{formatClock(facts.crashAt)}</span>{' '}
              <CrashLink ts={facts.crashAt} role={role} />
            </dd>
          </>
        )}
        <dt>Health</dt>
        <dd data-testid="health">
          {unknown ? (
            <span className="muted" data-stale="true">
              unknown
              {unknown.seenHealth
                ? ` — ${unknown.seenHealth.ok ? 'ok' : unknown.seenHealth.detail} at ${formatClock(unknown.seenHealth.checkedAt)}`
                : ''}
            </span>
          ) : (
            <span className={health.tone} data-stale={health.stale}>
              {health.text}
            </span>
          )}
        </dd>
        <dt>Metrics</dt>
        <dd data-testid="metrics-state">
          {!obs?.metrics ? (
            <span className="muted">—</span>
          ) : unknown ? (
            <span className="muted" title={obs.metrics.ok ? undefined : obs.metrics.error}>
              unknown
            </span>
          ) : obs.metrics.ok ? (
            <span className="ok">
              {obs.metrics.families} families · {obs.metrics.durationMs} ms
            </span>
          ) : condition.kind === 'serving' || condition.kind === 'not-answering' ? (
            <span className="bad" title={obs.metrics.hint}>
              {obs.metrics.error}
              {obs.metrics.hint ? <span className="hint"> — {obs.metrics.hint}</span> : null}
              {/* Since when nothing was read from it: the last scrape that answered, its age counting up. */}
              {'lastOkAt' in obs.metrics && obs.metrics.lastOkAt !== undefined ? (
                <span className="muted" data-testid="metrics-last-ok">
                  {' '}
                  · last good scrape {clockAndAge(obs.metrics.lastOkAt, now)}
                </span>
              ) : null}
            </span>
          ) : (
            // Not running, or still loading: nothing to scrape yet, and the condition above says why.
            <span className="muted" title={obs.metrics.error}>
              not answering ({condition.kind})
            </span>
          )}
        </dd>
        {role !== 'router' && (
          <>
            <dt>Requests</dt>
            <dd data-testid="stage-requests">
              <b data-testid="stage-running">{count(signalKey(role, 'running'))}</b> running ·{' '}
              <b data-testid="stage-queued">{count(signalKey(role, 'queued'))}</b> queued
            </dd>
            <dt>Queues</dt>
            <dd data-testid="stage-queues">
              {stageQueues(role).map((q, i) => (
                <span key={q} data-testid={`queue-${q}`}>
                  {i > 0 ? ' · ' : ''}
                  {QUEUE_LABEL[q]} <b>{count(signalKey(role, q))}</b>
                </span>
              ))}
            </dd>
            <dt>KV</dt>
            <dd data-testid="stage-kv">
              {unknown ? (
                <span className="muted">unknown</span>
              ) : kv && kv.ratio !== null ? (
                <span className="kv-inline">
                  <span className="bar" aria-hidden>
                    <span
                      className={`fill tone-${kv.ratio >= 0.9 ? 'bad' : kv.ratio >= 0.75 ? 'warn' : 'ok'}`}
                      style={{ width: `${Math.min(100, kv.ratio * 100)}%` }}
                    />
                  </span>
                  {formatPct(kv.ratio)} · {formatTokens(kv.usedTokens)} / {formatTokens(kv.capacityTokens)}
                </span>
              ) : (
                <span className="muted">{ne(signalKey(role, 'kv_ratio')) ? 'not exposed' : '—'}</span>
              )}
            </dd>
          </>
        )}
        {role === 'router' && (
          <>
            <dt>Workers</dt>
            <dd data-testid="stage-workers">
              {unknown
                ? 'unknown'
                : v('router.workers_total') !== undefined && v('router.workers_total') !== null
                  ? `${v('router.workers_healthy')} of ${v('router.workers_total')} healthy`
                  : '—'}
            </dd>
            {routerLists && (
              <>
                <dt>Lists</dt>
                <dd data-testid="router-lists">
                  {routerLists.prefill} prefill · {routerLists.decode} decode
                  {routerLists.regular > 0 ? ` · ${routerLists.regular} regular` : ''}
                </dd>
              </>
            )}
          </>
        )}
      </dl>
      <button
        className="link"
        data-testid={`open-service-${role}`}
        onClick={() => navigate({ name: 'service', role })}
      >
        Details, journal →
      </button>
    </section>
  );
}
