// The one place where a request from any transport reaches the core: validate, call, wrap.
// IPC (Electron) and the WebSocket bridge (browser mode) both go through here, so they behave alike.
import type { ApiRequests, Envelope, RequestName } from '@shared/contract';
import { isRequestName, validateArgs } from '@shared/schemas';
import { toApiErrorShape } from '../core/api-error';

export async function dispatch(
  core: ApiRequests,
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
    const fn = core[method] as (a: typeof args) => Promise<unknown>;
    const result = await fn.call(core, args);
    return { ok: true, result };
  } catch (err) {
    return { ok: false, error: toApiErrorShape(err) };
  }
}

export type { RequestName };
