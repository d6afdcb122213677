// The operator's saved settings as this window knows them: fetched once, then kept current by the `settings`
// event, so a change made in one window shows in every other. Theme and default chart range follow them here.
import { useSyncExternalStore } from 'react';
import type { SettingsState } from '@shared/contract';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { adoptSavedUi } from './ui';

export interface SettingsView {
  state: SettingsState | null;
  /** Why the settings could not be fetched at all (the backend is unreachable). */
  error?: string;
}

let view: SettingsView = { state: null };
const subs = new Set<() => void>();
let wired = false;

function set(next: SettingsView): void {
  view = next;
  if (next.state) adoptSavedUi(next.state.settings.ui);
  for (const s of subs) s();
}

/** Starts following the settings (idempotent); called once at boot. */
export function wireSettings(): void {
  if (wired) return;
  wired = true;
  api.on('settings', (s) => set({ state: s }));
  api.getSettings({}).then(
    (s) => set({ state: s }),
    (err: unknown) => set({ state: view.state, error: errorText(err).message }),
  );
}

/** After a request that returns the new state (the event brings it too; whichever comes first wins). */
export function settingsChanged(s: SettingsState): void {
  set({ state: s });
}

export function useSettings(): SettingsView {
  return useSyncExternalStore(
    (cb) => {
      subs.add(cb);
      return () => subs.delete(cb);
    },
    () => view,
  );
}
