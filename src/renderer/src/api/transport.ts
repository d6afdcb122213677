// The seam between the renderer and whatever carries requests to the core: two functions, as in Actual
// Budget's client. Electron (the preload), browser mode (the WebSocket bridge) and tests (the fake transport)
// each implement it; the typed `Api` is built once on top (typed-client.ts).
import type { EventName, RequestName } from '@shared/contract';

export interface InvokeOptions {
  /** Aborted when the caller stopped waiting (deadline passed): a transport may forget the request then. */
  signal?: AbortSignal;
}

export interface Transport {
  /** Resolves the method's result, or rejects with an ApiCallError (code, message, hint). */
  invoke(method: RequestName, args: unknown, opts?: InvokeOptions): Promise<unknown>;
  /** Calls `listener` with each payload of `event` until the returned function is called. */
  on(event: EventName, listener: (payload: unknown) => void): () => void;
}
