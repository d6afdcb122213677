// A fleet role's figures from its workers' own, combined as the signal specification combines dp ranks (the
// quantiles from the workers' buckets: fleet-quantile.test.ts).
import { expect, it } from 'vitest';
import { combineWorkers } from '../../src/main/core/signals/fleet-aggregate';

it('adds up counts and rates and takes the fullest usage ratio', () => {
  const role = combineWorkers(
    [
      { running: 40, queued: 2, requests_per_s: 3, pending_prealloc_token_usage: 0.2 },
      { running: 10, queued: 0, requests_per_s: 1.5, pending_prealloc_token_usage: 0.7 },
    ],
    [],
  );
  expect(role).toMatchObject({
    running: 50,
    queued: 2,
    requests_per_s: 4.5,
    pending_prealloc_token_usage: 0.7,
  });
});

it('weights the cache hit rate by each worker’s prompt tokens: the share of the fleet’s tokens served from cache', () => {
  const role = combineWorkers(
    [
      { cache_hit_rate_window: 0.9, prompt_tokens_per_s: 1_000 },
      { cache_hit_rate_window: 0.1, prompt_tokens_per_s: 3_000 },
    ],
    [],
  );
  expect(role.cache_hit_rate_window).toBeCloseTo((0.9 * 1_000 + 0.1 * 3_000) / 4_000, 12);
});

it('leaves out what no worker reported, and a worker whose scrape failed (NaN) does not count', () => {
  const role = combineWorkers([{ running: NaN }, { running: 4 }, {}], []);
  expect(role.running).toBe(4);
  expect('ttft_p99_s' in role).toBe(false);
  expect(combineWorkers([{ running: NaN }], [])).toEqual({});
});

it('averages a mean-combined gauge and the KV transfer speed over the workers that reported it', () => {
  const role = combineWorkers(
    [
      { cache_hit_rate: 0.2, kv_transfer_gb_s: 2, running: 1 },
      { cache_hit_rate: NaN, running: 3 },
      { cache_hit_rate: 0.6, kv_transfer_gb_s: 4, running: 2 },
    ],
    [],
  );
  expect(role.cache_hit_rate).toBeCloseTo(0.4, 12);
  expect(role.kv_transfer_gb_s).toBeCloseTo(3, 12);
  expect(role.running).toBe(6);
});
