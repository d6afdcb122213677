// The one place where a request from any transport reaches the core: validate, call, wrap.
// IPC (Electron) and the WebSocket bridge (browser mode) both go through here, so they behave alike.
import type { EventEmitter } from 'node:events';
import type { ApiEvents, ApiHandlers, Envelope, EventName } from '@shared/contract';
import { isRequestName, validateArgs } from '@shared/schemas';
import { toApiErrorShape } from '../core/api-error';

/** Where push events come from: the core and every feature service emit on one bus. */
export type ApiEventBus = EventEmitter<{ [K in EventName]: [ApiEvents[K]] }>;

export async function dispatch(
  handlers: ApiHandlers,
  method: unknown,
  rawArgs: unknown,
): Promise<Envelope<unknown>> {
  if (!isRequestName(method))
    return {
      ok: false,
      error: { code: 'unknown-method', message: `unknown API method ${JSON.stringify(method)}` },
    };
  try {
    const args = validateArgs(method, rawArgs);
    const fn = handlers[method] as (a: typeof args) => Promise<unknown>;
    return { ok: true, result: await fn(args) };
  } catch (err) {
    return { ok: false, error: toApiErrorShape(err) };
  }
}
