// The scrubber across the whole recorded session: drag or click to move the cursor, arrow keys to step, and the
// session's events as markers (alerts, restarts, state changes, notes) — click one to jump there. Markers closer
// than a few pixels are grouped, so a day with thousands of events stays readable and clickable.
import { useEffect, useMemo, useRef, useState } from 'react';
import type { AppEvent } from '@shared/domain';
import { formatClock, formatDateTime } from '../format';

export type MarkerGroup = 'alert' | 'restart' | 'state' | 'note' | 'other';

export const MARKER_GROUPS: Array<{ id: MarkerGroup; label: string; letter: string }> = [
  { id: 'alert', label: 'Alerts', letter: '!' },
  { id: 'restart', label: 'Restarts', letter: 'R' },
  { id: 'state', label: 'State changes', letter: 'S' },
  { id: 'note', label: 'Notes', letter: 'N' },
  { id: 'other', label: 'Other', letter: '·' },
];

export function groupOf(e: AppEvent): MarkerGroup {
  switch (e.kind) {
    case 'alert':
      // An alert's start is an alert marker; its end, a change of its workers, a quiet start are state changes.
      if (e.alert) return e.alert.change === 'fired' && e.alert.notify ? 'alert' : 'state';
      return e.title.startsWith('resolved: ') ? 'state' : 'alert';
    case 'restart-step':
    case 'action':
      return 'restart';
    case 'state-change':
    case 'health':
      return 'state';
    case 'annotation':
      return 'note';
    default:
      return 'other';
  }
}

const PRIORITY: MarkerGroup[] = ['alert', 'restart', 'note', 'state', 'other'];
/** Markers are 18 px wide: closer ones are grouped so none hides another. */
const CLUSTER_PX = 18;

interface Cluster {
  x: number;
  events: AppEvent[];
  group: MarkerGroup;
  severity: AppEvent['severity'];
}

export function Timeline({
  firstTs,
  lastTs,
  cursor,
  events,
  hidden,
  onSeek,
}: {
  firstTs: number;
  lastTs: number;
  cursor: number;
  events: AppEvent[];
  hidden: ReadonlySet<MarkerGroup>;
  onSeek: (ts: number) => void;
}): React.JSX.Element {
  const track = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  const span = Math.max(1, lastTs - firstTs);
  useEffect(() => {
    const el = track.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth || 800));
    ro.observe(el);
    setWidth(el.clientWidth || 800);
    return () => ro.disconnect();
  }, []);

  const clusters = useMemo(() => {
    const out: Cluster[] = [];
    let cur: Cluster | null = null;
    // Pushed events (a note just added) arrive at the end of the list, not in time order.
    for (const e of [...events].sort((a, b) => a.ts - b.ts)) {
      if (e.ts < firstTs || e.ts > lastTs) continue;
      const g = groupOf(e);
      if (hidden.has(g)) continue;
      const x = ((e.ts - firstTs) / span) * width;
      if (cur && x - cur.x < CLUSTER_PX) {
        cur.events.push(e);
        if (PRIORITY.indexOf(g) < PRIORITY.indexOf(cur.group)) cur.group = g;
        if (e.severity === 'error' || (e.severity === 'warning' && cur.severity === 'info'))
          cur.severity = e.severity;
      } else {
        cur = { x, events: [e], group: g, severity: e.severity };
        out.push(cur);
      }
    }
    return out;
  }, [events, firstTs, lastTs, span, width, hidden]);

  const tsAt = (clientX: number): number => {
    const r = track.current!.getBoundingClientRect();
    return firstTs + Math.min(1, Math.max(0, (clientX - r.left) / r.width)) * span;
  };
  const dragging = useRef(false);
  const frame = useRef(0);
  const pending = useRef<number | null>(null);
  const seekSoon = (ts: number): void => {
    pending.current = ts;
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      if (pending.current !== null) onSeek(pending.current);
    });
  };

  const onKey = (e: React.KeyboardEvent): void => {
    const step = e.shiftKey ? 60_000 : 5_000;
    const moves: Record<string, number> = {
      ArrowLeft: cursor - step,
      ArrowRight: cursor + step,
      PageUp: cursor - span / 20,
      PageDown: cursor + span / 20,
      Home: firstTs,
      End: lastTs,
    };
    if (e.key in moves) {
      e.preventDefault();
      onSeek(moves[e.key]);
    }
  };

  const pct = ((cursor - firstTs) / span) * 100;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => firstTs + f * span);
  const pickable = events.length > 0;
  return (
    <div className="timeline" data-testid="review-timeline">
      <div className="timeline-markers" aria-label="Events on the timeline">
        {clusters.map((c) => {
          const lead = c.events.find((e) => groupOf(e) === c.group) ?? c.events[0];
          const kinds = [...new Set(c.events.map((e) => e.kind))].join(' ');
          const title =
            c.events
              .slice(0, 6)
              .map((e) => `${formatDateTime(e.ts)} ${e.kind}: ${e.title}`)
              .join('\n') + (c.events.length > 6 ? `\n… and ${c.events.length - 6} more` : '');
          return (
            <button
              key={`${lead.id}-${c.x.toFixed(0)}`}
              className={`marker marker-${c.group} sev-${c.severity}`}
              style={{ left: `${(c.x / width) * 100}%` }}
              data-testid="review-marker"
              data-kind={lead.kind}
              data-kinds={kinds}
              data-ts={lead.ts}
              title={title}
              aria-label={`Jump to ${formatDateTime(lead.ts)}: ${lead.title}${c.events.length > 1 ? ` (+${c.events.length - 1})` : ''}`}
              onClick={() => onSeek(lead.ts)}
            >
              {MARKER_GROUPS.find((g) => g.id === c.group)?.letter}
              {c.events.length > 1 ? <span className="count">{c.events.length}</span> : null}
            </button>
          );
        })}
      </div>
      <div
        ref={track}
        className="timeline-track"
        role="slider"
        tabIndex={0}
        aria-label="Review cursor"
        aria-valuemin={firstTs}
        aria-valuemax={lastTs}
        aria-valuenow={cursor}
        aria-valuetext={formatDateTime(cursor)}
        data-testid="review-track"
        onKeyDown={onKey}
        onPointerDown={(e) => {
          dragging.current = true;
          (e.target as HTMLElement).setPointerCapture?.(e.pointerId);
          seekSoon(tsAt(e.clientX));
        }}
        onPointerMove={(e) => dragging.current && seekSoon(tsAt(e.clientX))}
        onPointerUp={(e) => {
          dragging.current = false;
          (e.target as HTMLElement).releasePointerCapture?.(e.pointerId);
        }}
      >
        <div className="timeline-played" style={{ width: `${pct}%` }} />
        {pickable &&
          clusters.map((c) => (
            <div
              key={`tick-${c.x.toFixed(0)}`}
              className={`timeline-event marker-${c.group} sev-${c.severity}`}
              style={{ left: `${(c.x / width) * 100}%` }}
            />
          ))}
        <div className="timeline-cursor" style={{ left: `${pct}%` }} data-testid="review-cursor" />
      </div>
      <div className="timeline-ticks" aria-hidden>
        {ticks.map((t, i) => (
          <span key={i} style={{ left: `${i * 25}%` }}>
            {i === 0 || i === 4 ? formatDateTime(t) : formatClock(t)}
          </span>
        ))}
      </div>
    </div>
  );
}
