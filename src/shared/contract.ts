// THE API contract: every request the renderer (or any client) can make, and every event the core pushes.
// The Electron preload, the IPC registration in main, the browser-mode WebSocket bridge and the
// renderer's typed client are all generated from the lists below, so they cannot drift apart.
// Each feature declares its part in src/shared/api/<feature>.ts; this file joins the parts.
// No imports with runtime code beyond those plain lists: the sandboxed preload bundles it as is.
import {
  MONITORING_EVENTS,
  MONITORING_REQUESTS,
  type MonitoringEvents,
  type MonitoringRequests,
} from './api/monitoring';
import {
  DISCOVERY_EVENTS,
  DISCOVERY_REQUESTS,
  type DiscoveryEvents,
  type DiscoveryRequests,
} from './api/discovery';
import { RESTART_EVENTS, RESTART_REQUESTS, type RestartEvents, type RestartRequests } from './api/restart';
import { ROLL_EVENTS, ROLL_REQUESTS, type RollEvents, type RollRequests } from './api/roll';
import { HOSTS_EVENTS, HOSTS_REQUESTS, type HostsEvents, type HostsRequests } from './api/hosts';
import {
  RECORDING_EVENTS,
  RECORDING_REQUESTS,
  type RecordingEvents,
  type RecordingRequests,
} from './api/recording';
import {
  DASHBOARD_EVENTS,
  DASHBOARD_REQUESTS,
  type DashboardEvents,
  type DashboardRequests,
} from './api/dashboard';
import { REVIEW_EVENTS, REVIEW_REQUESTS, type ReviewEvents, type ReviewRequests } from './api/review';
import {
  PROMETHEUS_EVENTS,
  PROMETHEUS_REQUESTS,
  type PrometheusEvents,
  type PrometheusRequests,
} from './api/prometheus';
import {
  SETTINGS_EVENTS,
  SETTINGS_REQUESTS,
  type SettingsEvents,
  type SettingsRequests,
} from './api/settings';
import { HISTORY_EVENTS, HISTORY_REQUESTS, type HistoryEvents, type HistoryRequests } from './api/history';

export type * from './api/monitoring';
export type * from './api/restart';
export type * from './api/roll';
export type * from './api/dashboard';
export type * from './api/discovery';
export type * from './api/recording';
export type * from './api/hosts';
export type * from './api/review';
export type * from './api/settings';
export type * from './api/history';
export type * from './api/prometheus';

/** Request methods. Each takes exactly one plain-object argument and returns a Promise. */
export interface ApiRequests
  extends
    MonitoringRequests,
    RestartRequests,
    RollRequests,
    DashboardRequests,
    DiscoveryRequests,
    RecordingRequests,
    HostsRequests,
    ReviewRequests,
    SettingsRequests,
    HistoryRequests,
    PrometheusRequests {}

/** Push events from the core. */
export interface ApiEvents
  extends
    MonitoringEvents,
    RestartEvents,
    RollEvents,
    DashboardEvents,
    DiscoveryEvents,
    RecordingEvents,
    HostsEvents,
    ReviewEvents,
    SettingsEvents,
    HistoryEvents,
    PrometheusEvents {}

export type RequestName = keyof ApiRequests;
export type EventName = keyof ApiEvents;
export type RequestArgs<K extends RequestName> = Parameters<ApiRequests[K]>[0];
export type RequestResult<K extends RequestName> = Awaited<ReturnType<ApiRequests[K]>>;

export const REQUEST_NAMES = [
  ...MONITORING_REQUESTS,
  ...RESTART_REQUESTS,
  ...ROLL_REQUESTS,
  ...DASHBOARD_REQUESTS,
  ...DISCOVERY_REQUESTS,
  ...RECORDING_REQUESTS,
  ...HOSTS_REQUESTS,
  ...REVIEW_REQUESTS,
  ...SETTINGS_REQUESTS,
  ...HISTORY_REQUESTS,
  ...PROMETHEUS_REQUESTS,
] as const satisfies readonly RequestName[];

export const EVENT_NAMES = [
  ...MONITORING_EVENTS,
  ...RESTART_EVENTS,
  ...ROLL_EVENTS,
  ...DASHBOARD_EVENTS,
  ...DISCOVERY_EVENTS,
  ...RECORDING_EVENTS,
  ...HOSTS_EVENTS,
  ...REVIEW_EVENTS,
  ...SETTINGS_EVENTS,
  ...HISTORY_EVENTS,
  ...PROMETHEUS_EVENTS,
] as const satisfies readonly EventName[];

// Compile-time proof that the lists above name every method and event exactly once.
type Missing<All, Listed> = Exclude<All, Listed>;
const _allRequestsListed: Missing<RequestName, (typeof REQUEST_NAMES)[number]> extends never ? true : never =
  true;
const _allEventsListed: Missing<EventName, (typeof EVENT_NAMES)[number]> extends never ? true : never = true;
void _allRequestsListed;
void _allEventsListed;

/** Server-side implementation of every request: the shells dispatch into this map. */
export type ApiHandlers = { [K in RequestName]: (args: RequestArgs<K>) => Promise<RequestResult<K>> };

/** The object a renderer sees as `window.api`. */
export type Api = ApiRequests & {
  on<E extends EventName>(event: E, listener: (payload: ApiEvents[E]) => void): () => void;
};

/** IPC channel names: a prefix keeps our channels apart from anything else on ipcMain. */
export const requestChannel = (name: RequestName): string => `api:${name}`;
export const eventChannel = (name: EventName): string => `api-event:${name}`;

/**
 * Errors cross every transport as this shape, so the renderer can show what happened, where, and what to do.
 */
export interface ApiErrorShape {
  code: string;
  message: string;
  hint?: string;
}

/** What a request returns over any transport: errors keep their code and hint instead of becoming strings. */
export type Envelope<T> = { ok: true; result: T } | { ok: false; error: ApiErrorShape };

/**
 * What the Electron preload exposes as `window.api`: two functions over plain data. contextBridge copies an
 * Error's message but drops its own properties (code, hint), so requests resolve an envelope and the renderer
 * turns a failed one into its ApiCallError.
 */
export interface PreloadBridge {
  invoke(method: RequestName, args: unknown): Promise<Envelope<unknown>>;
  on(event: EventName, listener: (payload: unknown) => void): () => void;
}

/**
 * Largest client→server frame in browser mode (bytes of the JSON text). The largest legitimate request is an
 * upload chunk: UPLOAD_CHUNK_BYTES (512 KiB) as base64 is 683 KiB plus a few dozen bytes of envelope, so 1 MiB
 * holds it with a third to spare while bounding what one message can make the backend buffer and parse.
 * The server enforces it (ws maxPayload, close 1009); the renderer refuses locally before sending.
 */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;

/** Browser-mode WebSocket frames. */
export type ClientFrame = { t: 'req'; id: number; method: string; args: unknown };
export type ServerFrame =
  { t: 'res'; id: number; envelope: Envelope<unknown> } | { t: 'evt'; event: EventName; payload: unknown };
