// What the preload exposes as window.api: `invoke` and `on` over plain data, from the contract's lists.
// Electron objects are injected (structural types), so this glue is unit-tested without the binary.
import {
  EVENT_NAMES,
  REQUEST_NAMES,
  eventChannel,
  requestChannel,
  type Envelope,
  type PreloadBridge,
} from '@shared/contract';

export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

export interface ContextBridgeLike {
  exposeInMainWorld(key: string, api: unknown): void;
}

export function createPreloadBridge(ipc: IpcRendererLike): PreloadBridge {
  return {
    // Always resolves an envelope: contextBridge keeps only the message of a thrown Error, and the page needs
    // the code and the hint (what to do) too.
    invoke: async (method, args) => {
      if (!(REQUEST_NAMES as readonly string[]).includes(method))
        return {
          ok: false,
          error: { code: 'unknown-method', message: `unknown API method ${String(method)}` },
        };
      try {
        return (await ipc.invoke(requestChannel(method), args ?? {})) as Envelope<unknown>;
      } catch (err) {
        return {
          ok: false,
          error: {
            code: 'ipc-failed',
            message: `${method}: the app's main process did not answer (${(err as Error).message})`,
            hint: 'Restart PD Console; if it happens again, report it with the log.',
          },
        };
      }
    },
    on: (event, listener) => {
      if (!(EVENT_NAMES as readonly string[]).includes(event))
        throw new Error(`unknown event ${String(event)}`);
      // The IPC event object never reaches the page: only the payload does.
      const wrapped = (_e: unknown, payload: unknown): void => listener(payload);
      ipc.on(eventChannel(event), wrapped);
      return () => void ipc.removeListener(eventChannel(event), wrapped);
    },
  };
}

export function exposeApi(contextBridge: ContextBridgeLike, ipc: IpcRendererLike): void {
  contextBridge.exposeInMainWorld('api', createPreloadBridge(ipc));
}
