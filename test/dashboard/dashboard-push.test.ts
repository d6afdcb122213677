// How a window keeps its snapshot from the core's 'dashboard' pushes (src/renderer/src/state/dashboard-push.ts):
// a whole push replaces it; a push of changes keeps what it left out and the values it did not change as held,
// everything else is the push's; the answer to an ask, which may be older than pushes that arrive while it
// travels, gets them laid over it.
import { describe, expect, it } from 'vitest';
import type { DashboardPush, DashboardSnapshot } from '../../src/shared/contract';
import { afterPush, isWhole, layOver, PushesSinceAsked } from '../../src/renderer/src/state/dashboard-push';

const missing = { 'decode.spec_accept_rate': { expected: ['sglang:spec_accept_rate'], why: 'not served' } };

function snapshot(ts: number, over: Partial<DashboardSnapshot> = {}): DashboardSnapshot {
  return {
    deploymentId: 'd',
    ts,
    values: { 'decode.kv_ratio': ts / 1000, 'decode.active': 1 },
    kv: [],
    verdict: { kind: 'healthy', headline: `round ${ts}`, evidence: [], nextStep: 'nothing to do' },
    gpu: { demo: { ts: 1000, gpus: [] } },
    alerts: [],
    notExposed: missing,
    ...over,
  };
}

/** A round's push as the core sends it when only the KV ratio changed since the previous round's (1 s before). */
function trimmed(s: DashboardSnapshot): DashboardPush {
  const { notExposed: _n, gpu: _g, ...rest } = s;
  return { ...rest, since: s.ts - 1000, values: { 'decode.kv_ratio': s.values['decode.kv_ratio'] } };
}

describe('a push laid over the held snapshot', () => {
  it('keeps what the push left out and takes the rest from the push, an absent router list included', () => {
    const held = snapshot(1000, { routerWorkers: [{ url: 'http://a', healthy: true }] });
    const next = layOver(
      held,
      trimmed(snapshot(2000, { values: { 'decode.kv_ratio': 2, 'decode.active': 0 } })),
    );
    expect(next).not.toHaveProperty('since');
    expect(next.ts).toBe(2000);
    expect(next.values).toEqual({ 'decode.kv_ratio': 2, 'decode.active': 1 });
    expect(next.notExposed).toBe(missing);
    expect(next.gpu).toBe(held.gpu);
    expect(next.routerWorkers).toBeUndefined();
    const gpu = { demo: { ts: 5000, gpus: [] } };
    expect(layOver(held, { ...trimmed(snapshot(5000)), gpu }).gpu).toBe(gpu);
    expect(layOver(held, { ...trimmed(snapshot(5000)), notExposed: {} }).notExposed).toEqual({});
  });

  it('replaces it with a whole push, values included', () => {
    const whole = snapshot(2000, { values: { 'decode.kv_ratio': 2 }, notExposed: {} });
    expect(layOver(snapshot(1000), whole)).toEqual(whole);
  });

  it('shows nothing from a push of changes until there is a whole snapshot to lay it over', () => {
    expect(isWhole(trimmed(snapshot(1000)))).toBe(false);
    expect(afterPush(undefined, trimmed(snapshot(1000)))).toBeUndefined();
    expect(afterPush(undefined, snapshot(1000))).toEqual(snapshot(1000));
  });
});

describe('pushes that arrive while a snapshot is asked for', () => {
  it('are laid over its answer, which is older than they are; the ones before the ask are not', () => {
    const since = new PushesSinceAsked();
    since.pushed(snapshot(500, { notExposed: {} }));
    const asked = since.ask('d');
    const gpu = { demo: { ts: 2000, gpus: [] } };
    since.pushed({ ...trimmed(snapshot(2000)), gpu });
    since.pushed(trimmed(snapshot(3000)));
    since.pushed({ ...trimmed(snapshot(3000)), deploymentId: 'other' });
    const shown = asked.settle(snapshot(1000));
    expect(shown.ts).toBe(3000);
    expect(shown.deploymentId).toBe('d');
    expect(shown.gpu).toBe(gpu);
    expect(shown.notExposed).toBe(missing);
    expect(shown.values).toEqual({ 'decode.kv_ratio': 3, 'decode.active': 1 });
  });

  it('are kept for each ask of the deployment still waiting, and no longer once it is answered or failed', () => {
    const since = new PushesSinceAsked();
    const first = since.ask('d');
    since.pushed(trimmed(snapshot(2000)));
    const second = since.ask('d');
    since.pushed(trimmed(snapshot(3000)));
    expect(second.settle(snapshot(1500)).ts).toBe(3000);
    since.pushed(trimmed(snapshot(4000)));
    first.drop();
    since.pushed(trimmed(snapshot(5000)));
    const third = since.ask('d');
    expect(third.settle(snapshot(5000)).ts).toBe(5000);
    // Dropped: the first ask's pushes are gone with it (settle would only see its answer and the two it kept).
    expect(first.settle(snapshot(1000)).ts).toBe(4000);
  });
});
