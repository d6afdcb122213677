// Charts over ranges older than the app's live store: a series source that asks the live store first (the
// page's batch, as before) and, when the window starts before the oldest row it holds, asks the older history
// instead (getHistoryBatch: the charts that learn it from the same answer ask together) — the core merges
// Prometheus (and recordings) for the older part with the same live rows for the newest minutes — and hands
// the chart one column per key, the parts joined, so the chart draws them as one line. Where each part came
// from and what failed go to historyNotes, which HistoryNote shows on the chart.
import type { HistoryResult, HistorySeries, SeriesResult } from '@shared/contract';
import type { SeriesAsk, SeriesBatcher } from './series-batch';

type Source = ((ask: SeriesAsk) => Promise<SeriesResult>) & Pick<SeriesBatcher, 'flush'>;

/** What a chart's history came from, per key set (the chart's keys joined by ','). */
export interface HistoryNoteState {
  parts: { source: string; label: string; fromMs: number; toMs: number }[];
  problems: { code?: string; message: string; fix?: string; query?: string }[];
}

type HistoryProblemNote = HistoryNoteState['problems'][number];

const notes = new Map<string, HistoryNoteState>();
const listeners = new Set<() => void>();
/** Key sets of the charts on screen, counted (two charts may draw the same keys). */
const mounted = new Map<string, number>();
let pageProblems: HistoryProblemNote[] = [];

/**
 * A problem that names no query is the deployment's, not one chart's ("no Prometheus was found on this
 * deployment's hosts", a retention shorter than the range, the recordings unreadable): every chart of the page
 * had it, and it was repeated under each of them. It is said once per page (HistoryPageNotice), and the charts
 * keep the problems of their own queries.
 */
export function isPageProblem(p: HistoryProblemNote): boolean {
  return p.query === undefined;
}

export const historyNotes = {
  get: (keys: readonly string[]): HistoryNoteState | undefined => notes.get(keys.join(',')),
  /** The page-wide problems of the charts on screen, each once (the same array until they change). */
  page: (): readonly HistoryProblemNote[] => pageProblems,
  /** A chart drawing `keys` is on screen until the returned function is called. */
  mount(keys: readonly string[]): () => void {
    const id = keys.join(',');
    mounted.set(id, (mounted.get(id) ?? 0) + 1);
    changed();
    return () => {
      const n = (mounted.get(id) ?? 1) - 1;
      if (n > 0) mounted.set(id, n);
      else mounted.delete(id);
      changed();
    };
  },
  subscribe(l: () => void): () => void {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};

function changed(): void {
  const byMessage = new Map<string, HistoryProblemNote>();
  for (const id of mounted.keys())
    for (const p of notes.get(id)?.problems ?? [])
      if (isPageProblem(p) && !byMessage.has(p.message)) byMessage.set(p.message, p);
  const next = [...byMessage.values()];
  if (next.length !== pageProblems.length || next.some((p, i) => p.message !== pageProblems[i].message))
    pageProblems = next;
  for (const l of listeners) l();
}

function setNote(keys: readonly string[], note: HistoryNoteState | undefined): void {
  const id = keys.join(',');
  if (note === undefined ? !notes.has(id) : false) return;
  if (note) notes.set(id, note);
  else notes.delete(id);
  changed();
}

/** A slack so a live window asked a moment after the store's first row does not go to Prometheus. */
const SLACK_MS = 5_000;
/**
 * "No Prometheus is known" is worth a line only when the operator asked for a range the app did not see by
 * this much (7 d, last night); the first minutes of a 5 min chart after connecting are not news.
 */
const TELL_NO_PROMETHEUS_MS = 3_600_000;
/** After an answer without a Prometheus, short gaps are not asked again for this long. */
const NO_PROMETHEUS_TTL_MS = 60_000;

function noteOf(series: HistorySeries[], gapMs: number): HistoryNoteState {
  const parts: HistoryNoteState['parts'] = [];
  const seen = new Set<string>();
  for (const s of series)
    for (const p of s.parts) {
      const id = `${p.source}\u0000${p.label}`;
      if (seen.has(id) || p.points.length === 0) continue;
      seen.add(id);
      parts.push({
        source: p.source,
        label: p.label,
        fromMs: p.points[0][0],
        toMs: p.points[p.points.length - 1][0],
      });
    }
  parts.sort((a, b) => a.fromMs - b.fromMs);
  const problems = new Map<string, HistoryNoteState['problems'][number]>();
  for (const s of series)
    for (const p of s.problems)
      if (!problems.has(p.message) && (p.code !== 'no-prometheus' || gapMs >= TELL_NO_PROMETHEUS_MS))
        problems.set(p.message, p);
  return { parts, problems: [...problems.values()] };
}

/** The merged parts of each key as the columns the charts draw (parts do not overlap and come oldest first). */
export function historyAsSeries(res: HistoryResult): SeriesResult {
  let first: number | null = null;
  let last: number | null = null;
  let raw = 0;
  const series = res.series.map((s) => {
    const t: number[] = [];
    const v: (number | null)[] = [];
    for (const p of s.parts)
      for (const [ts, val] of p.points) {
        t.push(ts);
        v.push(val);
      }
    raw += t.length;
    if (t.length) {
      first = first === null ? t[0] : Math.min(first, t[0]);
      last = last === null ? t[t.length - 1] : Math.max(last, t[t.length - 1]);
    }
    return { key: s.key, t, v };
  });
  return { series, firstMs: first, lastMs: last, rawPoints: raw, decimated: true, missing: {} };
}

/** A chart's older history: its ask with the window's bounds set and maxPoints within getHistory's limits. */
export type OlderHistory = (ask: SeriesAsk & { fromMs: number; toMs: number }) => Promise<HistoryResult>;

export function withHistory(base: Source, getHistory: OlderHistory, now: () => number = Date.now): Source {
  /** The oldest row of each deployment's live store, from the answers seen. */
  const liveFrom = new Map<string, number>();
  /** Deployments whose last answer had no Prometheus, until when short gaps are not asked again. */
  const noProm = new Map<string, number>();
  const ask = async (a: SeriesAsk): Promise<SeriesResult> => {
    const known = liveFrom.get(a.deploymentId);
    const older = (first: number | null | undefined): boolean =>
      a.fromMs !== undefined && (first === null || first === undefined || a.fromMs < first - SLACK_MS);
    // Known to be older than the live store: straight to getHistory, no live request first.
    if (known === undefined || !older(known)) {
      const live = await base(a);
      if (live.firstMs !== null) liveFrom.set(a.deploymentId, live.firstMs);
      if (!older(live.firstMs)) {
        setNote(a.keys, undefined);
        return live;
      }
      if (live.firstMs === null && known === undefined && Object.keys(live.missing).length === a.keys.length)
        return live;
    }
    const first = liveFrom.get(a.deploymentId);
    const gapMs = first === undefined ? Infinity : first - a.fromMs!;
    if ((noProm.get(a.deploymentId) ?? 0) > now() && gapMs < TELL_NO_PROMETHEUS_MS) return base(a);
    try {
      const res = await getHistory({
        ...a,
        fromMs: a.fromMs!,
        toMs: a.toMs ?? now(),
        maxPoints: Math.min(11_000, Math.max(2, a.maxPoints)),
      });
      if (a.signal?.aborted)
        throw new DOMException('the chart stopped waiting for its history', 'AbortError');
      if (res.liveFromMs !== null) liveFrom.set(a.deploymentId, res.liveFromMs);
      if (res.series.every((x) => x.problems.some((p) => p.code === 'no-prometheus')))
        noProm.set(a.deploymentId, now() + NO_PROMETHEUS_TTL_MS);
      setNote(a.keys, noteOf(res.series, gapMs));
      return historyAsSeries(res);
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      // History beyond the live store is unavailable here (a review, an older core): the live rows still draw.
      setNote(a.keys, {
        parts: [],
        problems: [{ message: `older history unavailable: ${(err as Error).message}` }],
      });
      return base(a);
    }
  };
  return Object.assign(ask, { flush: () => base.flush() });
}
