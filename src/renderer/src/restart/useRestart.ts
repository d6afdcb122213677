// Restart state in the renderer: operations as the core pushed them (restartProgress), the restart settings,
// and which restart dialog or progress panel is open. A reload asks the core for the running operations, so
// a restart in progress is shown again where it was.
import { useSyncExternalStore } from 'react';
import type { RestartOperation, RestartSettings, RestartTarget } from '@shared/contract';
import type { Role } from '@shared/domain';
import { api } from '../api/client';
import { errorText } from '../api/errors';

interface RestartUiState {
  settings: RestartSettings | null;
  ops: Record<string, RestartOperation>;
  dialog: { deploymentId: string; target: RestartTarget } | null;
  /** Operation whose progress panel is open. */
  shown: string | null;
  settingsOpen: boolean;
  loadError: string | null;
}

const KEEP_OPS = 50;
let state: RestartUiState = {
  settings: null,
  ops: {},
  dialog: null,
  shown: null,
  settingsOpen: false,
  loadError: null,
};
const subs = new Set<() => void>();

function set(patch: Partial<RestartUiState>): void {
  state = { ...state, ...patch };
  for (const s of subs) s();
}

function subscribe(cb: () => void): () => void {
  subs.add(cb);
  return () => subs.delete(cb);
}

export function useRestartState(): RestartUiState {
  return useSyncExternalStore(subscribe, () => state);
}

function upsert(op: RestartOperation): void {
  const ops = { ...state.ops, [op.id]: op };
  const ids = Object.keys(ops);
  if (ids.length > KEEP_OPS) {
    // Drop the oldest finished ones; a running operation always stays.
    const old = ids
      .map((id) => ops[id])
      .filter((o) => o.state !== 'running')
      .sort((a, b) => a.startedAt - b.startedAt)
      .slice(0, ids.length - KEEP_OPS);
    for (const o of old) delete ops[o.id];
  }
  set({ ops });
}

let wired = false;
function wire(): void {
  if (wired) return;
  wired = true;
  api.on('restartProgress', upsert);
  api.on('restartSettings', (settings) => set({ settings }));
}

/** Loads the settings and this deployment's operations; re-opens the panel of a restart still running. */
export async function loadRestarts(deploymentId: string): Promise<void> {
  wire();
  try {
    const [settings, ops] = await Promise.all([
      api.getRestartSettings({}),
      api.listRestarts({ deploymentId }),
    ]);
    for (const op of ops) upsert(op);
    const running = ops.find((o) => o.state === 'running');
    set({ settings, loadError: null, ...(running && !state.shown ? { shown: running.id } : {}) });
  } catch (err) {
    set({ loadError: errorText(err).message });
  }
}

export function openRestartDialog(deploymentId: string, target: RestartTarget): void {
  set({ dialog: { deploymentId, target }, settingsOpen: false });
}

export function closeRestartDialog(): void {
  set({ dialog: null });
}

export function showRestart(operationId: string): void {
  set({ shown: operationId, dialog: null });
}

export function hideRestart(): void {
  set({ shown: null });
}

export function openRestartSettings(open = true): void {
  set({ settingsOpen: open, dialog: open ? null : state.dialog });
}

export function restartStarted(op: RestartOperation): void {
  upsert(op);
  showRestart(op.id);
}

/** The running operation that restarts `role` in this deployment, if any. */
export function runningFor(
  s: RestartUiState,
  deploymentId: string,
  role?: Role,
): RestartOperation | undefined {
  return Object.values(s.ops).find(
    (o) =>
      o.deploymentId === deploymentId &&
      o.state === 'running' &&
      (role === undefined || o.services.some((x) => x.role === role)),
  );
}

/** Restart actions are shown only once the settings are known and say restarts are allowed. */
export function actionsAllowed(s: RestartUiState): boolean {
  return s.settings !== null && !s.settings.readOnly;
}
