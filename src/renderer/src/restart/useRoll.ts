// Rolling-restart state in the renderer: rolls as the core pushed them (rollProgress), and which roll dialog or
// progress panel is open. A reload asks the core for the deployment's rolls, so a roll in progress is shown
// again where it was.
import { useSyncExternalStore } from 'react';
import type { RollOperation, RollTarget } from '@shared/contract';
import { api } from '../api/client';

interface RollUiState {
  rolls: Record<string, RollOperation & { deploymentId: string }>;
  dialog: { deploymentId: string; target: RollTarget } | null;
  /** Roll whose progress panel is open. */
  shown: string | null;
}

let state: RollUiState = { rolls: {}, dialog: null, shown: null };
const subs = new Set<() => void>();

function set(patch: Partial<RollUiState>): void {
  state = { ...state, ...patch };
  for (const s of subs) s();
}

export function useRollState(): RollUiState {
  return useSyncExternalStore(
    (cb) => {
      subs.add(cb);
      return () => subs.delete(cb);
    },
    () => state,
  );
}

export const isRunning = (op: RollOperation): boolean => op.state === 'running' || op.state === 'paused';

function upsert(deploymentId: string, op: RollOperation): void {
  set({ rolls: { ...state.rolls, [op.id]: { ...op, deploymentId } } });
}

let wired = false;
function wire(): void {
  if (wired) return;
  wired = true;
  api.on('rollProgress', (p) => upsert(p.deploymentId, p.operation));
}

/** Loads this deployment's rolls; re-opens the panel of a roll still running. */
export async function loadRolls(deploymentId: string): Promise<void> {
  wire();
  const ops = await api.listRolls({ deploymentId });
  for (const op of ops) upsert(deploymentId, op);
  const running = ops.find(isRunning);
  if (running && !state.shown) set({ shown: running.id });
}

export function openRollDialog(deploymentId: string, target: RollTarget): void {
  wire();
  set({ dialog: { deploymentId, target } });
}

export function closeRollDialog(): void {
  set({ dialog: null });
}

export function rollStarted(deploymentId: string, op: RollOperation): void {
  upsert(deploymentId, op);
  set({ shown: op.id, dialog: null });
}

export function showRoll(rollId: string): void {
  set({ shown: rollId, dialog: null });
}

export function hideRoll(): void {
  set({ shown: null });
}

export function runningRoll(s: RollUiState, deploymentId: string): RollOperation | undefined {
  return Object.values(s.rolls).find((o) => o.deploymentId === deploymentId && isRunning(o));
}

/** "the decode workers, one at a time" — what a target is in the dialog's title and the palette. */
export function rollTargetTitle(t: RollTarget, name?: string): string {
  return t.kind === 'deployment'
    ? 'the whole deployment'
    : t.kind === 'role'
      ? `every ${t.role} worker, one at a time`
      : (name ?? t.worker);
}
