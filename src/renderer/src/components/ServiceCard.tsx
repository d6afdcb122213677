// One PD service at a glance: unit, systemd state, uptime, restarts, health, metrics.
import type { ServiceConfig, ServiceObservation } from '@shared/domain';
import { formatDuration } from '../format';

function stateTone(o?: ServiceObservation): 'ok' | 'warn' | 'bad' | 'idle' {
  const a = o?.systemd?.activeState;
  if (!a) return 'idle';
  if (a === 'active') return o?.health && !o.health.ok ? 'warn' : 'ok';
  if (a === 'failed') return 'bad';
  return 'warn';
}

export function ServiceCard({
  service,
  obs,
  now,
}: {
  service: ServiceConfig;
  obs?: ServiceObservation;
  now: number;
}): React.JSX.Element {
  const sd = obs?.systemd;
  const up =
    sd?.activeState === 'active' && sd.activeEnterTimestamp
      ? formatDuration(now - sd.activeEnterTimestamp)
      : '—';
  const tone = stateTone(obs);
  return (
    <section className={`card service-card tone-${tone}`} data-testid={`service-card-${service.role}`}>
      <header>
        <h2>{service.role}</h2>
        <span className="unit" title="systemd unit">
          {service.unit}
        </span>
      </header>
      <dl>
        <dt>State</dt>
        <dd data-testid="active-state">
          {sd ? (
            <>
              <span className={`pill pill-${tone}`}>{sd.activeState}</span> {sd.subState}
              {sd.result && sd.result !== 'success' ? ` (Result=${sd.result})` : ''}
            </>
          ) : (
            <span className="muted">{obs?.systemdError ?? 'waiting for first poll…'}</span>
          )}
        </dd>
        <dt>Uptime</dt>
        <dd data-testid="uptime">{up}</dd>
        <dt>Restarts</dt>
        <dd data-testid="restarts">{sd ? sd.nRestarts : '—'}</dd>
        <dt>Health</dt>
        <dd data-testid="health">
          {obs?.health ? (
            <span className={obs.health.ok ? 'ok' : 'bad'}>
              {obs.health.ok ? 'healthy' : obs.health.detail}
            </span>
          ) : (
            <span className="muted">not checked yet</span>
          )}
        </dd>
        <dt>Metrics</dt>
        <dd data-testid="metrics-state">
          {!obs?.metrics ? (
            <span className="muted">—</span>
          ) : obs.metrics.ok ? (
            <span className="ok">
              {obs.metrics.families} families · {obs.metrics.durationMs} ms
            </span>
          ) : (
            <span className="bad" title={obs.metrics.hint}>
              {obs.metrics.error}
              {obs.metrics.hint ? <span className="hint"> — {obs.metrics.hint}</span> : null}
            </span>
          )}
        </dd>
      </dl>
    </section>
  );
}
