// The renderer's signal keys are a typed union (SignalKey, src/shared/signals/spec.ts): a misspelt key, a
// signal of the wrong role or a queue the table does not list fails `npm run typecheck` (tsconfig.web.json
// checks this file; each @ts-expect-error below fails the build if its line ever compiles). At run time the
// same keys are what the boundary accepts (isSignalKey).
import { describe, expect, it } from 'vitest';
import type { SeriesBatchQuery, SeriesQuery } from '../../src/shared/contract';
import { isSignalKey } from '../../src/shared/signals/is-signal-key';
import { kvRankKey, QUEUE_KEYS, signalKey, type SignalKey } from '../../src/shared/signals/spec';
import type { SeriesSpec } from '../../src/renderer/src/charts/TimeChart';
import type { CsvSeries } from '../../src/renderer/src/charts/csv';

describe('signal keys', () => {
  it('compile only when the spec lists them, and the boundary accepts exactly those', () => {
    const good: SignalKey[] = [
      'decode.kv_ratio',
      'prefill.ttft_p99_s',
      'router.router_requests_per_s',
      'gpu.7.mem_used',
      'decode.kv_rank.1.ratio',
      signalKey('decode', 'decode_prealloc_queue'),
      kvRankKey('prefill', '0'),
      ...QUEUE_KEYS,
    ];
    // @ts-expect-error -- misspelt signal
    const typo: SignalKey = 'decode.kv_ratoi';
    // @ts-expect-error -- a server signal under the router
    const wrongRole: SignalKey = 'router.kv_ratio';
    // @ts-expect-error -- an unknown GPU field
    const gpu: SignalKey = 'gpu.0.fan';
    // @ts-expect-error -- signalKey checks the signal against the role's table
    signalKey('router', 'kv_ratio');
    // @ts-expect-error -- and against the spelling
    signalKey('prefill', 'prefill_bootstrap_queu');
    const chart: SeriesSpec = {
      // @ts-expect-error -- a chart series names a SignalKey
      key: 'decode.kv_usd',
      label: 'used',
      color: '--decode',
    };
    const query: SeriesQuery = {
      deploymentId: 'demo',
      // @ts-expect-error -- so does a history request
      keys: ['prefill.promt_tokens_per_s'],
      maxPoints: 100,
    };
    const batch: SeriesBatchQuery = {
      deploymentId: 'demo',
      // @ts-expect-error -- and each group of a page's batch
      groups: [{ keys: ['decode.itl_p99'], maxPoints: 100 }],
    };
    // @ts-expect-error -- and a CSV column
    const csv: CsvSeries = { label: 'x', key: 'decode.kv', data: [] };

    for (const k of good) expect(isSignalKey(k), k).toBe(true);
    for (const bad of [typo, wrongRole, gpu, chart.key, ...query.keys, ...batch.groups[0].keys, csv.key])
      expect(isSignalKey(bad), bad).toBe(false);
    for (const bad of [
      '',
      'decode',
      'decode.',
      '.kv_ratio',
      'gpu.x.util',
      'host.kv_ratio',
      'decode.kv_rank..ratio',
    ])
      expect(isSignalKey(bad), bad).toBe(false);
  });
});
