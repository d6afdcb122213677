// What the app runs on where the settings file says nothing (or cannot be read): each feature's own defaults.
import type { Settings } from '@shared/api/settings';
import type { SettingsFile } from '@shared/schemas/settings';
import { DEFAULT_ALERT_RULES } from '../alerts/rules';
import { defaultSettings as defaultRestartSettings } from '../actions/restart-settings';
import { DEFAULT_RECORDING_SETTINGS } from '../services/recording';

export function defaultSettings(): Settings {
  const { readOnlyLocked: _locked, ...restart } = defaultRestartSettings();
  return {
    version: 1,
    alerts: { rules: DEFAULT_ALERT_RULES.map((r) => ({ ...r, roles: [...r.roles] })), deployments: {} },
    restart,
    recording: { ...DEFAULT_RECORDING_SETTINGS },
    ui: { theme: 'system', chartRange: '5m' },
    discovery: { choices: {} },
  };
}

/** A validated file with every section and field it leaves out taken from the defaults. */
export function withDefaults(file: SettingsFile): Settings {
  const d = defaultSettings();
  const r = file.restart ?? {};
  return {
    version: 1,
    alerts: {
      rules: file.alerts?.rules ?? d.alerts.rules,
      deployments: file.alerts?.deployments ?? {},
    },
    restart: {
      readOnly: r.readOnly ?? d.restart.readOnly,
      polkit: r.polkit ?? d.restart.polkit,
      stackOrder: r.stackOrder ?? d.restart.stackOrder,
      stackIncludesRouter: r.stackIncludesRouter ?? d.restart.stackIncludesRouter,
      timeouts: {
        server: { ...d.restart.timeouts.server, ...r.timeouts?.server },
        router: { ...d.restart.timeouts.router, ...r.timeouts?.router },
      },
    },
    recording: { ...d.recording, ...file.recording },
    ui: { ...d.ui, ...file.ui },
    discovery: { choices: file.discovery?.choices ?? {} },
  };
}
