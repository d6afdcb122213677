// Browser mode's transport: requests and events over one WebSocket to the Node core. It reconnects by itself
// with backoff, and never leaves a caller waiting on a socket that is gone: a request made while the socket
// is down, or pending when it drops, or waiting on a socket that closes before it ever opened, is rejected
// with 'backend-lost'.
import { MAX_CLIENT_FRAME_BYTES, type EventName, type RequestName, type ServerFrame } from '@shared/contract';
import { decodeServerFrame } from '@shared/wire-frame';
import { ApiCallError } from './errors';
import type { InvokeOptions, Transport } from './transport';

/** The part of the WebSocket API used here (the browser's, or the `ws` package's in tests). */
export interface SocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', l: () => void): void;
  addEventListener(type: 'message', l: (ev: { data: unknown }) => void): void;
  addEventListener(type: 'close', l: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', l: () => void): void;
}
export type SocketConstructor = new (url: string) => SocketLike;

const OPEN = 1;

export interface BridgeStatus {
  state: 'connecting' | 'open' | 'closed';
  /** True from the first loss until a socket opens again. */
  lost: boolean;
  /** Connection attempts since the backend was lost (0 while connected). */
  attempt: number;
  /** Why the last socket closed. */
  detail?: string;
  /** When the next attempt starts (closed state only; renderer clock). */
  retryAt?: number;
}

export interface WsTransport extends Transport {
  status(): BridgeStatus;
  onStatus(l: (s: BridgeStatus) => void): () => void;
  /** Stops reconnecting and closes the socket (tests). */
  dispose(): void;
}

export interface WsTransportOptions {
  url: string;
  WebSocket: SocketConstructor;
  retry?: { firstMs: number; maxMs: number };
}

const LOST_HINT =
  'The PD Console backend (the `npm run web` process) stopped or restarted. This page reconnects by itself ' +
  'when it is back on the same port; a new run has a new token, so open the URL it printed instead.';

export function createWsTransport(opts: WsTransportOptions): WsTransport {
  const retry = opts.retry ?? { firstMs: 500, maxMs: 10_000 };
  let retryMs = retry.firstMs;
  let nextId = 1;
  let disposed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let status: BridgeStatus = { state: 'connecting', lost: false, attempt: 0 };
  const statusListeners = new Set<(s: BridgeStatus) => void>();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<EventName, Set<(p: unknown) => void>>();
  let opened: Promise<SocketLike>;
  /** The socket of the latest attempt, open or not. */
  let current: SocketLike | undefined;

  const setStatus = (s: BridgeStatus): void => {
    status = s;
    for (const l of statusListeners) l(s);
  };
  const lost = (why: string): ApiCallError =>
    new ApiCallError('backend-lost', `lost the connection to the PD Console backend (${why})`, LOST_HINT);

  const onFrame = (data: unknown): void => {
    let frame: ServerFrame;
    try {
      frame = decodeServerFrame(data instanceof ArrayBuffer ? data : String(data));
    } catch (err) {
      console.warn(
        `PD Console: ignored a frame from the backend that could not be read: ${(err as Error).message}`,
      );
      return;
    }
    if (frame.t === 'res') {
      const p = pending.get(frame.id);
      pending.delete(frame.id);
      if (!p) return;
      if (frame.envelope.ok) p.resolve(frame.envelope.result);
      else
        p.reject(
          new ApiCallError(
            frame.envelope.error.code,
            frame.envelope.error.message,
            frame.envelope.error.hint,
          ),
        );
    } else if (frame.t === 'evt') {
      for (const l of listeners.get(frame.event) ?? []) l(frame.payload);
    }
  };

  const connect = (): void => {
    setStatus({ ...status, state: 'connecting', retryAt: undefined });
    const sock = new opts.WebSocket(opts.url);
    // Binary frames (wire-frame.ts) as one ArrayBuffer each, read at once (a Blob would need an async read).
    sock.binaryType = 'arraybuffer';
    current = sock;
    let wasOpen = false;
    opened = new Promise<SocketLike>((resolve, reject) => {
      sock.addEventListener('open', () => resolve(sock));
      sock.addEventListener('close', (ev) =>
        reject(lost(ev.reason || `the connection closed before it opened, code ${ev.code}`)),
      );
    });
    // Nobody may be waiting when an attempt fails; the rejection is for those who are.
    opened.catch(() => undefined);
    sock.addEventListener('open', () => {
      wasOpen = true;
      retryMs = retry.firstMs;
      setStatus({ state: 'open', lost: false, attempt: 0 });
    });
    sock.addEventListener('message', (m) => onFrame(m.data));
    // Every failure is followed by 'close', which handles it; an unheard 'error' would throw in Node's ws.
    sock.addEventListener('error', () => undefined);
    sock.addEventListener('close', (ev) => {
      const detail =
        ev.reason ||
        (wasOpen
          ? `the backend process stopped or restarted (code ${ev.code})`
          : `no connection to the backend (code ${ev.code})`);
      for (const [, p] of pending) p.reject(lost(detail));
      pending.clear();
      if (disposed) return;
      const retryAt = Date.now() + retryMs;
      setStatus({ state: 'closed', lost: true, attempt: status.attempt + 1, detail, retryAt });
      // The backend may come back (restarted on the same port and token): keep trying, gently.
      timer = setTimeout(connect, retryMs);
      retryMs = Math.min(retry.maxMs, retryMs * 2);
    });
  };
  connect();

  const invoke = (method: RequestName, args: unknown, o: InvokeOptions = {}): Promise<unknown> => {
    const id = nextId++;
    const body = JSON.stringify({ t: 'req', id, method, args: args ?? {} });
    // Characters count at most 3 UTF-8 bytes each: only long bodies need encoding to know their size.
    const bytes =
      body.length * 3 <= MAX_CLIENT_FRAME_BYTES ? body.length : new TextEncoder().encode(body).length;
    if (bytes > MAX_CLIENT_FRAME_BYTES)
      return Promise.reject(
        new ApiCallError(
          'too-large',
          `${method}: the request is ${bytes} bytes; browser mode carries at most ${MAX_CLIENT_FRAME_BYTES} bytes ` +
            `(${MAX_CLIENT_FRAME_BYTES / 1024 / 1024} MiB) per request`,
          'Send it in smaller parts. If PD Console itself made this request, it is a bug: please report it.',
        ),
      );
    const sendOn = (sock: SocketLike): Promise<unknown> => {
      // The caller's deadline passed while the socket was connecting: it no longer waits for an answer.
      if (o.signal?.aborted)
        return Promise.reject(new ApiCallError('aborted', `${method}: abandoned before it was sent`));
      if (sock.readyState !== OPEN) return Promise.reject(lost(status.detail ?? 'the connection is closed'));
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        o.signal?.addEventListener('abort', () => pending.delete(id), { once: true });
        sock.send(body);
      });
    };
    // An open socket takes the frame in the caller's own turn. Waiting for a microtask instead held a page's
    // history request until the page had built all its charts (one long task of React effects), so the core
    // only started on it when the page could already have drawn it.
    if (current?.readyState === OPEN) return sendOn(current);
    return opened.then(sendOn);
  };

  return {
    invoke,
    on: (event, listener) => {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
    status: () => status,
    onStatus: (l) => {
      statusListeners.add(l);
      return () => statusListeners.delete(l);
    },
    dispose: () => {
      disposed = true;
      clearTimeout(timer);
      void opened.then(
        (s) => s.close(1000, 'closed by the page'),
        () => undefined,
      );
    },
  };
}
