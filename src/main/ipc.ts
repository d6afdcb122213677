// Electron IPC, derived from the contract: one handler per request channel, one send per event.
// Every handler checks that the sender is our own renderer frame before anything else runs.
// Electron objects are injected (structural types), so this glue is unit-tested without the binary.
import {
  EVENT_NAMES,
  REQUEST_NAMES,
  eventChannel,
  requestChannel,
  type ApiEvents,
  type EventName,
} from '@shared/contract';
import type { ApiHandlers } from '@shared/contract';
import { dispatch, type ApiEventBus } from './api/dispatch';

export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcEventLike, ...args: unknown[]) => Promise<unknown>): void;
  removeHandler(channel: string): void;
}

export interface IpcEventLike {
  senderFrame: { url: string } | null;
  sender: { id: number };
}

export interface WebContentsLike {
  id: number;
  isDestroyed(): boolean;
  send(channel: string, payload: unknown): void;
}

/** Is this frame URL our renderer? file:// app bundle in production, the dev server in development. */
export function isTrustedRendererUrl(url: string, devServerUrl?: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol === 'file:') return u.pathname.endsWith('/renderer/index.html');
  if (devServerUrl) {
    const dev = new URL(devServerUrl);
    return u.origin === dev.origin;
  }
  return false;
}

export function registerIpc(
  ipcMain: IpcMainLike,
  handlers: ApiHandlers,
  trusted: { isTrustedSender(e: IpcEventLike): boolean },
): () => void {
  for (const name of REQUEST_NAMES) {
    ipcMain.handle(requestChannel(name), async (event, args) => {
      if (!trusted.isTrustedSender(event))
        return {
          ok: false,
          error: { code: 'untrusted-sender', message: `refused ${name} from an untrusted frame` },
        };
      return dispatch(handlers, name, args);
    });
  }
  return () => REQUEST_NAMES.forEach((n) => ipcMain.removeHandler(requestChannel(n)));
}

/** Forwards core events to a window until it closes. */
export function forwardEvents(bus: ApiEventBus, contents: WebContentsLike): () => void {
  const offs = EVENT_NAMES.map((event: EventName) => {
    const l = (payload: ApiEvents[EventName]): void => {
      if (!contents.isDestroyed()) contents.send(eventChannel(event), payload);
    };
    bus.on(event, l as never);
    return () => bus.off(event, l as never);
  });
  return () => offs.forEach((off) => off());
}
