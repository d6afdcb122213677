// Renderer state: what the core pushed, kept per deployment. The renderer renders this and nothing else.
import { useSyncExternalStore } from 'react';
import type { AppEvent, ConnectionStatus, DeploymentSummary, Observation } from '@shared/domain';
import type { AppInfo, DashboardSnapshot, SignalInfo } from '@shared/contract';
import { api } from '../api/client';
import { notifyAlert } from './notifications';
import { afterPush, PushesSinceAsked } from './dashboard-push';
import { withHostConnection } from './host-connection';

export interface DeploymentView {
  summary: DeploymentSummary;
  connection: ConnectionStatus;
  latest?: Observation;
  /** When the latest observation arrived here (renderer clock), to tell "stale" from "connected". */
  receivedAt?: number;
  events: AppEvent[];
  dashboard?: DashboardSnapshot;
  catalog?: Record<string, SignalInfo>;
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

export function addDeployment(
  summary: DeploymentSummary,
  events: AppEvent[] = [],
  /** The catalogue and snapshot when they came with the summary (a review's open): not asked for again. */
  first?: { catalog: SignalInfo[]; dashboard: DashboardSnapshot },
): void {
  const id = summary.deployment.id;
  const prev = state.deployments[id];
  set({
    ...state,
    activeId: id,
    deployments: {
      ...state.deployments,
      [id]: {
        ...prev,
        summary,
        connection: summary.connection,
        latest: summary.latest ?? prev?.latest,
        // The summary's reading arrived now, as a pushed one would: its age counts from here.
        receivedAt: summary.latest ? Date.now() : prev?.receivedAt,
        events: events.length ? events : (prev?.events ?? []),
        ...(first && { catalog: catalogMap(first.catalog), dashboard: first.dashboard }),
      },
    },
  });
  if (!first) void loadDashboard(id);
}

const pushesSinceAsked = new PushesSinceAsked();

async function loadDashboard(id: string): Promise<void> {
  // Asked after this window listens: the answer, with the pushes since laid over it, is the newest round's.
  const asked = pushesSinceAsked.ask(id);
  try {
    const [catalog, dashboard] = await Promise.all([
      api.getSignalCatalog({ deploymentId: id }),
      api.getDashboard({ deploymentId: id }),
    ]);
    const current = asked.settle(dashboard);
    update(id, (d) => ({ ...d, catalog: catalogMap(catalog), dashboard: current }));
  } catch (err) {
    asked.drop();
    // The deployment may have closed meanwhile; its cards say so. Log for whoever debugs the renderer.
    console.warn(`dashboard state for ${id} not loaded:`, err);
  }
}

function catalogMap(catalog: SignalInfo[]): Record<string, SignalInfo> {
  return Object.fromEntries(catalog.map((c) => [c.key, c]));
}

/**
 * After the connection to the backend came back: what it has open now replaces what was shown. A restarted
 * backend has reopened the demo (when it runs with --demo) but not recordings under review or SSH hosts.
 */
export async function resyncFromBackend(): Promise<void> {
  const info = await api.getAppInfo({});
  const open = await api.listDeployments({});
  if (info.autoOpenDemo && !open.some((d) => d.host.kind === 'demo')) open.push(await api.openDemo({}));
  const loaded = await Promise.all(
    open.map(async (d) => ({ d, events: await api.listEvents({ deploymentId: d.deployment.id }) })),
  );
  const shown = state.activeId;
  const still = new Set(open.map((d) => d.deployment.id));
  for (const id of Object.keys(state.deployments)) if (!still.has(id)) removeDeployment(id);
  setInfo(info);
  for (const { d, events } of loaded) addDeployment(d, events);
  if (shown) setActive(shown);
}

/** Puts an open deployment on screen (e.g. back from the sessions page). */
/**
 * Whether the deployment is a recording under review: what acts on a live deployment (restarts, rolls, demo
 * faults) is not offered on it.
 */
export function isReview(state: AppState, id: string | undefined): boolean {
  return id !== undefined && state.deployments[id]?.summary.review !== undefined;
}

export function setActive(id: string): void {
  if (state.deployments[id]) set({ ...state, activeId: id });
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
  api.on('observation', (o) => update(o.deploymentId, (d) => ({ ...d, latest: o, receivedAt: Date.now() })));
  api.on('connection', (c) => update(c.deploymentId, (d) => withHostConnection(d, c.hostId, c.status)));
  api.on('event', (e) => {
    if (!e.deploymentId) return;
    update(e.deploymentId, (d) => ({ ...d, events: [...d.events, e].slice(-MAX_EVENTS) }));
    if (e.kind === 'alert') notifyAlert(e);
  });
  api.on('dashboard', (p) => {
    pushesSinceAsked.pushed(p);
    update(p.deploymentId, (d) => ({ ...d, dashboard: afterPush(d.dashboard, p) }));
  });
  // The review's warnings (the banner) and span as its full read found them, after the open was answered. The
  // cursor is the review page's own by then.
  api.on('reviewUpdated', (u) =>
    update(u.deploymentId, (d) => {
      const was = d.summary.review;
      return was ? { ...d, summary: { ...d.summary, review: { ...u.review, cursor: was.cursor } } } : d;
    }),
  );
}
