// The renderer's typed client over the fake transport (no browser, no backend): every request has a
// deadline and says which method ran out of time; the long ones get their longer deadline; errors keep their
// code and hint; pushed events reach subscribers until they unsubscribe.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeploymentSummary } from '../../src/shared/domain';
import { createFakeTransport } from '../../src/renderer/src/api/fake-transport';
import { createApi, DEFAULT_DEADLINE_MS, LONG_DEADLINES } from '../../src/renderer/src/api/typed-client';
import { ApiCallError } from '../../src/renderer/src/api/errors';

const never = (): Promise<never> => new Promise(() => undefined);

/** Settles `p` into a value or the error it rejected with, so fake timers can run before it is awaited. */
function settle<T>(p: Promise<T>): { result: () => T | ApiCallError | 'pending' } {
  let out: T | ApiCallError | 'pending' = 'pending';
  p.then(
    (v) => (out = v),
    (e: ApiCallError) => (out = e),
  );
  return { result: () => out };
}

describe('renderer typed client', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('rejects a request the backend never answers with a timeout naming the method and the deadline', async () => {
    const api = createApi(createFakeTransport({ listDeployments: never }));
    const call = settle(api.listDeployments({}));
    await vi.advanceTimersByTimeAsync(DEFAULT_DEADLINE_MS - 1);
    expect(call.result()).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    const e = call.result() as ApiCallError;
    expect(e).toBeInstanceOf(ApiCallError);
    expect(e.code).toBe('timeout');
    expect(e.message).toBe('listDeployments: no answer from the PD Console backend within 30 s');
    expect(e.hint).toMatch(/busy or stuck/);
  });

  it('gives a host connection (which waits on the operator) its own, longer deadline', async () => {
    const api = createApi(createFakeTransport({ connectHost: never }));
    const call = settle(api.connectHost({ host: {} as never }));
    await vi.advanceTimersByTimeAsync(DEFAULT_DEADLINE_MS * 2);
    expect(call.result()).toBe('pending');
    await vi.advanceTimersByTimeAsync(LONG_DEADLINES.connectHost! - DEFAULT_DEADLINE_MS * 2);
    expect((call.result() as ApiCallError).message).toBe(
      'connectHost: no answer from the PD Console backend within 12 min',
    );
  });

  it('passes results and errors through, with code and hint', async () => {
    const summary = { deployment: { id: 'demo' } } as DeploymentSummary;
    const fake = createFakeTransport({
      listDeployments: async () => [summary],
      listEvents: async () => {
        throw Object.assign(new Error('no deployment "x" is open'), {
          code: 'unknown-deployment',
          hint: 'Open it from the start page.',
        });
      },
    });
    const api = createApi(fake);
    expect(await api.listDeployments({})).toEqual([summary]);
    const e = await api.listEvents({ deploymentId: 'x' }).catch((err: ApiCallError) => err);
    expect(e).toMatchObject({ code: 'unknown-deployment', hint: 'Open it from the start page.' });
    expect(fake.calls.map((c) => c.method)).toEqual(['listDeployments', 'listEvents']);
    // A finished request leaves no timer behind that could fire later.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('delivers pushed events to subscribers until they unsubscribe', () => {
    const fake = createFakeTransport({});
    const api = createApi(fake);
    const seen: string[] = [];
    const off = api.on('connection', (c) => seen.push(c.deploymentId));
    fake.emit('connection', { deploymentId: 'a', status: { state: 'connected' } } as never);
    off();
    fake.emit('connection', { deploymentId: 'b', status: { state: 'connected' } } as never);
    expect(seen).toEqual(['a']);
  });
});
