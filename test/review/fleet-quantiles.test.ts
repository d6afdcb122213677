// A fleet role's figures in review are the ones live showed at every poll: the latency quantiles
// (histogram_quantile over the workers' window bucket increases summed by bound, fleet-quantile.ts), the running
// and queued requests, throughput and the prompt-weighted 60 s cache hit rate (combineWorkers), and the KV tokens
// summed. The same scrapes go through the live store, as the app's poll does, and into a recording that review
// reads: two decode workers with different traffic (one slow and sparse, one fast and busy, its load rising), a
// counter reset on one, and polls where the other's scrape failed (the role reads the answering worker alone
// then, not a poll-old set).
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Observation, ServiceObservation } from '../../src/shared/domain';
import { RecordingWriter, readRecording } from '../../src/main/core/recording';
import { MONITOR_TARGET, monitorExposition } from '../../src/main/core/recording/host-series';
import { workerTarget } from '../../src/main/core/recording/fleet-targets';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import { extractKv } from '../../src/main/core/signals/evaluate/kv-usage';
import { isKvMissing } from '../../src/main/core/probes/sglang/kv';
import { buildReviewData } from '../../src/main/core/review/review-data';
import { exposition, header, histogram, manualClock, tempDir } from '../recording/helpers';

const START = Date.UTC(2026, 0, 5, 8, 0, 0);
const POLLS = 240;
const WORKERS = ['decode-0', 'decode-1'];
/** The finite bounds; +Inf is the seventh bucket. */
const BOUNDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5];
const QUANTILES = ['decode.ttft_p50_s', 'decode.ttft_p99_s', 'decode.e2e_p50_s', 'decode.e2e_p99_s'];
/** combineWorkers' figures: gauges summed, rates summed, the hit rate weighted by prompt tokens/s; KV summed. */
const COMBINED = [
  'decode.running',
  'decode.queued',
  'decode.gen_throughput',
  'decode.prompt_tokens_per_s',
  'decode.generation_tokens_per_s',
  'decode.requests_per_s',
  'decode.cache_hit_rate_window',
  'decode.kv_used',
  'decode.kv_capacity',
  'decode.kv_ratio',
];
const KEYS = [...QUANTILES, ...COMBINED];

/** Per poll ts, the role's quantiles as the live store had them after that poll. */
const live = new Map<number, Record<string, number | null>>();
let dir: Awaited<ReturnType<typeof tempDir>>;
let review: ReturnType<typeof buildReviewData>;

/** Per-bucket counts (not cumulative) since each worker's start of each worker, grown each poll by its traffic. */
const counts = WORKERS.map(() => ({ ttft: Array<number>(7).fill(0), e2e: Array<number>(7).fill(0) }));
/** Each worker's token counters since its start: prompt, of them served from cache, generated. */
const tokens = WORKERS.map(() => ({ prompt: 0, cached: 0, generated: 0 }));

function traffic(w: number, i: number): { ttft: number[]; e2e: number[] } {
  // The slow worker: a request or two per poll, most above 1 s. The fast one: tens, under 0.1 s, more over time.
  if (w === 0)
    return {
      ttft: [0, 0, 0, 0, i % 5 === 0 ? 1 : 0, 1 + (i % 2), 0],
      e2e: [0, 0, 0, 0, 0, 1 + (i % 2), i % 5 === 0 ? 1 : 0],
    };
  const n = 10 + Math.floor(i / 8);
  return { ttft: [n, n >> 1, 1, 0, 0, 0, 0], e2e: [0, 0, n, n >> 2, 1, 0, 0] };
}

function scrape(w: number, i: number): ReturnType<typeof exposition> {
  const c = counts[w];
  const fam = (name: string, perBucket: number[]) => ({
    name,
    type: 'histogram' as const,
    samples: histogram(name, { model_name: 'm' }, BOUNDS, perBucket, 0),
  });
  const one = (name: string, type: 'gauge' | 'counter', value: number) => ({
    name,
    type,
    samples: [[name, { model_name: 'm' }, value] as [string, Record<string, string>, number]],
  });
  // The busy worker: more running and queued, its KV filling; the sparse one nearly idle with a long prompt cache.
  const load = w === 0 ? 1 + (i % 3) : 20 + (i % 17);
  return exposition([
    fam('sglang:time_to_first_token_seconds', c.ttft),
    fam('sglang:e2e_request_latency_seconds', c.e2e),
    one('sglang:num_running_reqs', 'gauge', load),
    one('sglang:num_queue_reqs', 'gauge', w === 0 ? 0 : i % 7),
    one('sglang:gen_throughput', 'gauge', load * 31.5),
    one('sglang:prompt_tokens_total', 'counter', tokens[w].prompt),
    one('sglang:cached_tokens_total', 'counter', tokens[w].cached),
    one('sglang:generation_tokens_total', 'counter', tokens[w].generated),
    one('sglang:kv_used_tokens', 'gauge', load * 1000 + (w === 0 ? 0 : i * 50)),
    one('sglang:kv_available_tokens', 'gauge', 500_000 - load * 1000),
    one('sglang:max_total_num_tokens', 'gauge', w === 0 ? 200_000 : 500_000),
  ]);
}

beforeAll(async () => {
  dir = await tempDir('pdc-review-fleet-q-');
  const path = join(dir.dir, 'fleet.pdrec.jsonl.gz');
  const clock = manualClock(START);
  const services = WORKERS.map((id, k) => ({
    role: 'decode' as const,
    id,
    hostId: k === 0 ? 'gpu-a' : 'gpu-b',
    unit: `sglang-${id}.service`,
    apiUrl: `http://10.0.0.${k + 1}:30000`,
  }));
  const deployment = { id: 'fleet', name: 'Fleet', services };
  const w = await RecordingWriter.open(
    path,
    header({
      deployment,
      fleet: {
        hosts: [
          { id: 'gpu-a', label: 'gpu-a', kind: 'ssh' },
          { id: 'gpu-b', label: 'gpu-b', kind: 'ssh' },
        ],
        fleet: { routers: [], workers: [], unplaced: [] } as never,
        links: [],
      },
    }),
    { clock },
  );
  const store = new SignalsStore();
  store.open('fleet', ['decode']);
  for (let i = 0; i < POLLS; i++) {
    const ts = START + i * 1000;
    clock.set(ts);
    const seen: ServiceObservation[] = [];
    WORKERS.forEach((id, k) => {
      const t = traffic(k, i);
      counts[k].ttft = counts[k].ttft.map((c, b) => c + t.ttft[b]);
      counts[k].e2e = counts[k].e2e.map((c, b) => c + t.e2e[b]);
      // decode-0 restarts at poll 150: its counters start again from this poll's traffic.
      if (k === 0 && i === 150) counts[k] = { ttft: [...t.ttft], e2e: [...t.e2e] };
      // The sparse worker's prompts are mostly cached, the busy one's hardly: the fleet's hit rate is the
      // busy one's share, not the mean of the two.
      const prompt = k === 0 ? 40 : 900 + 10 * (i % 11);
      tokens[k].prompt += prompt;
      tokens[k].cached += k === 0 ? 36 : Math.floor(prompt / 10);
      tokens[k].generated += k === 0 ? 5 : 300 + i;
      const failed = k === 1 && i % 37 === 20;
      const base = { role: 'decode' as const, id, unit: `sglang-${id}.service`, polledAt: ts };
      if (failed) {
        seen.push({ ...base, metrics: { ok: false, at: ts, error: 'connection refused' } });
        return;
      }
      const exp = scrape(k, i);
      w.appendScrape(ts, workerTarget('decode', id), exp);
      store.ingest('fleet', ts, 'decode', exp, id);
      // The KV figure the monitor makes of the same scrape.
      const kv = extractKv(exp);
      seen.push({
        ...base,
        metrics: { ok: true, scrapedAt: ts, durationMs: 5, families: 11, samples: 30 },
        ...(isKvMissing(kv) ? {} : { kv }),
      });
    });
    const obs: Observation = { deploymentId: 'fleet', hostId: 'gpu-a', ts, services: seen };
    w.appendScrape(ts, MONITOR_TARGET, monitorExposition(obs));
    store.ingestObservation(obs);
    const v = store.latest('fleet');
    live.set(ts, Object.fromEntries(KEYS.map((k) => [k, v[k] ?? null])));
  }
  await w.close();
  review = buildReviewData(await readRecording(path));
}, 60_000);

afterAll(async () => {
  await dir?.cleanup();
});

it("shows a fleet role's p50/p99, queues, throughput, hit rate and KV as live did at every poll", () => {
  const g = review.table.groups.get('decode')!;
  const mismatches: string[] = [];
  let figures = 0;
  for (const [ts, values] of live) {
    const k = review.table.rowAtOrBefore('decode', ts);
    expect(g.t[k], `row of poll ${ts}`).toBe(ts);
    for (const key of KEYS) {
      const want = values[key];
      const got = g.cols.get(key)?.[k] ?? NaN;
      // The live ring and the review table both keep float32.
      const expected = want === null ? NaN : Math.fround(want);
      if (!(Object.is(got, expected) || got === expected) && mismatches.length < 10)
        mismatches.push(`${ts - START} ms ${key}: live ${want}, review ${got}`);
      if (want !== null) figures++;
    }
  }
  expect(mismatches).toEqual([]);
  // Nearly every poll has every figure (the first has no window yet): the comparison covered the session.
  expect(figures).toBeGreaterThan(KEYS.length * (POLLS - 5));
});

it("reads the fleet's quantile and hit rate, not the slowest worker's, and the answering worker alone when one failed", () => {
  const at = (key: string, i: number): number => {
    const group = key.includes('@') ? `decode@${key.split('@')[1]}` : 'decode';
    const g = review.table.groups.get(group)!;
    return g.cols.get(key)![review.table.rowAtOrBefore(group, START + i * 1000)];
  };
  // Poll 100: the fast worker's ~22 requests a poll dwarf the slow one's ~2, so the fleet's p50 is under 0.1 s
  // while the slow worker's own is above 1 s.
  expect(at('decode.ttft_p50_s', 100)).toBeLessThan(0.1);
  expect(at('decode.ttft_p50_s@decode-0', 100)).toBeGreaterThan(1);
  // The hit rate is the share of the fleet's prompt tokens served from cache: the busy worker's ~10 %, not the
  // mean with the sparse worker's 90 %. Running requests add up.
  expect(at('decode.cache_hit_rate_window@decode-0', 100)).toBeGreaterThan(0.85);
  expect(at('decode.cache_hit_rate_window', 100)).toBeLessThan(0.15);
  expect(at('decode.running', 100)).toBe(
    at('decode.running@decode-0', 100) + at('decode.running@decode-1', 100),
  );
  // Poll 131 (131 % 37 = 20): decode-1's scrape failed, so the role is decode-0's window and requests alone.
  expect(at('decode.ttft_p50_s', 131)).toBe(at('decode.ttft_p50_s@decode-0', 131));
  expect(at('decode.running', 131)).toBe(at('decode.running@decode-0', 131));
});
