// The time window of a review, in the top bar where a live deployment has its ranges and "live": the whole
// session, or a span around the cursor; zoom and pan on any chart work as they do live.
import type { DeploymentView } from '../state/store';
import { setFixedWindow, useUi } from '../state/ui';
import { formatRange } from '../format';
import { useReviewUi } from './state';

const AROUND = [
  { id: '5m', label: '±5 min', ms: 5 * 60_000 },
  { id: '30m', label: '±30 min', ms: 30 * 60_000 },
  { id: '3h', label: '±3 h', ms: 3 * 3_600_000 },
] as const;

export function ReviewRanges({ view }: { view: DeploymentView }): React.JSX.Element {
  const r = view.summary.review!;
  const ui = useUi();
  const cursor = useReviewUi().cursors[view.summary.deployment.id] ?? r.cursor;
  const whole = ui.view.mode === 'fixed' && ui.view.from <= r.firstTs && ui.view.to >= r.lastTs;
  return (
    <div className="ranges" role="group" aria-label="Time window of the recording">
      <button
        data-testid="review-range-all"
        aria-pressed={whole}
        title="Show the whole session"
        onClick={() => setFixedWindow(r.firstTs, r.lastTs + 1)}
      >
        Whole session
      </button>
      {AROUND.map((a) => (
        <button
          key={a.id}
          data-testid={`review-range-${a.id}`}
          title={`${a.label} around the cursor`}
          onClick={() => setFixedWindow(cursor - a.ms, cursor + a.ms)}
        >
          {a.label}
        </button>
      ))}
      {ui.view.mode === 'fixed' && !whole && (
        <span className="muted small" data-testid="review-window">
          {formatRange(ui.view.from, ui.view.to)}
        </span>
      )}
    </div>
  );
}
