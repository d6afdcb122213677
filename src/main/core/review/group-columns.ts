// The columns of one group of review's signal table — a role, or a fleet's worker — from its target's evaluated
// scrapes, its recorded unit states and health results: one row per scrape plus filler rows while it was not
// scraped, as the live store writes one per poll.
import type { Role } from '@shared/domain';
import type { Recording } from '../recording/types';
import { rowAt, type TargetColumns } from './target-columns';
import { MONITOR_FAMILIES, MONITOR_TARGET } from '../recording/host-series';
import type { TargetSignals } from '../signals/evaluate';
import { timeToFull } from '../signals/evaluate/time-to-full';
import type { GroupColumns } from './signal-table';
import type { WorkerRows } from '../signals/evaluate/router-workers';

/** Hard bound on rows per role group (filler rows of a long outage at a coarse step count too). */
const MAX_ROWS = 400_000;

export function medianStep(t: Float64Array): number {
  if (t.length < 2) return 1000;
  const steps: number[] = [];
  const every = Math.max(1, Math.floor((t.length - 1) / 512));
  for (let k = 1; k < t.length; k += every) steps.push(t[k] - t[k - 1]);
  steps.sort((a, b) => a - b);
  return Math.min(60_000, Math.max(250, steps[steps.length >> 1]));
}

/** Row times: every scrape, plus one per step wherever scrapes stop for longer than 2.5 steps. */
export function rowTimes(
  scrapeT: Float64Array,
  stepMs: number,
  fromMs: number,
  toMs: number,
): { t: Float64Array; scrapeRow: Int32Array } {
  let step = stepMs;
  const span = Math.max(0, toMs - fromMs);
  if (span / step + scrapeT.length > MAX_ROWS) step = Math.ceil(span / (MAX_ROWS - scrapeT.length || 1));
  const times: number[] = [];
  const scrapeRow = new Int32Array(scrapeT.length);
  const fill = (a: number, b: number): void => {
    // Filler rows strictly between a and b, one step apart, the last at least half a step before b.
    if (!(b - a > 2.5 * step)) return;
    for (let x = a + step; x <= b - step / 2; x += step) times.push(x);
  };
  let prev = fromMs - step;
  for (let k = 0; k < scrapeT.length; k++) {
    fill(prev, scrapeT[k]);
    scrapeRow[k] = times.length;
    times.push(scrapeT[k]);
    prev = scrapeT[k];
  }
  fill(prev, toMs + step);
  return { t: Float64Array.from(times), scrapeRow };
}

/**
 * One role's (or, with `scope`, one fleet worker's) group of the signal table: every signal at every row, the
 * systemd and health state of the sources `ofSource` accepts as step functions, the KV source per row; and the
 * row of each scrape.
 */
export function buildGroup(
  role: Role,
  scrapeT: Float64Array,
  signals: TargetSignals | null,
  stepMs: number,
  rec: Recording,
  scope: string | undefined,
  ofSource: (source: string) => boolean,
): { group: GroupColumns; kvSource: Int8Array; scrapeRow: Int32Array } {
  const { t, scrapeRow } = rowTimes(scrapeT, stepMs, rec.firstTs, rec.lastTs);
  const n = t.length;
  const cols = new Map<string, Float32Array>();
  const suffix = scope === undefined ? '' : `@${scope}`;
  const col = (key: string): Float32Array => {
    const name = `${role}.${key}${suffix}`;
    let c = cols.get(name);
    if (!c) cols.set(name, (c = new Float32Array(n).fill(NaN)));
    return c;
  };
  const kvSource = new Int8Array(n).fill(-1);
  const metricsOk = col('metrics_ok');
  metricsOk.fill(0);
  for (let k = 0; k < scrapeRow.length; k++) metricsOk[scrapeRow[k]] = 1;
  if (signals) {
    for (const [key, values] of signals.values) {
      const c = col(key);
      for (let k = 0; k < scrapeRow.length; k++) c[scrapeRow[k]] = values[k];
    }
    for (let k = 0; k < scrapeRow.length; k++) kvSource[scrapeRow[k]] = signals.kvSource[k];
  }
  // systemd and health as step functions: each row shows the last state recorded at or before it.
  const active = col('active');
  const restarts = col('restarts');
  stepFill(
    t,
    rec.unitStates.filter((u) => ofSource(u.source)),
    (u) => [u.state.activeState === 'active' ? 1 : 0, u.state.nRestarts],
    [active, restarts],
  );
  stepFill(
    t,
    rec.health.filter((h) => ofSource(h.source)),
    (h) => [h.health.ok ? 1 : 0],
    [col('health_ok')],
  );
  if (role !== 'router') col('kv_ttf_s').set(timeToFull(t, col('kv_ratio')));
  return { group: { t, cols }, kvSource, scrapeRow };
}

/**
 * The KV capacity the monitor read from /server_info for `role`, at each of the role's scrape rows (the last
 * reading at or before the row; NaN before the first): recorded only for servers without the capacity gauge.
 */
export function recordedCapacity(
  targets: ReadonlyMap<string, TargetColumns>,
  role: Role,
  t: Float64Array,
  /** A fleet's worker: its own capacity (format 1.4 labels it `worker`). */
  worker?: string,
): Float64Array | undefined {
  const monitor = targets.get(MONITOR_TARGET);
  const s = monitor
    ?.series(MONITOR_FAMILIES.capacity)
    .find((x) => x.labels.role === role && (worker === undefined || x.labels.worker === worker));
  if (!monitor || !s) return undefined;
  const out = new Float64Array(t.length).fill(NaN);
  let k = -1;
  for (let i = 0; i < t.length; i++) {
    while (k + 1 < s.v.length && monitor.t[rowAt(s, k + 1)] <= t[i]) k++;
    if (k >= 0) out[i] = s.v[k];
  }
  return out;
}

export function stepFill<T extends { ts: number }>(
  t: Float64Array,
  records: readonly T[],
  values: (r: T) => number[],
  into: Float32Array[],
): void {
  let j = -1;
  for (let i = 0; i < t.length; i++) {
    while (j + 1 < records.length && records[j + 1].ts <= t[i]) j++;
    if (j < 0) continue;
    const v = values(records[j]);
    for (let c = 0; c < into.length; c++) into[c][i] = v[c];
  }
}

/** A router's workers over its scrapes: `rows` holds scrape `from` onward, at the times in `t`. */
export interface RouterWorkerTimeline {
  t: Float64Array;
  rows: WorkerRows;
  from: number;
}

/** The router's list over time, as evaluated from its columns (none where it has no worker gauges). */
export function routerWorkerTimeline(
  t: Float64Array,
  signals: TargetSignals | null,
): RouterWorkerTimeline | undefined {
  return signals?.workers ? { t, rows: signals.workers, from: signals.workersFrom ?? 0 } : undefined;
}
