// The quiet line under a chart that draws more than the live store holds: where each part came from
// ("prometheus.service on gpu-a until 14:02 · this app (live)"), and in words what failed, with what to change.
import { useSyncExternalStore } from 'react';
import { formatDateTime } from '../format';
import { historyNotes } from './history-source';

export function HistoryNote({ id, keys }: { id: string; keys: readonly string[] }): React.JSX.Element | null {
  const note = useSyncExternalStore(historyNotes.subscribe, () => historyNotes.get(keys));
  // Only the live part: nothing to say (every chart would carry the same word).
  const parts = note?.parts.some((p) => p.source !== 'live') ? note.parts : [];
  if (!note || (parts.length === 0 && note.problems.length === 0)) return null;
  return (
    <div className="chart-note history-note" data-testid={`history-note-${id}`}>
      {parts.length > 0 && (
        <span className="muted" data-testid={`history-sources-${id}`}>
          {parts
            .map((p, i) => `${p.label}${i < parts.length - 1 ? ` until ${formatDateTime(p.toMs)}` : ''}`)
            .join(' · ')}
        </span>
      )}
      {note.problems.map((p) => (
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
