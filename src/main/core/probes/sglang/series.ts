// Sample lookup by name and aggregation across SGLang scheduler ranks.
//
// Lookups go by *sample* name, never by family name: a counter's family is `x_total` in Prometheus text but `x`
// in OpenMetrics, and a histogram's samples are `x_bucket`/`x_sum`/`x_count`. Sample names are the same in both.
//
// Rank semantics (reference §0.3, §1.2): each `dp_rank` is a separate scheduler with its own KV pool and queues,
// so figures add up across dp ranks. `tp_rank`/`pp_rank`/`moe_ep_rank` series (seen with
// --enable-metrics-for-all-schedulers) describe the *same* token pool sharded by heads/layers/experts, so
// adding them would multiply capacity by TP; they are collapsed with max. `pid` (gauges without
// multiprocess_mode) is dropped the same way. With priority scheduling the totals live under `priority=""`.

import type { Exposition, MetricFamily, Sample } from '../exposition/types';

export interface MetricView {
  readonly exp: Exposition;
  /** Every sample with this exact sample name, across families. */
  samples(name: string): Sample[];
  has(name: string): boolean;
  /** The family whose name is `name`, if the exposition declared one. */
  family(name: string): MetricFamily | undefined;
}

const views = new WeakMap<Exposition, MetricView>();

/** Indexes an exposition once; repeated calls with the same object reuse the index. */
export function viewOf(exp: Exposition): MetricView {
  const cached = views.get(exp);
  if (cached) return cached;
  const bySample = new Map<string, Sample[]>();
  const byFamily = new Map<string, MetricFamily>();
  for (const fam of exp.families) {
    byFamily.set(fam.name, fam);
    for (const s of fam.samples) {
      const list = bySample.get(s.name);
      if (list) list.push(s);
      else bySample.set(s.name, [s]);
    }
  }
  const view: MetricView = {
    exp,
    samples: (name) => bySample.get(name) ?? [],
    has: (name) => (bySample.get(name)?.length ?? 0) > 0,
    family: (name) => byFamily.get(name),
  };
  views.set(exp, view);
  return view;
}

/** Finite values per dp rank (key '' when the label is absent), replicas collapsed with max. */
export function perDpRank(samples: readonly Sample[]): Map<string, number> {
  // Per-priority series would double-count next to their totals; keep the totals when they exist.
  const hasTotals = samples.some((s) => s.labels.priority === '');
  const chosen = hasTotals ? samples.filter((s) => !s.labels.priority) : samples;
  const out = new Map<string, number>();
  for (const s of chosen) {
    if (!Number.isFinite(s.value)) continue;
    const rank = s.labels.dp_rank ?? '';
    const prev = out.get(rank);
    out.set(rank, prev === undefined ? s.value : Math.max(prev, s.value));
  }
  return out;
}

/** Parses a bucket bound as Prometheus writes it ("0.1", "1.0", "+Inf", "1e+06"); NaN when unparseable. */
export function parseLe(le: string | undefined): number {
  if (le === undefined) return NaN;
  const t = le.trim();
  if (t === '+Inf' || t === 'Inf' || t === '+inf' || t === 'inf') return Infinity;
  if (t === '-Inf' || t === '-inf') return -Infinity;
  return t === '' ? NaN : Number(t);
}
