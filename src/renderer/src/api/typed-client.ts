// The renderer's typed `Api`, built once from the contract's request list on top of any transport. Every
// request has a deadline here, whatever carries it, so no screen waits on the backend forever.
import { REQUEST_NAMES, type Api, type RequestName } from '@shared/contract';
import { ApiCallError } from './errors';
import type { Transport } from './transport';

/** Most requests are answered in milliseconds; 30 s means the backend is stuck or gone. */
export const DEFAULT_DEADLINE_MS = 30_000;

/**
 * Requests that legitimately take longer. `null` would mean no deadline; none needs it, because the core bounds
 * each of these itself and the figures below sit above the core's own limits.
 */
export const LONG_DEADLINES: Partial<Record<RequestName, number | null>> = {
  // Waits on the operator: a host-key question and a passphrase question (5 min each in the core), then the
  // connect itself (60 s) and discovery.
  connectHost: 12 * 60_000,
  // Reading a recording never opened before: ~6 s per recorded day here, and up to 1 GiB (weeks) is accepted.
  openSessionReview: 5 * 60_000,
  resaveSession: 10 * 60_000,
  openRecentReview: 5 * 60_000,
  finishRecordingUpload: 5 * 60_000,
  // Converting a whole recording (CSV, OpenMetrics, incident bundle) is bounded by the same read.
  exportSession: 5 * 60_000,
  // Several SSH reads (unit files, ExecStart flags, /metrics of every endpoint), each with its own 10 s limit.
  discover: 2 * 60_000,
  // Starts the simulated host and waits for its SSH link (the core gives up after 15 s).
  openDemo: 60_000,
};

export interface ClientOptions {
  defaultDeadlineMs?: number;
  deadlines?: Partial<Record<RequestName, number | null>>;
}

const seconds = (ms: number): string => (ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`);

export function createApi(transport: Transport, opts: ClientOptions = {}): Api {
  const deadlines = { ...LONG_DEADLINES, ...opts.deadlines };
  const defaultMs = opts.defaultDeadlineMs ?? DEFAULT_DEADLINE_MS;
  const call = (method: RequestName, args: unknown): Promise<unknown> => {
    const ms = method in deadlines ? deadlines[method] : defaultMs;
    if (ms === null || ms === undefined) return transport.invoke(method, args ?? {});
    const stop = new AbortController();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        stop.abort();
        reject(
          new ApiCallError(
            'timeout',
            `${method}: no answer from the PD Console backend within ${seconds(ms)}`,
            'The backend is busy or stuck. Try again; if it keeps happening, look at the terminal or log ' +
              'where PD Console runs.',
          ),
        );
      }, ms);
      transport.invoke(method, args ?? {}, { signal: stop.signal }).then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  };
  const api: Record<string, unknown> = {};
  for (const name of REQUEST_NAMES) api[name] = (args: unknown) => call(name, args);
  api.on = (event: Parameters<Transport['on']>[0], listener: (p: unknown) => void) =>
    transport.on(event, listener);
  return api as unknown as Api;
}
