// A transport without a backend, for tests of renderer logic: requests go to the handlers given (missing ones
// reject as unknown), events are pushed with emit(). It behaves like the real ones: results are copied
// (structuredClone) and failures are ApiCallErrors.
import type { ApiEvents, ApiHandlers, EventName } from '@shared/contract';
import { ApiCallError } from './errors';
import type { Transport } from './transport';

export interface FakeTransport extends Transport {
  emit<E extends EventName>(event: E, payload: ApiEvents[E]): void;
  /** Every request made, in order. */
  calls: { method: string; args: unknown }[];
}

export function createFakeTransport(handlers: Partial<ApiHandlers>): FakeTransport {
  const listeners = new Map<EventName, Set<(p: unknown) => void>>();
  const calls: FakeTransport['calls'] = [];
  return {
    calls,
    invoke: async (method, args) => {
      calls.push({ method, args });
      const h = handlers[method] as ((a: unknown) => Promise<unknown>) | undefined;
      if (!h) throw new ApiCallError('unknown-method', `the fake transport has no handler for ${method}`);
      try {
        return structuredClone(await h(args));
      } catch (err) {
        if (err instanceof ApiCallError) throw err;
        const e = err as { code?: string; message?: string; hint?: string };
        throw new ApiCallError(e.code ?? 'internal', e.message ?? String(err), e.hint);
      }
    },
    on: (event, listener) => {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
    emit: (event, payload) => {
      for (const l of listeners.get(event) ?? []) l(structuredClone(payload));
    },
  };
}
