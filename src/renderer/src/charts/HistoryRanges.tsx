// Ranges beyond the live ranges: the last 7 or 30 days, drawn from the operator's Prometheus (and recordings)
// through getHistory. A fixed window like a zoom, so "back to live" and zooming inside it work as they do.
import { setFixedWindow, useUi } from '../state/ui';

const DAY = 86_400_000;
const LONG = [
  { id: '7d', label: '7 d', ms: 7 * DAY },
  { id: '30d', label: '30 d', ms: 30 * DAY },
] as const;

export function HistoryRanges(): React.JSX.Element {
  const ui = useUi();
  const v = ui.view;
  return (
    <>
      {LONG.map((r) => (
        <button
          key={r.id}
          data-testid={`range-${r.id}`}
          aria-pressed={v.mode === 'fixed' && Math.abs(v.to - v.from - r.ms) < 60_000}
          title={`last ${r.label}, from the deployment's Prometheus where the app did not see it`}
          onClick={() => {
            const now = Date.now();
            setFixedWindow(now - r.ms, now);
          }}
        >
          {r.label}
        </button>
      ))}
    </>
  );
}
