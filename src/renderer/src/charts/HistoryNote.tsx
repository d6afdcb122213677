// The quiet line under a chart that draws more than the live store holds: where each part came from
// ("prometheus.service on gpu-a until 14:02 · this app (live)"), and in words what failed for its own queries, with
// what to change. What failed for the whole deployment (no Prometheus) is said once above the page's charts.
import { useEffect, useSyncExternalStore } from 'react';
import { formatDateTime } from '../format';
import { historyNotes, isPageProblem } from './history-source';

export function HistoryNote({ id, keys }: { id: string; keys: readonly string[] }): React.JSX.Element | null {
  const note = useSyncExternalStore(historyNotes.subscribe, () => historyNotes.get(keys));
  const keysId = keys.join(',');
  useEffect(() => historyNotes.mount(keysId.split(',')), [keysId]);
  // Only the live part: nothing to say (every chart would carry the same word).
  const parts = note?.parts.some((p) => p.source !== 'live') ? note.parts : [];
  const problems = note?.problems.filter((p) => !isPageProblem(p)) ?? [];
  if (!note || (parts.length === 0 && problems.length === 0)) return null;
  return (
    <div className="chart-note history-note" data-testid={`history-note-${id}`}>
      {parts.length > 0 && (
        <span className="muted" data-testid={`history-sources-${id}`}>
          {parts
            .map((p, i) => `${p.label}${i < parts.length - 1 ? ` until ${formatDateTime(p.toMs)}` : ''}`)
            .join(' · ')}
        </span>
      )}
      {problems.map((p) => (
        <span
          key={p.message}
          className="history-problem"
          data-testid={`history-problem-${id}`}
          title={p.query}
        >
          {' '}
          {p.message}
          {p.fix ? ` — ${p.fix}` : ''}
        </span>
      ))}
    </div>
  );
}

/** What failed for the older history of every chart on the page (no Prometheus, …), said once. */
export function HistoryPageNotice(): React.JSX.Element | null {
  const problems = useSyncExternalStore(historyNotes.subscribe, historyNotes.page);
  if (problems.length === 0) return null;
  return (
    <div className="history-page-notice" data-testid="history-page-notice" role="note">
      {problems.map((p) => (
        <p key={p.message} data-testid="history-page-problem">
          Older history: {p.message}
          {p.fix ? ` — ${p.fix}` : ''}
        </p>
      ))}
    </div>
  );
}
