// The history service: a chart's series over any range, from where it exists. The newest minutes from the
// live store (the 1 s scrapes the charts already draw), everything older from the operator's Prometheus on a
// grid chosen for the chart's width, and where Prometheus has nothing, from the recordings of the sessions
// that covered it. Parts are labelled and do not overlap: a part ends where the next (newer) one starts, so
// the chart joins them without a gap. A failing source costs only its own part: its problem is told in words
// on the chart and every other part is still returned.
import type {
  HistoryPart,
  HistoryProblem,
  HistoryQuery,
  HistoryRequests,
  HistoryResult,
  HistorySeries,
  SeriesQuery,
  SeriesResult,
} from '@shared/contract';
import type { ScopedKey } from '@shared/signals/scoped-key';
import type { PromHistoryProvider, PromHistoryTarget } from '../prometheus/history-target';
import { promPart } from '../prometheus/history-query';
import type { DeploymentLookup } from '../deployment/deployment-registry';

/** The live store's answer (DashboardService.store.getSeries). */
export type LiveSeries = (q: SeriesQuery) => SeriesResult;

/** Older recordings: the parts of sessions overlapping a range, each named (its session's name). */
export type RecordingSeries = (q: SeriesQuery) => Promise<{ label: string; result: SeriesResult }[]>;

export interface HistoryServiceOptions {
  live: LiveSeries;
  prometheus?: PromHistoryProvider;
  recordings?: RecordingSeries;
  /** A Prometheus slower than this is abandoned for the request (its part says so); live still answers. */
  promTimeoutMs?: number;
  /** Open deployments: history beyond the live store is a live deployment's (a recording's is its file). */
  deployments?: DeploymentLookup;
}

const toPoints = (t: number[], v: (number | null)[], from: number, to: number): [number, number | null][] => {
  const out: [number, number | null][] = [];
  for (let i = 0; i < t.length; i++) if (t[i] >= from && t[i] < to) out.push([t[i], v[i]]);
  return out;
};

/** What a recording is refused (its history is its file, read through the dashboard's series). */
const OLDER_HISTORY = 'older history';

/** A deployment's Prometheus for older history, or why there is none (each key's problem says it). */
type TargetLookup = { target: PromHistoryTarget } | { message: string; fix?: string };

export class HistoryService {
  private prometheus: PromHistoryProvider | undefined;

  constructor(private readonly opts: HistoryServiceOptions) {
    this.prometheus = opts.prometheus;
  }

  /** Where a deployment's Prometheus is found (discovery in the app, a test's own in tests). */
  setPrometheus(provider: PromHistoryProvider | undefined): void {
    this.prometheus = provider;
  }

  handlers(): HistoryRequests {
    return {
      getHistory: async (a) => {
        this.opts.deployments?.live(a.deploymentId, OLDER_HISTORY);
        return this.history(a);
      },
      getHistoryBatch: async ({ deploymentId, fromMs, toMs, groups }) => {
        this.opts.deployments?.live(deploymentId, OLDER_HISTORY);
        // One look for the deployment's Prometheus for the whole page, not one per chart.
        const prometheus = this.lookupOnce(deploymentId);
        return {
          results: await Promise.all(
            groups.map((g) =>
              this.history({ deploymentId, fromMs, toMs, keys: g.keys, points: g.points }, prometheus),
            ),
          ),
        };
      },
    };
  }

  /**
   * `prometheus`: where the deployment's Prometheus was looked for, shared by the groups of one batch (asked
   * only if some key's window reaches past the live store).
   */
  async history(q: HistoryQuery, prometheus = this.lookupOnce(q.deploymentId)): Promise<HistoryResult> {
    const live = this.opts.live({
      deploymentId: q.deploymentId,
      keys: q.keys,
      fromMs: q.fromMs,
      toMs: q.toMs,
      maxPoints: q.points,
    });
    const liveFrom = live.firstMs;
    // What the live store does not hold: everything before its first row (all of it when it holds nothing).
    const olderTo = Math.min(q.toMs, liveFrom ?? q.toMs + 1);
    const series: HistorySeries[] = q.keys.map((key, i) => {
      const col = live.series[i];
      const parts: HistoryPart[] = [];
      if (col && col.t.length > 0)
        parts.push({
          source: 'live',
          label: 'this app (live)',
          points: toPoints(col.t, col.v, q.fromMs, Infinity),
        });
      return { key, parts, problems: [] };
    });
    let promBytes = 0;
    if (olderTo > q.fromMs) {
      // The older share of the chart's width, so the whole chart keeps about `points` points.
      const share = Math.max(2, Math.round((q.points * (olderTo - q.fromMs)) / (q.toMs - q.fromMs)));
      const found = await prometheus();
      const target = 'target' in found ? found.target : null;
      if (!('target' in found))
        for (const s of series) s.problems.push({ source: 'prometheus', code: 'no-prometheus', ...found });
      const filled = new Set<number>();
      if (target) {
        const signal = AbortSignal.timeout(this.opts.promTimeoutMs ?? 15_000);
        const answers = await Promise.all(
          q.keys.map((key) => promPart(target, key, q.fromMs, olderTo, share, signal)),
        );
        answers.forEach((a, i) => {
          promBytes += a.bytes;
          if (a.part) {
            series[i].parts.unshift(a.part);
            filled.add(i);
          }
          if (a.problem) series[i].problems.push(a.problem);
        });
      }
      if (target) await this.retentionNote(target, q, series);
      await this.fromRecordings(q, olderTo, share, series, filled);
    }
    return { series, liveFromMs: liveFrom, promBytes };
  }

  /** Retention per Prometheus, asked once in a while (a flag, it changes only with a restart). */
  private readonly retention = new WeakMap<object, { atMs: number; s: number | null }>();

  /** A range reaching past what Prometheus keeps says so: that part is absent, not zero. */
  private async retentionNote(
    target: PromHistoryTarget,
    q: HistoryQuery,
    series: HistorySeries[],
  ): Promise<void> {
    const now = Date.now();
    let known = this.retention.get(target.api);
    if (!known || now - known.atMs > 600_000) {
      const s = await target.api.retentionS().catch(() => null);
      this.retention.set(target.api, (known = { atMs: now, s }));
    }
    if (known.s === null || q.fromMs >= now - known.s * 1000) return;
    const days = (x: number): string => `${+(x / 86_400).toFixed(1)} d`;
    const problem: HistoryProblem = {
      source: 'prometheus',
      code: 'retention',
      message: `${target.api.label} keeps ${days(known.s)} of history; this range starts ${days((now - q.fromMs) / 1000)} ago, so its start is not there`,
      fix: 'raise --storage.tsdb.retention.time on that Prometheus (or use Thanos/Mimir for long-term storage); older sessions can be opened from the recordings',
    };
    for (const s of series) s.problems.push(problem);
  }

  /** The deployment's Prometheus, looked for on the first call only. */
  private lookupOnce(deploymentId: string): () => Promise<TargetLookup> {
    let found: Promise<TargetLookup> | undefined;
    return () => (found ??= this.target(deploymentId));
  }

  private async target(deploymentId: string): Promise<TargetLookup> {
    const problem = (message: string, fix?: string): TargetLookup => ({ message, ...(fix ? { fix } : {}) });
    if (!this.prometheus)
      return problem(
        'no Prometheus is known for this deployment: older history comes from the recordings only',
        'point the console at the Prometheus that scrapes it: the Prometheus panel at the bottom of the Metrics page takes its URL',
      );
    try {
      const target = await this.prometheus(deploymentId);
      return target
        ? { target }
        : problem(
            "no Prometheus was found on this deployment's hosts: older history comes from the recordings only",
            'give the URL of the Prometheus that scrapes it in the Prometheus panel at the bottom of the Metrics page (directly or through a host), or export its prometheus.yml there to run one',
          );
    } catch (err) {
      return problem(`finding this deployment's Prometheus failed: ${(err as Error).message}`);
    }
  }

  /** Keys Prometheus could not fill get the recordings' parts of the same older range. */
  private async fromRecordings(
    q: HistoryQuery,
    olderTo: number,
    points: number,
    series: HistorySeries[],
    filled: Set<number>,
  ): Promise<void> {
    const want = q.keys.map((k, i) => [k, i] as const).filter(([, i]) => !filled.has(i));
    if (!this.opts.recordings || want.length === 0) return;
    const keys: ScopedKey[] = want.map(([k]) => k);
    let found: { label: string; result: SeriesResult }[];
    try {
      found = await this.opts.recordings({
        deploymentId: q.deploymentId,
        keys,
        fromMs: q.fromMs,
        toMs: olderTo,
        maxPoints: points,
      });
    } catch (err) {
      const p: HistoryProblem = {
        source: 'recording',
        code: 'unreadable',
        message: `reading the recordings failed: ${(err as Error).message}`,
      };
      for (const [, i] of want) series[i].problems.push(p);
      return;
    }
    // Older sessions first, each part cut where the next one (or the live store) begins.
    found.sort((a, b) => (a.result.firstMs ?? 0) - (b.result.firstMs ?? 0));
    want.forEach(([, i], k) => {
      const parts: HistoryPart[] = [];
      found.forEach((f, n) => {
        const col = f.result.series[k];
        const end = Math.min(olderTo, found[n + 1]?.result.firstMs ?? Infinity);
        const pts = col ? toPoints(col.t, col.v, q.fromMs, end) : [];
        if (pts.length) parts.push({ source: 'recording', label: f.label, points: pts });
      });
      series[i].parts.unshift(...parts);
    });
  }
}
