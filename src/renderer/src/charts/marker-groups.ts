// What a chart marks for its timeline events: an alert is one episode from its start to its end (a band, not a
// marker per change of its text or workers), episodes that overlap in time are one band that counts them, and
// every other event is a point marker. Alerts of recordings made before alert events carried their key
// (AppEvent.alert) stay point markers.
import type { AppEvent } from '@shared/domain';

type Severity = AppEvent['severity'];

/** One or more overlapping alert episodes. */
export interface AlertBand {
  from: number;
  /** null: still firing. */
  to: number | null;
  /** The worst of its notified starts; info when every one was quiet (expected during a restart). */
  severity: Severity;
  /** Its episodes. */
  count: number;
  /** The start of its first episode, titled with how many overlap it ("… (+2 more alerts)"). */
  start: AppEvent;
}

export interface ChartMarks {
  bands: AlertBand[];
  points: AppEvent[];
}

const RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

interface Episode {
  from: number;
  to: number | null;
  severity: Severity;
  start: AppEvent;
}

export function chartMarks(events: readonly AppEvent[]): ChartMarks {
  const points: AppEvent[] = [];
  const open = new Map<string, Episode>();
  const episodes: Episode[] = [];
  for (const e of events) {
    const a = e.alert;
    if (e.kind !== 'alert' || !a) {
      points.push(e);
      continue;
    }
    const ep = open.get(a.key);
    if (a.change === 'fired') {
      const severity: Severity = a.notify ? e.severity : 'info';
      if (!ep) {
        const next: Episode = { from: e.ts, to: null, severity, start: e };
        open.set(a.key, next);
        episodes.push(next);
      } else if (RANK[severity] > RANK[ep.severity]) ep.severity = severity;
    } else if (a.change === 'resolved' || a.change === 'ended') {
      // An end whose start is older than the events kept: the episode runs from before the first of them.
      if (ep) ep.to = e.ts;
      else episodes.push({ from: -Infinity, to: e.ts, severity: 'info', start: e });
      open.delete(a.key);
    }
  }
  episodes.sort((x, y) => x.from - y.from);
  const bands: AlertBand[] = [];
  for (const ep of episodes) {
    const last = bands.at(-1);
    if (last && (last.to === null || ep.from <= last.to)) {
      last.count++;
      if (last.to !== null) last.to = ep.to === null ? null : Math.max(last.to, ep.to);
      if (RANK[ep.severity] > RANK[last.severity]) last.severity = ep.severity;
    } else bands.push({ from: ep.from, to: ep.to, severity: ep.severity, count: 1, start: ep.start });
  }
  for (const b of bands)
    if (b.count > 1)
      b.start = {
        ...b.start,
        title: `${b.start.title} (+${b.count - 1} more alert${b.count > 2 ? 's' : ''})`,
      };
  return { bands, points };
}
