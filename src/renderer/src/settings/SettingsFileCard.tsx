// The settings file on screen: where it is and whether it is in use, the theme and the range charts open on,
// and export/import so a team can share alert rules. Import shows what it will change before it changes it.
import { useState } from 'react';
import type { SettingsChange, ThemeChoice } from '@shared/contract';
import { SETTINGS_MAX_BYTES } from '@shared/api/settings';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { settingsChanged, useSettings } from '../state/settings';
import { applyTheme, RANGES, saveDefaultRange, type RangeId } from '../state/ui';
import './settings.css';

interface Pending {
  name: string;
  text: string;
  changes: SettingsChange[];
}

export function SettingsFileCard(): React.JSX.Element {
  const { state, error: loadError } = useSettings();
  const [error, setError] = useState<{ message: string; hint?: string } | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const fail = (err: unknown): void => setError(errorText(err));

  const exportFile = async (): Promise<void> => {
    setError(null);
    try {
      const e = await api.exportSettings({});
      const url = URL.createObjectURL(new Blob([e.text], { type: 'application/json' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = e.fileName;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      fail(err);
    }
  };

  const pick = async (file: File | undefined): Promise<void> => {
    setError(null);
    setDone(null);
    setPending(null);
    if (!file) return;
    // Judged by its size before it is read: a large file is not a settings file, and reading it would cost memory
    // here and (in the desktop app) a copy of it sent to the core.
    if (file.size > SETTINGS_MAX_BYTES) {
      setError({
        message: `${file.name} is ${file.size} bytes; a settings file is at most ${SETTINGS_MAX_BYTES} bytes (1 MiB), so it was not read`,
        hint: 'Choose a file written by “Export settings…” (here or in another PD Console).',
      });
      return;
    }
    try {
      const text = await file.text();
      const r = await api.importSettings({ text, dryRun: true });
      setPending({ name: file.name, text, changes: r.changes });
    } catch (err) {
      fail(err);
    }
  };

  const apply = async (): Promise<void> => {
    if (!pending) return;
    try {
      const r = await api.importSettings({ text: pending.text });
      settingsChanged(r.state);
      setDone(
        `Imported ${pending.name}: ${r.changes.length} change${r.changes.length === 1 ? '' : 's'}` +
          (r.backup ? `; the previous file is kept as ${r.backup}` : ''),
      );
      setPending(null);
    } catch (err) {
      fail(err);
    }
  };

  return (
    <section className="card" data-testid="settings-file">
      <h2>Settings</h2>
      {loadError && <p className="error-box">Could not read the settings: {loadError}</p>}
      {state && (
        <>
          <p className="muted small" data-testid="settings-path">
            Saved in <code>{state.file}</code>
            {state.migratedFrom !== undefined &&
              ` (format version ${state.migratedFrom}; rewritten as version 1 on the next change)`}
          </p>
          {state.problem && (
            <div className="error-box" data-testid="settings-problem">
              <p>{state.problem.message}</p>
              <p>{state.problem.hint}</p>
              <button
                data-testid="settings-reload"
                onClick={() => void api.reloadSettings({}).then(settingsChanged, fail)}
              >
                Reload settings file
              </button>
            </div>
          )}
          <div className="settings-row">
            <label>
              Theme{' '}
              <select
                data-testid="settings-theme"
                value={state.settings.ui.theme}
                onChange={(e) => applyTheme(e.target.value as ThemeChoice)}
              >
                <option value="system">follow the system</option>
                <option value="light">light</option>
                <option value="dark">dark</option>
              </select>
            </label>{' '}
            <label>
              Charts open on the last{' '}
              <select
                data-testid="settings-chart-range"
                value={state.settings.ui.chartRange}
                onChange={(e) => void saveDefaultRange(e.target.value as RangeId).catch(fail)}
              >
                {RANGES.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.label}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <div className="settings-row">
            <button data-testid="settings-export" onClick={() => void exportFile()}>
              Export settings…
            </button>{' '}
            <label className="button-like">
              Import settings…{' '}
              <input
                type="file"
                accept="application/json,.json"
                data-testid="settings-import-file"
                onChange={(e) => {
                  void pick(e.target.files?.[0]);
                  e.target.value = '';
                }}
              />
            </label>
          </div>
          {pending && (
            <div className="settings-preview" data-testid="settings-import-preview">
              {pending.changes.length === 0 ? (
                <p>{pending.name} holds the settings in effect now: nothing to change.</p>
              ) : (
                <>
                  <p>
                    Importing {pending.name} changes {pending.changes.length} setting
                    {pending.changes.length === 1 ? '' : 's'}:
                  </p>
                  <ul className="small" data-testid="settings-import-changes">
                    {pending.changes.map((c) => (
                      <li key={c.path}>
                        <code>{c.path}</code>: {c.from} → {c.to}
                      </li>
                    ))}
                  </ul>
                </>
              )}
              <button
                data-testid="settings-import-apply"
                disabled={pending.changes.length === 0}
                onClick={() => void apply()}
              >
                Import
              </button>{' '}
              <button data-testid="settings-import-cancel" onClick={() => setPending(null)}>
                Cancel
              </button>
            </div>
          )}
          {done && (
            <p className="muted" data-testid="settings-import-done">
              {done}
            </p>
          )}
        </>
      )}
      {error && (
        <p className="error-box" data-testid="settings-error">
          {error.message}
          {error.hint ? ` — ${error.hint}` : ''}
        </p>
      )}
    </section>
  );
}
