// A page's history in one request, served for a recording like for a live deployment: getSeriesBatch through
// the app's own dispatch answers each group exactly as getSeries answers it alone, and the boundary refuses a
// misspelt key by name instead of answering an empty chart.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { dispatch } from '../../src/main/api/dispatch';
import type { SeriesBatchResult, SeriesGroup } from '../../src/shared/contract';
import { writeSession, type WrittenSession } from './helpers';

let app: App;
let session: WrittenSession;
let id: string;

beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdc-series-batch-'));
  session = await writeSession(join(dataDir, 'recordings'), 4);
  app = createApp({ shell: 'browser', dataDir, record: false });
  id = (await app.handlers.openSessionReview({ id: session.id })).summary.deployment.id;
}, 60_000);

afterAll(async () => {
  await app?.shutdown();
});

describe('getSeriesBatch', () => {
  it('answers every group of a page as getSeries answers that group alone, in the order asked', async () => {
    const groups: SeriesGroup[] = [
      { keys: ['decode.kv_ratio', 'decode.kv_used'], maxPoints: 300 },
      { keys: ['router.router_requests_per_s'], maxPoints: 40 },
      { keys: ['prefill.ttft_p99_s', 'prefill.ttft_p50_s'], maxPoints: 1000 },
    ];
    const fromMs = session.lastTs - 120_000;
    const env = await dispatch(app.handlers, 'getSeriesBatch', { deploymentId: id, fromMs, groups });
    expect(env.ok).toBe(true);
    const { results } = (env as { result: SeriesBatchResult }).result;
    expect(results).toHaveLength(groups.length);
    for (const [i, g] of groups.entries()) {
      const alone = await app.handlers.getSeries({ deploymentId: id, fromMs, ...g });
      expect(results[i]).toEqual(alone);
      expect(results[i].series.map((s) => s.key)).toEqual(g.keys);
    }
    // The groups really were decimated to their own widths (40 points is far below 2 minutes at 1 s).
    expect(results[1].decimated).toBe(true);
    expect(results[1].series[0].t.length).toBeLessThanOrEqual(40);
    expect(results[0].series[0].t.length).toBeGreaterThan(40);
  });

  it('refuses a misspelt key at the boundary, naming it', async () => {
    const env = await dispatch(app.handlers, 'getSeriesBatch', {
      deploymentId: id,
      groups: [
        { keys: ['decode.kv_ratio'], maxPoints: 100 },
        { keys: ['decode.kv_ratoi'], maxPoints: 100 },
      ],
    });
    expect(env).toMatchObject({ ok: false, error: { code: 'bad-arguments' } });
    expect((env as { error: { message: string } }).error.message).toMatch(
      /groups\.1\.keys\.0: "decode\.kv_ratoi" is not a signal key/,
    );
    // getSeries keeps the same check.
    const one = await dispatch(app.handlers, 'getSeries', {
      deploymentId: id,
      keys: ['router.kv_ratio'],
      maxPoints: 100,
    });
    expect(one).toMatchObject({ ok: false, error: { code: 'bad-arguments' } });
  });

  it('says which deployment is unknown', async () => {
    const env = await dispatch(app.handlers, 'getSeriesBatch', {
      deploymentId: 'rec:nope',
      groups: [{ keys: ['decode.kv_ratio'], maxPoints: 100 }],
    });
    expect(env).toMatchObject({ ok: false, error: { code: 'unknown-deployment' } });
  });
});
