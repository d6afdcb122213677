// Renderer state: what the core pushed, kept per deployment. The renderer renders this and nothing else.
import { useSyncExternalStore } from 'react';
import type { AppEvent, ConnectionStatus, DeploymentSummary, Observation } from '@shared/domain';
import type { AppInfo } from '@shared/contract';
import { api } from '../api/client';

export interface DeploymentView {
  summary: DeploymentSummary;
  connection: ConnectionStatus;
  latest?: Observation;
  events: AppEvent[];
}

export interface AppState {
  info?: AppInfo;
  deployments: Record<string, DeploymentView>;
  activeId?: string;
}

const MAX_EVENTS = 500;
let state: AppState = { deployments: {} };
const subs = new Set<() => void>();

function set(next: AppState): void {
  state = next;
  for (const s of subs) s();
}

export function useAppState(): AppState {
  return useSyncExternalStore(
    (cb) => {
      subs.add(cb);
      return () => subs.delete(cb);
    },
    () => state,
  );
}

export function getState(): AppState {
  return state;
}

export function setInfo(info: AppInfo): void {
  set({ ...state, info });
}

export function addDeployment(summary: DeploymentSummary, events: AppEvent[] = []): void {
  const id = summary.deployment.id;
  const prev = state.deployments[id];
  set({
    ...state,
    activeId: id,
    deployments: {
      ...state.deployments,
      [id]: {
        summary,
        connection: summary.connection,
        latest: summary.latest ?? prev?.latest,
        events: events.length ? events : (prev?.events ?? []),
      },
    },
  });
}

export function removeDeployment(id: string): void {
  const rest = { ...state.deployments };
  delete rest[id];
  set({
    ...state,
    deployments: rest,
    activeId: state.activeId === id ? Object.keys(rest)[0] : state.activeId,
  });
}

function update(id: string, f: (d: DeploymentView) => DeploymentView): void {
  const d = state.deployments[id];
  if (!d) return;
  set({ ...state, deployments: { ...state.deployments, [id]: f(d) } });
}

let wired = false;
/** Subscribe once to the core's push events. */
export function wireEvents(): void {
  if (wired) return;
  wired = true;
  api.on('observation', (o) => update(o.deploymentId, (d) => ({ ...d, latest: o })));
  api.on('connection', (c) => update(c.deploymentId, (d) => ({ ...d, connection: c.status })));
  api.on('event', (e) => {
    if (!e.deploymentId) return;
    update(e.deploymentId, (d) => ({ ...d, events: [...d.events, e].slice(-MAX_EVENTS) }));
  });
}
