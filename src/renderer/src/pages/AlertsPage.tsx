// Alerts: what is firing now, what fired before, the rules (editable, for every deployment or for this one
// only; saved in the settings file), desktop notifications, and the settings file (export/import).
import { useState } from 'react';
import type { AlertRule } from '@shared/contract';
import type { DeploymentView } from '../state/store';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { formatClock } from '../format';
import { notificationPermission, requestNotifications, type NotifyPermission } from '../state/notifications';
import { EventList } from '../components/EventList';
import { showAround } from '../state/ui';
import { settingsChanged, useSettings } from '../state/settings';
import { SettingsFileCard } from '../settings/SettingsFileCard';

const RULE_TEXT: Record<AlertRule['kind'], (r: AlertRule) => string> = {
  'kv-high': (r) => `KV usage above ${Math.round((r.threshold ?? 0.9) * 100)} % for ${r.forS ?? 0} s`,
  'service-inactive': (r) => `systemd unit not active for ${r.forS ?? 0} s`,
  'health-failing': (r) => `health/readiness check failing for ${r.forS ?? 0} s`,
  'restart-loop': (r) =>
    `${r.threshold ?? 3} or more restarts within ${Math.round((r.windowS ?? 600) / 60)} min`,
  'metrics-stale': (r) => `no successful /metrics scrape for ${r.forS ?? 15} s`,
  'transfer-failures': (r) =>
    `${r.threshold ?? 1}+ KV bootstrap/transfer failures within ${r.windowS ?? 60} s`,
  'queue-growing': (r) => `queues grew by ${r.threshold ?? 5}+ requests over ${r.forS ?? 120} s`,
};

export function AlertsPage({ view }: { view: DeploymentView }): React.JSX.Element {
  const active = view.dashboard?.alerts ?? [];
  const deploymentId = view.summary.deployment.id;
  const settings = useSettings().state;
  const own = settings?.settings.alerts.deployments[deploymentId];
  const [scope, setScope] = useState<'global' | 'deployment' | null>(null);
  // A recording under review is read-only: only the rules of every deployment can be edited from it.
  const review = view.summary.review !== undefined;
  // Open on the list that applies here: this deployment's own rules where it has them.
  const shown = review ? 'global' : (scope ?? (own ? 'deployment' : 'global'));
  const rules = !settings ? null : shown === 'deployment' ? (own ?? null) : settings.settings.alerts.rules;
  const [error, setError] = useState<string | null>(null);
  const [perm, setPerm] = useState<NotifyPermission>(notificationPermission());
  const fail = (err: unknown): void => setError(errorText(err).message);
  const save = (next: AlertRule[] | null): void => {
    setError(null);
    if (shown === 'global') api.setAlertRules({ rules: next ?? [] }).catch(fail);
    else api.setDeploymentAlertRules({ deploymentId, rules: next }).then(settingsChanged, fail);
  };
  const edit = (id: string, patch: Partial<AlertRule>): void => {
    if (rules) save(rules.map((r) => (r.id === id ? { ...r, ...patch } : r)));
  };
  return (
    <div className="page alerts-page" data-testid="page-alerts">
      <section className="card" data-testid="alerts-active">
        <h2>Firing now</h2>
        {active.length === 0 ? (
          <p className="muted" data-testid="alerts-none">
            Nothing is firing. Rules are evaluated after every poll.
          </p>
        ) : (
          <ul className="alert-list">
            {active.map((a) => (
              <li
                key={`${a.ruleId}|${a.role}`}
                className={`sev-${a.severity}`}
                data-testid="alert-item"
                data-rule={a.ruleId}
              >
                <strong>{a.title}</strong> <span className="muted">since {formatClock(a.since)}</span>
                <div>{a.detail}</div>
                <button className="link" onClick={() => showAround(a.since, a.role)}>
                  Journal around the start →
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="card" data-testid="notifications">
        <h2>Desktop notifications</h2>
        {perm === 'granted' && <p>On: warnings and errors raise a desktop notification.</p>}
        {perm === 'default' && (
          <button data-testid="notify-enable" onClick={() => void requestNotifications().then(setPerm)}>
            Enable desktop notifications
          </button>
        )}
        {perm === 'denied' && (
          <p className="muted">
            Blocked in this browser’s site settings; alerts still show here and as toasts.
          </p>
        )}
        {perm === 'unsupported' && (
          <p className="muted">This environment has no Notification API; alerts show here and as toasts.</p>
        )}
      </section>
      <section className="card" data-testid="alert-rules">
        <h2>Rules</h2>
        {!review && (
          <div className="settings-row" role="radiogroup" aria-label="Which rules">
            <label>
              <input
                type="radio"
                name="rule-scope"
                data-testid="rules-scope-global"
                checked={shown === 'global'}
                onChange={() => setScope('global')}
              />{' '}
              Every deployment{own ? ' (not used here: this deployment has its own rules)' : ''}
            </label>{' '}
            <label>
              <input
                type="radio"
                name="rule-scope"
                data-testid="rules-scope-deployment"
                checked={shown === 'deployment'}
                onChange={() => setScope('deployment')}
              />{' '}
              Only {view.summary.deployment.name}
            </label>
          </div>
        )}
        {error && <p className="error-box">{error}</p>}
        {!settings ? (
          <p className="muted">Loading rules…</p>
        ) : !rules ? (
          <p className="muted" data-testid="rules-own-none">
            This deployment uses the rules of every deployment.{' '}
            <button data-testid="rules-own-create" onClick={() => save(settings.settings.alerts.rules)}>
              Give it its own rules (starting from those)
            </button>
          </p>
        ) : (
          <table className="rules">
            <thead>
              <tr>
                <th>on</th>
                <th>rule</th>
                <th>roles</th>
                <th>severity</th>
                <th>threshold</th>
                <th>for / window (s)</th>
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.id} data-testid={`rule-${r.id}`}>
                  <td>
                    <input
                      type="checkbox"
                      checked={r.enabled}
                      aria-label={`enable ${r.id}`}
                      onChange={(e) => edit(r.id, { enabled: e.target.checked })}
                    />
                  </td>
                  <td>
                    <strong>{r.id}</strong>
                    <div className="muted small">{RULE_TEXT[r.kind](r)}</div>
                  </td>
                  <td>{r.roles.length ? r.roles.join(', ') : 'all'}</td>
                  <td>{r.severity}</td>
                  <td>
                    {r.threshold !== undefined ? (
                      <input
                        key={`${shown}-${r.threshold}`}
                        type="number"
                        step="any"
                        min={0}
                        defaultValue={r.threshold}
                        aria-label={`${r.id} threshold`}
                        data-testid={`rule-threshold-${r.id}`}
                        onBlur={(e) =>
                          Number.isFinite(e.target.valueAsNumber) &&
                          edit(r.id, { threshold: e.target.valueAsNumber })
                        }
                      />
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    <input
                      key={`${shown}-${r.forS ?? r.windowS}`}
                      type="number"
                      min={0}
                      defaultValue={r.forS ?? r.windowS}
                      aria-label={`${r.id} duration`}
                      onBlur={(e) =>
                        Number.isFinite(e.target.valueAsNumber) &&
                        edit(
                          r.id,
                          r.forS !== undefined
                            ? { forS: e.target.valueAsNumber }
                            : { windowS: Math.max(1, e.target.valueAsNumber) },
                        )
                      }
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {shown === 'deployment' && own && (
          <button data-testid="rules-own-drop" onClick={() => save(null)}>
            Use the rules of every deployment here again
          </button>
        )}
      </section>
      <SettingsFileCard />
      <EventList
        events={view.events}
        limit={100}
        kinds={['alert']}
        title="Alert history"
        testid="alert-history"
      />
    </div>
  );
}
