// Point-in-time gauges of one SGLang server from a single /metrics scrape, under stable keys whatever the
// SGLang version (reference §1.4, §1.6). Windowed figures (rates, percentiles) are in derived.ts.
//
// Keys (values are null when the server does not expose the metric):
//   running                      sglang:num_running_reqs (sum over dp ranks)
//   queued                       sglang:num_queue_reqs
//   prefill_bootstrap_queue      sglang:num_prefill_bootstrap_queue_reqs, before PR #24341: ..._prealloc_queue_reqs
//   prefill_inflight_queue       sglang:num_prefill_inflight_queue_reqs
//   decode_prealloc_queue        sglang:num_decode_prealloc_queue_reqs
//   decode_transfer_queue        sglang:num_decode_transfer_queue_reqs
//   gen_throughput               sglang:gen_throughput (tokens/s over the last log interval; 0 when idle)
//   cache_hit_rate               sglang:cache_hit_rate (0..1, mean over dp ranks): the last prefill batch's ratio,
//                                set to 0 at every decode log, so never read on decode servers (null there);
//                                the windowed cache_hit_rate_window from the token counters is the headline
//   pending_prealloc_token_usage sglang:pending_prealloc_token_usage (0..1, worst dp rank)
//   retracted                    sglang:num_retracted_reqs (pid label dropped): retractions in the last log
//                                interval, reset after each log, not a queue; the rate of the newer counter
//                                sglang:num_retracted_requests_total is retracted_per_min (signals store)
//   kv_transfer_latency_ms, kv_transfer_bootstrap_ms, kv_transfer_alloc_ms (worst rank),
//   kv_transfer_speed_gb_s (slowest rank), kv_transfer_total_mb (largest):
//                                gauge era: the last request's value; histogram era (PR #19009): the mean since
//                                server start (_sum / _count), null before the first transfer
//   bootstrap_failed_total       sglang:num_bootstrap_failed_reqs_total (counter, since server start)
//   transfer_failed_total        sglang:num_transfer_failed_reqs_total (counter, since server start)

import type { Role } from '@shared/domain';
import type { Exposition } from '../exposition/types';
import {
  isHistogram,
  maxOverRanks,
  minOverRanks,
  perDpRank,
  sumOverRanks,
  viewOf,
  type MetricView,
} from './series';

export const SERVER_SIGNAL_KEYS = [
  'running',
  'queued',
  'prefill_bootstrap_queue',
  'prefill_inflight_queue',
  'decode_prealloc_queue',
  'decode_transfer_queue',
  'gen_throughput',
  'cache_hit_rate',
  'pending_prealloc_token_usage',
  'retracted',
  'kv_transfer_latency_ms',
  'kv_transfer_speed_gb_s',
  'kv_transfer_bootstrap_ms',
  'kv_transfer_alloc_ms',
  'kv_transfer_total_mb',
  'bootstrap_failed_total',
  'transfer_failed_total',
] as const;
export type ServerSignalKey = (typeof SERVER_SIGNAL_KEYS)[number];

export interface NotExposed {
  key: ServerSignalKey;
  /** Metric names that would have provided the value, newest name first. */
  expected: string[];
  why: string;
}

export interface ServerSignals {
  values: Record<ServerSignalKey, number | null>;
  /** Signals this server's role should have but its /metrics lacks, for the UI's "not exposed" hints. */
  notExposed: NotExposed[];
  /** Known misreadings of the values above, in operator terms. */
  notes: string[];
  /** How kv_transfer_* are exposed: gauges (before PR #19009), histograms (after), or not at all. */
  kvTransferForm: 'gauge' | 'histogram' | null;
}

type Agg = 'sum' | 'max' | 'min' | 'mean';
type Expect = 'any' | 'not-prefill' | 'not-decode' | 'prefill' | 'decode' | 'pd' | 'never';

interface Spec {
  key: ServerSignalKey;
  metrics: string[];
  agg: Agg;
  /** Which roles should expose it (pd = prefill and decode). */
  expect: Expect;
  /** Why it may be missing, phrased for the operator. */
  why: string;
  histogram?: boolean;
  /** Roles on which the metric is meaningless and is not read at all. */
  notOn?: Role[];
}

const LAZY = 'appears only after the first event of its kind, or not in this SGLang version';
const PD_LAZY = `PD only; ${LAZY}`;

const SPECS: Spec[] = [
  { key: 'running', metrics: ['sglang:num_running_reqs'], agg: 'sum', expect: 'any', why: gaugeWhy() },
  { key: 'queued', metrics: ['sglang:num_queue_reqs'], agg: 'sum', expect: 'any', why: gaugeWhy() },
  {
    key: 'prefill_bootstrap_queue',
    metrics: ['sglang:num_prefill_bootstrap_queue_reqs', 'sglang:num_prefill_prealloc_queue_reqs'],
    agg: 'sum',
    expect: 'prefill',
    why: 'PD prefill gauge; absent when the server does not run with --disaggregation-mode prefill',
  },
  {
    key: 'prefill_inflight_queue',
    metrics: ['sglang:num_prefill_inflight_queue_reqs'],
    agg: 'sum',
    expect: 'prefill',
    why: 'PD prefill gauge; absent when the server does not run with --disaggregation-mode prefill',
  },
  {
    key: 'decode_prealloc_queue',
    metrics: ['sglang:num_decode_prealloc_queue_reqs'],
    agg: 'sum',
    expect: 'decode',
    why: 'PD decode gauge; absent when the server does not run with --disaggregation-mode decode',
  },
  {
    key: 'decode_transfer_queue',
    metrics: ['sglang:num_decode_transfer_queue_reqs'],
    agg: 'sum',
    expect: 'decode',
    why: 'PD decode gauge; absent when the server does not run with --disaggregation-mode decode',
  },
  // Prefill servers generate no decode tokens; their gen_throughput may never be written.
  {
    key: 'gen_throughput',
    metrics: ['sglang:gen_throughput'],
    agg: 'sum',
    expect: 'not-prefill',
    why: gaugeWhy(),
  },
  // Zeroed by every decode log: on a decode server it would read ~0 however well its prefix cache works.
  {
    key: 'cache_hit_rate',
    metrics: ['sglang:cache_hit_rate'],
    agg: 'mean',
    expect: 'not-decode',
    why: gaugeWhy(),
    notOn: ['decode'],
  },
  {
    key: 'pending_prealloc_token_usage',
    metrics: ['sglang:pending_prealloc_token_usage'],
    agg: 'max',
    expect: 'decode',
    why: 'decode gauge added in autumn 2025; older SGLang versions do not export it',
  },
  {
    key: 'retracted',
    metrics: ['sglang:num_retracted_reqs'],
    agg: 'sum',
    expect: 'never',
    why: 'not exported by every SGLang version',
  },
  ...(
    [
      ['kv_transfer_latency_ms', 'max'],
      ['kv_transfer_speed_gb_s', 'min'],
      ['kv_transfer_bootstrap_ms', 'max'],
      ['kv_transfer_alloc_ms', 'max'],
      ['kv_transfer_total_mb', 'max'],
    ] as const
  ).map(([key, agg]): Spec => ({
    key,
    metrics: [`sglang:${key}`],
    agg,
    expect: key === 'kv_transfer_latency_ms' || key === 'kv_transfer_speed_gb_s' ? 'pd' : 'never',
    why: `${PD_LAZY} (latency/speed since autumn 2025, bootstrap/alloc/total_mb since early 2026)`,
    histogram: true,
  })),
  {
    key: 'bootstrap_failed_total',
    metrics: ['sglang:num_bootstrap_failed_reqs_total'],
    agg: 'sum',
    expect: 'never',
    why: PD_LAZY,
  },
  {
    key: 'transfer_failed_total',
    metrics: ['sglang:num_transfer_failed_reqs_total'],
    agg: 'sum',
    expect: 'never',
    why: PD_LAZY,
  },
];

function gaugeWhy(): string {
  return 'scheduler gauge exported by every SGLang version with --enable-metrics; missing means the scheduler has not logged stats yet or this is not an SGLang server';
}

export interface ServerSignalOptions {
  /** The role of the scraped service; decides which PD signals are expected. Never read from engine_type. */
  role?: Role;
}

export function serverSignals(exp: Exposition, opts: ServerSignalOptions = {}): ServerSignals {
  const view = viewOf(exp);
  const values = {} as Record<ServerSignalKey, number | null>;
  const notExposed: NotExposed[] = [];
  let kvTransferForm: ServerSignals['kvTransferForm'] = null;

  for (const spec of SPECS) {
    if (opts.role && spec.notOn?.includes(opts.role)) {
      values[spec.key] = null;
      continue;
    }
    let value: number | undefined;
    for (const name of spec.metrics) {
      if (spec.histogram && isHistogram(view, name)) {
        kvTransferForm = 'histogram';
        value = histogramMeanSinceStart(view, name, spec.agg);
      } else if (view.has(name)) {
        if (spec.histogram && kvTransferForm === null) kvTransferForm = 'gauge';
        value = aggregate(view, name, spec.agg);
      } else continue;
      break;
    }
    values[spec.key] = value ?? null;
    const present = spec.metrics.some((n) => view.has(n) || (spec.histogram && isHistogram(view, n)));
    if (!present && expected(spec.expect, opts.role)) {
      notExposed.push({ key: spec.key, expected: spec.metrics, why: spec.why });
    }
  }

  const notes: string[] = [];
  if (opts.role === 'prefill' && values.running === 0) {
    notes.push(
      'num_running_reqs reads 0 on PD prefill servers before SGLang PR #31495 (2026-07); ' +
        'the prefill bootstrap/inflight queues show the actual work',
    );
  }
  if (values.gen_throughput === 0 && (values.running ?? 0) > 0 && opts.role !== 'prefill') {
    notes.push(
      'gen_throughput is refreshed every --decode-log-interval decode steps and zeroed by idle checks; a 0 with running requests is a stale reading',
    );
  }
  return { values, notExposed, notes, kvTransferForm };
}

function expected(e: Expect, role: Role | undefined): boolean {
  switch (e) {
    case 'any':
      return role !== 'router';
    case 'not-prefill':
      return role !== 'router' && role !== 'prefill';
    case 'not-decode':
      return role !== 'router' && role !== 'decode';
    case 'pd':
      return role === 'prefill' || role === 'decode';
    case 'prefill':
    case 'decode':
      return role === e;
    case 'never':
      return false;
  }
}

function aggregate(view: MetricView, name: string, agg: Agg): number | undefined {
  const samples = view.samples(name);
  switch (agg) {
    case 'sum':
      return sumOverRanks(samples);
    case 'max':
      return maxOverRanks(samples);
    case 'min':
      return minOverRanks(samples);
    case 'mean': {
      const ranks = perDpRank(samples);
      if (ranks.size === 0) return undefined;
      let t = 0;
      for (const v of ranks.values()) t += v;
      return t / ranks.size;
    }
  }
}

/** _sum / _count per dp rank, combined like the gauge would be; undefined before the first observation. */
function histogramMeanSinceStart(view: MetricView, name: string, agg: Agg): number | undefined {
  const sums = perDpRank(view.samples(`${name}_sum`));
  const counts = perDpRank(view.samples(`${name}_count`));
  const means: number[] = [];
  for (const [rank, count] of counts) {
    const s = sums.get(rank);
    if (count > 0 && s !== undefined) means.push(s / count);
  }
  if (means.length === 0) return undefined;
  // Per-request figures: only a worst rank makes sense (slowest speed, longest latency, largest transfer).
  return agg === 'min' ? Math.min(...means) : Math.max(...means);
}
