// Contract part: the operator's settings, kept in one versioned file (settings.json beside hosts.json) —
// alert rules (global and per deployment), restart settings, recording on/off and retention, theme, default
// chart range and the units the operator picked when discovery found several. Export/import share them as one
// file; every change is pushed to every open window as a `settings` event.
import type { Role } from '../domain';
import type { AlertRule } from './dashboard';
import type { RecordingSettings } from './recording';
import type { RestartTimeouts, StackOrder } from './restart';

/**
 * A settings file is small; a larger one is not ours. Every reader checks the size before reading: the core on
 * the open file, the page on the picked File, the API schema on the imported text.
 */
export const SETTINGS_MAX_BYTES = 1024 * 1024;

export type ThemeChoice = 'system' | 'light' | 'dark';
export const THEME_CHOICES = ['system', 'light', 'dark'] as const satisfies readonly ThemeChoice[];

export const CHART_RANGES = ['5m', '1h', '6h', '24h', 'all'] as const;
export type ChartRange = (typeof CHART_RANGES)[number];

/** The restart settings that persist (read-only locked on by a shell flag is of that run only). */
export interface StoredRestartSettings {
  readOnly: boolean;
  polkit: boolean;
  stackOrder: StackOrder;
  stackIncludesRouter: boolean;
  timeouts: { server: RestartTimeouts; router: RestartTimeouts };
}

/** Everything in the settings file (format version 1), with every section filled in. */
export interface Settings {
  version: 1;
  alerts: {
    /** The rules every deployment gets. */
    rules: AlertRule[];
    /** Deployment id → the rules that replace the global list for that deployment. */
    deployments: Record<string, AlertRule[]>;
  };
  restart: StoredRestartSettings;
  recording: RecordingSettings;
  ui: { theme: ThemeChoice; chartRange: ChartRange };
  /** Host id → role → the unit the operator chose when several units claim that role. */
  discovery: { choices: Record<string, Partial<Record<Role, string>>> };
}

/** Why the settings file is not used (the app runs on defaults and does not write over it). */
export interface SettingsProblem {
  message: string;
  hint: string;
  line?: number;
  column?: number;
}

export interface SettingsState {
  /** The settings file's path. */
  file: string;
  /** What is in effect now. */
  settings: Settings;
  /** Set while the file is broken or from a newer version: changes apply to this run only and are not saved. */
  problem?: SettingsProblem;
  /** The file was in an older format and will be rewritten in this one on the next save. */
  migratedFrom?: number;
}

export interface SettingsChange {
  /** Dotted path of what changes: "alerts.rules.decode-kv-high.threshold", "ui.theme". */
  path: string;
  from: string;
  to: string;
}

export interface SettingsImportResult {
  /** What importing changes (or changed), one entry per value. */
  changes: SettingsChange[];
  /** False for a preview (dryRun). */
  applied: boolean;
  /** Where the replaced file was kept. */
  backup?: string;
  state: SettingsState;
}

export interface SettingsExport {
  /** A file name to offer when saving it. */
  fileName: string;
  /** The settings as a settings file (the same format as settings.json). */
  text: string;
}

export interface SettingsRequests {
  getSettings(args: Record<string, never>): Promise<SettingsState>;
  setUiSettings(args: { theme?: ThemeChoice; chartRange?: ChartRange }): Promise<SettingsState>;
  /** The rules for one deployment only (they replace the global list there); null goes back to the global list. */
  setDeploymentAlertRules(args: { deploymentId: string; rules: AlertRule[] | null }): Promise<SettingsState>;
  /** Which unit plays `role` on `hostId` next time discovery finds several; null forgets the choice. */
  setDiscoveryChoice(args: { hostId: string; role: Role; unit: string | null }): Promise<SettingsState>;
  exportSettings(args: Record<string, never>): Promise<SettingsExport>;
  /** Validates `text` as a settings file; dryRun shows what would change, otherwise it replaces the settings. */
  importSettings(args: { text: string; dryRun?: boolean }): Promise<SettingsImportResult>;
  /** Reads the settings file again (after the operator fixed or moved it). */
  reloadSettings(args: Record<string, never>): Promise<SettingsState>;
}

export const SETTINGS_REQUESTS = [
  'getSettings',
  'setUiSettings',
  'setDeploymentAlertRules',
  'setDiscoveryChoice',
  'exportSettings',
  'importSettings',
  'reloadSettings',
] as const satisfies readonly (keyof SettingsRequests)[];

export interface SettingsEvents {
  settings: SettingsState;
}

export const SETTINGS_EVENTS = ['settings'] as const satisfies readonly (keyof SettingsEvents)[];
