// Exposes the API contract as window.api and nothing else. Runs sandboxed: no Node, no dependencies
// beyond the contract's plain lists. The IPC event object never reaches the page.
import { contextBridge, ipcRenderer } from 'electron';
import {
  EVENT_NAMES,
  REQUEST_NAMES,
  eventChannel,
  requestChannel,
  type Envelope,
  type EventName,
} from '@shared/contract';

class ApiCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

const api: Record<string, unknown> = {};
for (const name of REQUEST_NAMES) {
  api[name] = async (args: unknown) => {
    const env = (await ipcRenderer.invoke(requestChannel(name), args ?? {})) as Envelope<unknown>;
    if (env.ok) return env.result;
    throw new ApiCallError(env.error.code, env.error.message, env.error.hint);
  };
}
api.on = (event: EventName, listener: (payload: unknown) => void) => {
  if (!(EVENT_NAMES as readonly string[]).includes(event)) throw new Error(`unknown event ${String(event)}`);
  const wrapped = (_e: unknown, payload: unknown): void => listener(payload);
  ipcRenderer.on(eventChannel(event), wrapped);
  return () => ipcRenderer.removeListener(eventChannel(event), wrapped);
};

contextBridge.exposeInMainWorld('api', api);
