// A banner that never lies: it says when the link to the host is not connected, and when "connected"
// has delivered no fresh observation for a while (the figures on screen are then old, and say since when).
import type { DeploymentView } from '../state/store';
import { connectionText } from './ConnectionIndicator';
import { formatClock } from '../format';

const STALE_AFTER_MS = 5000;

export function ConnectionBanner({
  view,
  now,
}: {
  view: DeploymentView;
  now: number;
}): React.JSX.Element | null {
  const c = view.connection;
  if (c.state !== 'connected') {
    if (c.state === 'idle') return null;
    const { text, tone } = connectionText(c, now);
    return (
      <div
        className={`banner banner-${tone === 'bad' ? 'bad' : 'warn'}`}
        role="alert"
        data-testid="connection-banner"
        data-state={c.state}
      >
        {c.state === 'connecting' ? 'Connecting to the host… ' : 'Not connected to the host: '}
        {text}
        {view.latest ? ` — figures below are from ${formatClock(view.latest.ts)}.` : ''}
      </div>
    );
  }
  if (view.receivedAt && now - view.receivedAt > STALE_AFTER_MS)
    return (
      <div className="banner banner-warn" role="alert" data-testid="connection-banner" data-state="no-data">
        Connected, but no new observation since {formatClock(view.receivedAt)} (
        {Math.round((now - view.receivedAt) / 1000)} s); the figures below are that old.
      </div>
    );
  return null;
}
