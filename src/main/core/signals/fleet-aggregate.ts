// A fleet role's figures from its workers' own: the role charts, the verdict and the alerts read a role of N
// workers as one server, so each /metrics signal of the specification gets a role value per round, combined
// across the workers the way the specification combines dp ranks (a worker is one more replica):
//   gauge     by its `ranks` aggregation (running and queued requests add up, a usage ratio takes the fullest)
//   rate      summed (requests/s, tokens/s and failures/min of the fleet are the workers' sum)
//   quantile  exact: histogram_quantile over the workers' window buckets summed by bound (fleet-quantile.ts),
//             as Prometheus answers for the role, not the slowest worker's
//   ratio     the cache hit rate weighted by each worker's prompt tokens/s (the fleet's hit share); the KV
//             transfer speed as the workers' mean (it is a per-transfer speed, not a volume)
// KV usage and its forecast have exact sums of their own (signals-store.ts); state signals are aggregated there.
import { SERVER_SIGNALS, type SignalSpec } from '@shared/signals/spec';
import { fleetQuantiles, type WindowBuckets } from './fleet-quantile';

/** The server signals a role aggregate is computed for here, with how workers combine. */
const COMBINED = (Object.entries(SERVER_SIGNALS) as [string, SignalSpec][]).filter(
  ([name, spec]) =>
    spec.kind !== 'state' &&
    spec.kind !== 'forecast' &&
    spec.kind !== 'quantile' &&
    name !== 'kv_ratio' &&
    name !== 'kv_fullest_rank_ratio',
);

/** Every worker value combineWorkers reads (the signals above, and the hit rate's weights). */
export const WORKER_INPUTS: ReadonlySet<string> = new Set([
  ...COMBINED.map(([name]) => name),
  'cache_hit_rate_window',
  'prompt_tokens_per_s',
]);

/**
 * Each signal's role value from its workers' values of their newest poll (keys without the `@worker` scope:
 * `running`, `kv_transfer_gb_s`, …; only WORKER_INPUTS are read) and, for the quantiles, the window buckets of
 * the same scrapes. A signal no worker has is left out, so the role reads as not reported.
 */
export function combineWorkers(
  workers: readonly Record<string, number>[],
  buckets: readonly WindowBuckets[],
): Record<string, number> {
  const out = fleetQuantiles(buckets);
  // One scratch array for every signal's values (a new array per signal per role was ≈ 30 kB a fleet round).
  if (scratch.length < workers.length)
    scratch = new Float64Array(Math.max(workers.length, scratch.length * 2));
  for (const [name, spec] of COMBINED) {
    let n = 0;
    for (const w of workers) {
      const v = w[name];
      if (v !== undefined && v === v) scratch[n++] = v;
    }
    if (n === 0) continue;
    const v = combine(name, spec, scratch, n, workers);
    if (v !== null) out[name] = v;
  }
  return out;
}

let scratch = new Float64Array(64);

function combine(
  name: string,
  spec: SignalSpec,
  /** The workers' values, in xs[0..n). */
  xs: Float64Array,
  n: number,
  workers: readonly Record<string, number>[],
): number | null {
  switch (spec.kind) {
    case 'rate':
      return sum(xs, n);
    case 'ratio':
      return name === 'cache_hit_rate_window' ? weightedHitRate(workers) : sum(xs, n) / n;
    default:
      switch (spec.ranks ?? 'max') {
        case 'sum':
          return sum(xs, n);
        case 'min':
          return extreme(xs, n, -1);
        case 'mean':
          return sum(xs, n) / n;
        default:
          return extreme(xs, n, 1);
      }
  }
}

/** Σ hit × prompt tokens/s over Σ prompt tokens/s: the share of the fleet's prompt tokens served from cache. */
function weightedHitRate(workers: readonly Record<string, number>[]): number | null {
  let hit = 0;
  let prompt = 0;
  for (const w of workers) {
    const r = w.cache_hit_rate_window;
    const p = w.prompt_tokens_per_s;
    if (r === undefined || r !== r || p === undefined || p !== p) continue;
    hit += r * p;
    prompt += p;
  }
  return prompt > 0 ? hit / prompt : null;
}

/** The largest of xs[0..n) (sign 1) or the smallest (sign −1). */
function extreme(xs: Float64Array, n: number, sign: 1 | -1): number {
  let best = xs[0];
  for (let k = 1; k < n; k++) if ((xs[k] - best) * sign > 0) best = xs[k];
  return best;
}

function sum(xs: Float64Array, n: number): number {
  let t = 0;
  for (let k = 0; k < n; k++) t += xs[k];
  return t;
}
