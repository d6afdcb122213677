// The page batcher the charts ask through (src/renderer/src/charts/series-batch.ts), over the renderer's
// real typed client on the in-memory transport: the asks of one turn leave as one request, each chart gets
// exactly its own answer, and the client's deadline still ends the wait with its message.
import { describe, expect, it } from 'vitest';
import type { SeriesBatchQuery, SeriesResult } from '../../src/shared/contract';
import type { SignalKey } from '../../src/shared/signals/spec';
import type { ScopedKey } from '../../src/shared/signals/scoped-key';
import { createApi } from '../../src/renderer/src/api/typed-client';
import { createFakeTransport } from '../../src/renderer/src/api/fake-transport';
import { createSeriesBatcher, type SeriesAsk } from '../../src/renderer/src/charts/series-batch';

/** What the core would answer for one group: a column per key whose values name the key and the width. */
function answer(keys: readonly ScopedKey[], maxPoints: number, fromMs = 0): SeriesResult {
  return {
    series: keys.map((key) => ({ key, t: [fromMs, fromMs + 1000], v: [maxPoints, key.length] })),
    firstMs: fromMs,
    lastMs: fromMs + 1000,
    rawPoints: 2 * keys.length,
    decimated: false,
    missing: {},
  };
}

function setup(opts: { deadlineMs?: number; hang?: boolean } = {}) {
  const transport = createFakeTransport({
    getSeriesBatch: (q) =>
      opts.hang
        ? new Promise(() => undefined)
        : Promise.resolve({ results: q.groups.map((g) => answer(g.keys, g.maxPoints, q.fromMs)) }),
  });
  const api = createApi(transport, { deadlines: { getSeriesBatch: opts.deadlineMs ?? 30_000 } });
  let turn: Array<() => void> = [];
  const batcher = createSeriesBatcher({
    fetch: (q) => api.getSeriesBatch(q),
    schedule: (f) => void turn.push(f),
  });
  /** Ends the current turn: what was asked in it leaves. */
  const endTurn = (): void => {
    const fs = turn;
    turn = [];
    for (const f of fs) f();
  };
  const sent = (): SeriesBatchQuery[] =>
    transport.calls.filter((c) => c.method === 'getSeriesBatch').map((c) => c.args as SeriesBatchQuery);
  return { batcher, endTurn, sent, transport };
}

const ask = (keys: SignalKey[], maxPoints: number, extra: Partial<SeriesAsk> = {}): SeriesAsk => ({
  deploymentId: 'demo',
  windowKey: 'live:24h',
  fromMs: 1000,
  keys,
  maxPoints,
  ...extra,
});

describe('page series batcher', () => {
  it('sends the charts of one turn as one request and hands each chart its own columns', async () => {
    const { batcher, endTurn, sent, transport } = setup();
    const kv = batcher.get(ask(['decode.kv_ratio', 'decode.kv_rank.1.ratio'], 700));
    const tokens = batcher.get(ask(['decode.kv_used', 'decode.kv_capacity'], 700));
    const retract = batcher.get(ask(['decode.retracted_per_min'], 340, { fromMs: 1001 }));
    expect(transport.calls).toHaveLength(0);
    endTurn();
    expect(sent()).toEqual([
      {
        deploymentId: 'demo',
        fromMs: 1000,
        groups: [
          { keys: ['decode.kv_ratio', 'decode.kv_rank.1.ratio'], maxPoints: 700 },
          { keys: ['decode.kv_used', 'decode.kv_capacity'], maxPoints: 700 },
          { keys: ['decode.retracted_per_min'], maxPoints: 340 },
        ],
      },
    ]);
    expect(await kv).toEqual(answer(['decode.kv_ratio', 'decode.kv_rank.1.ratio'], 700, 1000));
    expect(await tokens).toEqual(answer(['decode.kv_used', 'decode.kv_capacity'], 700, 1000));
    expect(await retract).toEqual(answer(['decode.retracted_per_min'], 340, 1000));
  });

  it('sends the asks so far at once on flush (before the page builds its charts), and nothing more at the turn end', async () => {
    const { batcher, endTurn, sent } = setup();
    const kv = batcher.get(ask(['decode.kv_ratio'], 700));
    const tokens = batcher.get(ask(['decode.kv_used'], 700));
    expect(sent()).toHaveLength(0);
    batcher.flush();
    expect(sent()).toEqual([
      {
        deploymentId: 'demo',
        fromMs: 1000,
        groups: [
          { keys: ['decode.kv_ratio'], maxPoints: 700 },
          { keys: ['decode.kv_used'], maxPoints: 700 },
        ],
      },
    ]);
    // A second chart's flush in the same commit, and the scheduled end of the turn, find nothing to send.
    batcher.flush();
    endTurn();
    expect(sent()).toHaveLength(1);
    expect(await kv).toEqual(answer(['decode.kv_ratio'], 700, 1000));
    expect(await tokens).toEqual(answer(['decode.kv_used'], 700, 1000));
    // An ask after the flush goes out with the next turn, as before.
    const later = batcher.get(ask(['decode.queued'], 700));
    endTurn();
    expect(sent()).toHaveLength(2);
    expect(await later).toEqual(answer(['decode.queued'], 700, 1000));
  });

  it('asks once more for a later turn, another window or another deployment', async () => {
    const { batcher, endTurn, sent } = setup();
    const a = batcher.get(ask(['prefill.kv_ratio'], 500));
    const zoomed = batcher.get(
      ask(['prefill.kv_ratio'], 500, { windowKey: 'fixed:5:9', fromMs: 5, toMs: 9 }),
    );
    const other = batcher.get(ask(['prefill.kv_ratio'], 500, { deploymentId: 'rec:x' }));
    endTurn();
    await Promise.all([a, zoomed, other]);
    expect(sent().map((q) => [q.deploymentId, q.fromMs, q.toMs])).toEqual([
      ['demo', 1000, undefined],
      ['demo', 5, 9],
      ['rec:x', 1000, undefined],
    ]);
    const later = batcher.get(ask(['prefill.kv_ratio'], 500));
    endTurn();
    await later;
    expect(sent()).toHaveLength(4);
  });

  it('asks identical groups once and gives each chart a copy of its own', async () => {
    const { batcher, endTurn, sent } = setup();
    const one = batcher.get(ask(['router.router_requests_per_s', 'router.router_errors_per_s'], 600));
    const two = batcher.get(ask(['router.router_requests_per_s', 'router.router_errors_per_s'], 600));
    endTurn();
    expect(sent()[0].groups).toHaveLength(1);
    const [r1, r2] = await Promise.all([one, two]);
    expect(r2).toEqual(r1);
    r1.series[0].t.push(99);
    expect(r2.series[0].t).toHaveLength(2);
  });

  it('leaves a chart that stopped waiting out of the request, and sends nothing when none waits', async () => {
    const { batcher, endTurn, sent } = setup();
    const gone = new AbortController();
    const left = batcher.get(ask(['gpu.0.util'], 300, { signal: gone.signal }));
    const kept = batcher.get(ask(['gpu.1.util'], 300));
    gone.abort();
    await expect(left).rejects.toMatchObject({ name: 'AbortError' });
    endTurn();
    expect(sent()[0].groups).toEqual([{ keys: ['gpu.1.util'], maxPoints: 300 }]);
    await kept;

    const alone = new AbortController();
    const p = batcher.get(ask(['gpu.2.util'], 300, { signal: alone.signal }));
    alone.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    endTurn();
    expect(sent()).toHaveLength(1);
  });

  it("rejects every chart of a batch with the typed client's deadline message when the backend is stuck", async () => {
    const { batcher, endTurn } = setup({ deadlineMs: 20, hang: true });
    const a = batcher.get(ask(['decode.kv_ratio'], 300));
    const b = batcher.get(ask(['decode.queued'], 300));
    endTurn();
    for (const p of [a, b])
      await expect(p).rejects.toMatchObject({
        code: 'timeout',
        message: expect.stringMatching(/^getSeriesBatch: no answer from the PD Console backend/),
      });
  });
});
