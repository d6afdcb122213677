// Contract part: a chart's history over any range, merged from where it exists — the newest minutes from the
// app's own scrapes (live), older from the operator's Prometheus (query_range), older recordings where
// Prometheus has nothing — each part labelled with its source, each failure in words on the chart.
import type { ScopedKey } from '../signals/scoped-key';

export type HistorySourceKind = 'live' | 'prometheus' | 'recording';

/** One contiguous part of a key's series from one source. */
export interface HistoryPart {
  source: HistorySourceKind;
  /** Where it came from, as the chart's quiet label says it ("prometheus.service on gpu-a", a recording's name). */
  label: string;
  /** [epoch ms, value] ascending; null = a gap. */
  points: [number, number | null][];
  /** prometheus: the PromQL asked and the step (s), so the operator can paste it into Prometheus. */
  query?: string;
  stepS?: number;
}

/** Why a source gave nothing (or less) for a key: names the query and the cause, says what to change. */
export interface HistoryProblem {
  source: HistorySourceKind;
  /** A PromFailure code, 'missing' (answered, but no series), 'no-promql', 'no-prometheus'. */
  code: string;
  message: string;
  fix?: string;
  query?: string;
}

export interface HistorySeries {
  key: ScopedKey;
  /** Oldest first; parts do not overlap. */
  parts: HistoryPart[];
  problems: HistoryProblem[];
}

export interface HistoryQuery {
  deploymentId: string;
  keys: ScopedKey[];
  fromMs: number;
  toMs: number;
  /** About this many points per key (the chart's width in pixels). */
  points: number;
}

export interface HistoryResult {
  series: HistorySeries[];
  /** The oldest time the live store holds for this deployment (null: none). */
  liveFromMs: number | null;
  /** Bytes of the Prometheus answers (as they crossed the tunnel). */
  promBytes: number;
}

/** A page's charts over one window in one request: one group per chart, with its own width. */
export interface HistoryBatchQuery {
  deploymentId: string;
  fromMs: number;
  toMs: number;
  groups: { keys: ScopedKey[]; points: number }[];
}

export interface HistoryBatchResult {
  /** One per group, in the order asked, each as getHistory would answer that group alone. */
  results: HistoryResult[];
}

export interface HistoryRequests {
  getHistory(args: HistoryQuery): Promise<HistoryResult>;
  getHistoryBatch(args: HistoryBatchQuery): Promise<HistoryBatchResult>;
}

export const HISTORY_REQUESTS = [
  'getHistory',
  'getHistoryBatch',
] as const satisfies readonly (keyof HistoryRequests)[];

export type HistoryEvents = Record<never, never>;
export const HISTORY_EVENTS = [] as const;
