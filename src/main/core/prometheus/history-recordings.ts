// Older history from the app's own recordings, where Prometheus has none: the sessions of the deployment
// that overlap the range, each read as review reads it (loadReview: the overview member first, so a day-long
// file answers in a fraction of its full read) and answered by the same series code as the live store.
// Sessions being recorded are left out: their newest minutes are the live store's.
import type { SeriesQuery, SeriesResult } from '@shared/contract';
import { loadReview } from '../review/load-review';
import type { SessionInfo } from '../recording/session-store';

export interface RecordingHistoryOptions {
  list: () => Promise<SessionInfo[]>;
  /** Ids of the sessions being recorded now. */
  activeIds?: () => string[];
  /** At most this many sessions per request, newest first (each read costs about a second per recorded day). */
  maxSessions?: number;
}

export function recordingHistory(
  opts: RecordingHistoryOptions,
): (q: SeriesQuery) => Promise<{ label: string; result: SeriesResult }[]> {
  return async (q) => {
    const active = new Set(opts.activeIds?.() ?? []);
    const from = q.fromMs ?? -Infinity;
    const to = q.toMs ?? Infinity;
    const sessions = (await opts.list())
      .filter(
        (s) =>
          s.deploymentId === q.deploymentId &&
          !active.has(s.id) &&
          s.state !== 'damaged' &&
          s.endedAt > from &&
          s.startedAt < to,
      )
      .slice(0, opts.maxSessions ?? 4);
    const out: { label: string; result: SeriesResult }[] = [];
    for (const s of sessions) {
      const loaded = await loadReview(s.path);
      const { table, notExposed } = loaded.data;
      out.push({
        label: `recording “${s.name}”`,
        result: table.series(
          { keys: q.keys, fromMs: q.fromMs, toMs: q.toMs, maxPoints: q.maxPoints },
          notExposed,
          () => undefined,
        ),
      });
    }
    return out;
  };
}
