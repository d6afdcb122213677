// The settings as an API service: it owns what is in effect, saves every change to the settings file, pushes
// each change to every window (`settings`), and hands each feature its section as a SettingCell (alert rules to
// the dashboard, restart settings to restarts, recording on/off and retention to the recorder). While the file is
// unusable the app runs on defaults, changes apply to this run only, and nothing is written over the file.
import type { Role } from '@shared/domain';
import type {
  Settings,
  SettingsChange,
  SettingsImportResult,
  SettingsProblem,
  SettingsRequests,
  SettingsState,
} from '@shared/api/settings';
import { ApiError } from '../api-error';
import type { SettingCell } from '../config/setting-cell';
import { defaultSettings } from '../config/settings-defaults';
import {
  SettingsStore,
  SettingsStoreError,
  serializeSettings,
  UNUSABLE_HINT,
} from '../config/settings-store';

export interface SettingsEventSink {
  emit(event: 'settings', state: SettingsState): unknown;
}

type Section = 'alerts' | 'restart' | 'recording';
type Listener = (prev: Settings, origin: object | undefined) => void;

export class SettingsService {
  readonly store: SettingsStore;
  private settings: Settings;
  private problem: SettingsProblem | undefined;
  private migratedFrom: number | undefined;
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly events: SettingsEventSink,
    file: string,
  ) {
    this.store = new SettingsStore(file);
    const l = this.store.loadSync();
    if (l.ok) {
      this.settings = l.settings;
      this.migratedFrom = l.migratedFrom;
    } else {
      this.settings = defaultSettings();
      this.problem = problemOf(l.error);
    }
  }

  get file(): string {
    return this.store.file;
  }

  current(): Settings {
    return this.settings;
  }

  state(): SettingsState {
    const s: SettingsState = { file: this.file, settings: structuredClone(this.settings) };
    if (this.problem) s.problem = { ...this.problem };
    if (this.migratedFrom !== undefined) s.migratedFrom = this.migratedFrom;
    return s;
  }

  /** One section for the feature that uses it; its set() saves, its onChange hears imports and other windows. */
  cell<K extends Section>(key: K): SettingCell<Settings[K]> {
    const origin = {};
    return {
      get: () => this.settings[key],
      set: (value) => this.change({ ...this.settings, [key]: structuredClone(value) }, origin),
      onChange: (fn) => {
        const l: Listener = (prev, from) => {
          if (from !== origin && JSON.stringify(prev[key]) !== JSON.stringify(this.settings[key]))
            fn(this.settings[key]);
        };
        this.listeners.add(l);
        return () => this.listeners.delete(l);
      },
    };
  }

  /** The units the operator picked on a host, by role, for discovery. */
  discoveryChoices(hostId: string): Partial<Record<Role, string>> {
    return { ...this.settings.discovery.choices[hostId] };
  }

  handlers(): SettingsRequests {
    return {
      getSettings: async () => this.state(),
      setUiSettings: async (a) => {
        const ui = { ...this.settings.ui };
        if (a.theme !== undefined) ui.theme = a.theme;
        if (a.chartRange !== undefined) ui.chartRange = a.chartRange;
        await this.change({ ...this.settings, ui });
        return this.state();
      },
      setDeploymentAlertRules: async (a) => {
        const deployments = { ...this.settings.alerts.deployments };
        if (a.rules === null) delete deployments[a.deploymentId];
        else deployments[a.deploymentId] = structuredClone(a.rules);
        await this.change({ ...this.settings, alerts: { ...this.settings.alerts, deployments } });
        return this.state();
      },
      setDiscoveryChoice: async (a) => {
        const choices = { ...this.settings.discovery.choices };
        const host = { ...choices[a.hostId] };
        if (a.unit === null) delete host[a.role];
        else host[a.role] = a.unit;
        if (Object.keys(host).length) choices[a.hostId] = host;
        else delete choices[a.hostId];
        await this.change({ ...this.settings, discovery: { choices } });
        return this.state();
      },
      exportSettings: async () => ({
        fileName: `pd-console-settings-${new Date().toISOString().slice(0, 10)}.json`,
        text: serializeSettings(this.settings),
      }),
      importSettings: (a) => this.import(a.text, a.dryRun === true),
      reloadSettings: () => this.reload(),
    };
  }

  private async import(text: string, dryRun: boolean): Promise<SettingsImportResult> {
    let parsed;
    try {
      parsed = this.store.parse(text, 'the imported file');
    } catch (err) {
      if (err instanceof SettingsStoreError)
        throw new ApiError(
          'bad-settings-file',
          err.message,
          'Nothing was changed. Fix the file (or export a fresh one from PD Console) and import it again.',
        );
      throw err;
    }
    // Sections the file leaves out keep their current values: a file with only alert rules shares only those.
    const next: Settings = { ...this.settings };
    for (const k of parsed.present) (next as unknown as Record<string, unknown>)[k] = parsed.settings[k];
    const changes = diffSettings(this.settings, next);
    if (dryRun) return { changes, applied: false, state: this.state() };
    if (this.problem)
      throw new ApiError('settings-unusable', `not imported: ${this.problem.message}`, this.problem.hint);
    let backup: string | undefined;
    try {
      backup = (await this.store.save(next, { backup: true })).backup;
    } catch (err) {
      if (err instanceof SettingsStoreError) {
        this.problem = problemOf(err);
        this.publish(this.settings, undefined);
      }
      throw err;
    }
    const prev = this.settings;
    this.settings = next;
    this.migratedFrom = undefined;
    this.publish(prev, undefined);
    return { changes, applied: true, backup, state: this.state() };
  }

  private async reload(): Promise<SettingsState> {
    const l = await this.store.load();
    const prev = this.settings;
    if (l.ok) {
      this.settings = l.settings;
      this.problem = undefined;
      this.migratedFrom = l.migratedFrom;
    } else this.problem = problemOf(l.error);
    this.publish(prev, undefined);
    return this.state();
  }

  private async change(next: Settings, origin?: object): Promise<void> {
    const prev = this.settings;
    this.settings = next;
    try {
      if (!this.problem) {
        await this.store.save(next);
        this.migratedFrom = undefined;
      }
    } catch (err) {
      // Broken or replaced by a newer PD Console since we read it: stop saving, say so, keep the change for this run.
      if (err instanceof SettingsStoreError) this.problem = problemOf(err);
      else {
        this.publish(prev, origin);
        throw new ApiError(
          'settings-not-saved',
          `could not save ${this.file}: ${(err as Error).message}`,
          'The change applies until PD Console quits. Check the disk and the folder permissions.',
        );
      }
    }
    this.publish(prev, origin);
  }

  private publish(prev: Settings, origin: object | undefined): void {
    for (const l of this.listeners) l(prev, origin);
    this.events.emit('settings', this.state());
  }
}

function problemOf(err: SettingsStoreError): SettingsProblem {
  const p: SettingsProblem = { message: err.message, hint: err.hint ?? UNUSABLE_HINT };
  if (err.line !== undefined) p.line = err.line;
  if (err.column !== undefined) p.column = err.column;
  return p;
}

/** Every value that differs, by path; rule lists are compared rule by rule (by id), not by position. */
export function diffSettings(a: Settings, b: Settings): SettingsChange[] {
  const fa = flatten(a);
  const fb = flatten(b);
  const out: SettingsChange[] = [];
  for (const path of new Set([...fa.keys(), ...fb.keys()])) {
    if (path === 'version') continue;
    const from = fa.get(path) ?? '(none)';
    const to = fb.get(path) ?? '(none)';
    if (from !== to) out.push({ path, from, to });
  }
  return out.sort((x, y) => x.path.localeCompare(y.path));
}

function flatten(v: unknown, prefix = '', out = new Map<string, string>()): Map<string, string> {
  const isRuleList =
    Array.isArray(v) &&
    v.every((x) => typeof x === 'object' && x !== null && typeof (x as { id?: unknown }).id === 'string');
  if (isRuleList && v.length > 0) {
    for (const r of v as Array<{ id: string }>) {
      const { id, ...rest } = r;
      flatten(rest, `${prefix}[${id}]`, out);
    }
  } else if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const entries = Object.entries(v);
    for (const [k, x] of entries) flatten(x, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, JSON.stringify(v));
  return out;
}
