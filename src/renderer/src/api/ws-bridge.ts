// Browser mode: the same `Api` object the Electron preload exposes, carried over a WebSocket to the
// Node core. Built from the contract's lists, so it cannot drift from the preload.
import {
  EVENT_NAMES,
  REQUEST_NAMES,
  type Api,
  type ApiEvents,
  type EventName,
  type ServerFrame,
} from '@shared/contract';
import { ApiCallError } from './errors';

export type BridgeState = 'connecting' | 'open' | 'closed';

export function createWsApi(url: string, onState: (s: BridgeState, detail?: string) => void): Api {
  let ws: WebSocket | null = null;
  let nextId = 1;
  let retryMs = 500;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<EventName, Set<(p: unknown) => void>>(EVENT_NAMES.map((e) => [e, new Set()]));
  let opened: Promise<void>;

  const connect = (): void => {
    onState('connecting');
    const sock = new WebSocket(url);
    ws = sock;
    opened = new Promise((resolve) => sock.addEventListener('open', () => resolve(), { once: true }));
    sock.addEventListener('open', () => {
      retryMs = 500;
      onState('open');
    });
    sock.addEventListener('message', (m) => {
      const frame = JSON.parse(String(m.data)) as ServerFrame;
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
    });
    sock.addEventListener('close', (ev) => {
      for (const [, p] of pending)
        p.reject(new ApiCallError('backend-lost', 'lost the connection to the PD Console backend'));
      pending.clear();
      onState('closed', ev.reason || `the backend process stopped or restarted (code ${ev.code})`);
      // The backend may come back (restarted `npm run web`): keep trying, gently.
      setTimeout(connect, retryMs);
      retryMs = Math.min(10_000, retryMs * 2);
    });
  };
  connect();

  const api: Record<string, unknown> = {};
  for (const name of REQUEST_NAMES) {
    api[name] = async (args: unknown) => {
      await opened;
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        ws!.send(JSON.stringify({ t: 'req', id, method: name, args: args ?? {} }));
      });
    };
  }
  api.on = <E extends EventName>(event: E, l: (p: ApiEvents[E]) => void) => {
    const set = listeners.get(event)!;
    const wrapped = l as (p: unknown) => void;
    set.add(wrapped);
    return () => set.delete(wrapped);
  };
  return api as unknown as Api;
}
