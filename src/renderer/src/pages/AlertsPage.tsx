// Alerts: what is firing now, what fired before, the rules (editable, for every deployment or for this one
// only; saved in the settings file), desktop notifications, and the settings file (export/import).
import { useState } from 'react';
import type { ActiveAlert, AlertRule } from '@shared/contract';
import type { DeploymentView } from '../state/store';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { formatClock, formatDuration } from '../format';
import { notificationPermission, requestNotifications, type NotifyPermission } from '../state/notifications';
import { EventList } from '../components/EventList';
import { showAround } from '../state/ui';
import { settingsChanged, useSettings } from '../state/settings';
import { SettingsFileCard } from '../settings/SettingsFileCard';
import './alerts.css';

const pctOf = (ratio: number): string => `${Math.round(ratio * 1000) / 10} %`;

/** What a rule does, in words: when it fires and when it clears (the defaults are the engine's, rules.ts). */
const RULE_TEXT: Record<AlertRule['kind'], (r: AlertRule) => string> = {
  'kv-high': (r) => {
    const th = r.threshold ?? 0.9;
    return `KV usage at or above ${pctOf(th)} for ${r.forS ?? 0} s; clears below ${pctOf(th - (r.margin ?? 0.02))} for ${r.clearForS ?? 30} s`;
  },
  'service-inactive': (r) =>
    `systemd unit not active for ${r.forS ?? 0} s; clears when active for ${r.clearForS ?? 5} s`,
  'health-failing': (r) =>
    `health/readiness check failing for ${r.forS ?? 0} s; clears when passing for ${r.clearForS ?? 15} s`,
  'restart-loop': (r) =>
    `${r.threshold ?? 3} or more restarts of one unit within ${Math.round((r.windowS ?? 600) / 60)} min`,
  'metrics-stale': (r) =>
    `no successful /metrics scrape for ${r.forS ?? 15} s (a lost link: one alert for its host); clears after ${r.clearForS ?? 10} s of scrapes`,
  'transfer-failures': (r) =>
    `${r.threshold ?? 1}+ KV bootstrap/transfer failures within ${r.windowS ?? 60} s`,
  'queue-growing': (r) => {
    const th = r.threshold ?? 5;
    return `queues trend up by ${th}+ requests over ${r.forS ?? 120} s; clears once they grow by less than ${th - (r.margin ?? th / 2)} for ${r.clearForS ?? 30} s`;
  },
};

/** kv-high thresholds are ratios in the rule and percentages on screen ("85" means 85 %, not 8,500 %). */
const IN_PERCENT: ReadonlySet<AlertRule['kind']> = new Set(['kv-high']);

export function AlertsPage({ view }: { view: DeploymentView }): React.JSX.Element {
  const active = view.dashboard?.alerts ?? [];
  const pending = view.dashboard?.pendingAlerts ?? [];
  // The round's time: while a host is unreachable the polls go on, so "no data for …" counts up with them.
  const now = view.dashboard?.ts ?? 0;
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
            {ordered(active).map((a) => (
              <AlertItem key={a.key} a={a} now={now} />
            ))}
          </ul>
        )}
      </section>
      {pending.length > 0 && (
        <section className="card" data-testid="alerts-pending">
          <h2>Pending</h2>
          <p className="muted small">
            Their condition holds, not yet for their rule’s hold time; each fires only if it still holds then.
          </p>
          <ul className="alert-list">
            {pending.map((a) => (
              <li key={a.key} className="alert-pending" data-testid="alert-pending" data-rule={a.ruleId}>
                <strong>{a.title}</strong>{' '}
                <span className="muted">
                  holds since {formatClock(a.since)}
                  {a.firesAt !== undefined ? `, fires at ${formatClock(a.firesAt)}` : ''}
                </span>
                {a.expected && (
                  <span className="pill alert-pill-expected">expected — restart in progress</span>
                )}
                <div>{a.detail}</div>
                {a.expected && (
                  <div className="muted small">{a.expected}: it fires only if it still holds after.</div>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
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
                      <label className="rule-threshold">
                        <input
                          key={`${shown}-${r.threshold}`}
                          type="number"
                          step="any"
                          min={0}
                          max={IN_PERCENT.has(r.kind) ? 100 : undefined}
                          defaultValue={
                            IN_PERCENT.has(r.kind) ? Math.round(r.threshold * 1000) / 10 : r.threshold
                          }
                          aria-label={`${r.id} threshold${IN_PERCENT.has(r.kind) ? ' (%)' : ''}`}
                          data-testid={`rule-threshold-${r.id}`}
                          onBlur={(e) => {
                            const v = e.target.valueAsNumber;
                            if (!Number.isFinite(v)) return;
                            if (IN_PERCENT.has(r.kind) && (v < 0 || v > 100)) {
                              setError(`${r.id}: the threshold is a percentage of the KV cache, 0 to 100`);
                              return;
                            }
                            edit(r.id, { threshold: IN_PERCENT.has(r.kind) ? v / 100 : v });
                          }}
                        />
                        {IN_PERCENT.has(r.kind) ? ' %' : ''}
                      </label>
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

/** Alerts that need someone first; then those without fresh data; then those expected during a restart. */
function ordered(alerts: readonly ActiveAlert[]): ActiveAlert[] {
  const rank = (a: ActiveAlert): number => (a.expected ? 2 : a.noData ? 1 : 0);
  return [...alerts].sort((a, b) => rank(a) - rank(b));
}

function AlertItem({ a, now }: { a: ActiveAlert; now: number }): React.JSX.Element {
  const state = a.expected ? 'expected' : a.noData ? 'no-data' : 'firing';
  return (
    <li
      className={`sev-${a.severity} alert-${state}`}
      data-testid="alert-item"
      data-rule={a.ruleId}
      data-key={a.key}
      data-state={state}
    >
      <strong>{a.title}</strong> <span className="muted">since {formatClock(a.since)}</span>{' '}
      {a.expected && (
        <span className="pill alert-pill-expected" data-testid="alert-expected">
          expected — restart in progress
        </span>
      )}
      {a.noData && (
        <span
          className="pill alert-pill-nodata"
          data-testid="alert-no-data"
          title={`Last data at ${formatClock(a.noData.since)}: the alert stays as last known until fresh data shows it clear`}
        >
          no data for {formatDuration(Math.max(0, now - a.noData.since))} — {a.noData.reason}
        </span>
      )}
      <div>{a.detail}</div>
      {a.expected && (
        <div className="muted small">
          {a.expected}: not notified; once it ends, this alert resolves or fires as usual.
        </div>
      )}
      <button className="link" onClick={() => showAround(a.since, a.role)}>
        Journal around the start →
      </button>
    </li>
  );
}
