// Restart settings: read-only mode (hides every restart action; the core refuses too), polkit instead of
// sudo, the stack order, and each step's timeout for servers and for the router.
import { useState } from 'react';
import type { RestartSettings, RestartSettingsPatch, RestartTimeouts, StackOrder } from '@shared/contract';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { openRestartSettings } from './useRestart';
import { useSettings } from '../state/settings';
import './restart.css';

const STEPS: Array<[keyof RestartTimeouts, string]> = [
  ['activeMs', 'become active'],
  ['healthMs', '/health 200'],
  ['routerMs', 'router healthy'],
  ['drainMs', 'drain'],
];

export function RestartSettingsPanel({ settings }: { settings: RestartSettings }): React.JSX.Element {
  const [error, setError] = useState<string | null>(null);
  const saved = useSettings().state;
  const save = (patch: RestartSettingsPatch): void => {
    setError(null);
    // The core pushes the new settings (restartSettings) to every client, this one included.
    api.setRestartSettings(patch).catch((err: unknown) => setError(errorText(err).message));
  };
  const minutes = (ms: number): number => Math.round((ms / 60_000) * 10) / 10;
  return (
    <div className="modal-backdrop" onClick={() => openRestartSettings(false)}>
      <div
        className="restart-dialog"
        role="dialog"
        aria-label="Restart settings"
        data-testid="restart-settings"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') openRestartSettings(false);
        }}
      >
        <h2>Restart settings</h2>
        <label>
          <input
            type="checkbox"
            data-testid="restart-setting-readonly"
            checked={settings.readOnly}
            disabled={settings.readOnlyLocked && settings.readOnly}
            onChange={(e) => save({ readOnly: e.target.checked })}
          />{' '}
          Read-only: hide every restart action
          {settings.readOnlyLocked && <span className="muted"> (locked on when PD Console started)</span>}
        </label>
        <label>
          <input
            type="checkbox"
            data-testid="restart-setting-polkit"
            checked={settings.polkit}
            onChange={(e) => save({ polkit: e.target.checked })}
          />{' '}
          polkit allows this user to manage the units: use <code>systemctl</code> without <code>sudo -n</code>
        </label>
        <label>
          Stack order (a roll takes one worker at a time, its roles in this order):{' '}
          <select
            data-testid="restart-setting-order"
            value={settings.stackOrder}
            onChange={(e) => save({ stackOrder: e.target.value as StackOrder })}
          >
            <option value="parallel">prefill and decode together, then the router</option>
            <option value="prefill-first">prefill, then decode, then the router</option>
            <option value="decode-first">decode, then prefill, then the router</option>
          </select>
        </label>
        <label>
          <input
            type="checkbox"
            checked={settings.stackIncludesRouter}
            onChange={(e) => save({ stackIncludesRouter: e.target.checked })}
          />{' '}
          A stack restart or a whole-deployment roll restarts the router last
        </label>
        <table className="restart-timeouts">
          <thead>
            <tr>
              <th>Gives up after (min)</th>
              {STEPS.map(([, label]) => (
                <th key={label}>{label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(['server', 'router'] as const).map((kind) => (
              <tr key={kind}>
                <th>{kind === 'server' ? 'prefill / decode' : 'router'}</th>
                {STEPS.map(([key]) => (
                  <td key={key}>
                    <input
                      type="number"
                      min={0.1}
                      step={0.5}
                      data-testid={`restart-timeout-${kind}-${key}`}
                      defaultValue={minutes(settings.timeouts[kind][key])}
                      onBlur={(e) => {
                        const v = Number(e.target.value);
                        if (v > 0) save({ timeouts: { [kind]: { [key]: Math.round(v * 60_000) } } });
                      }}
                    />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        {error && <p className="error-box">{error}</p>}
        {saved && (
          <p className="muted small" data-testid="restart-settings-saved">
            {saved.problem
              ? 'Not saved: the settings file cannot be used (see the banner); changes last until PD Console quits.'
              : `Saved in ${saved.file}; the CLI's restart uses them too.`}
          </p>
        )}
        <footer>
          <span className="spacer" />
          <button
            className="primary"
            onClick={() => openRestartSettings(false)}
            data-testid="restart-settings-close"
          >
            Done
          </button>
        </footer>
      </div>
    </div>
  );
}
