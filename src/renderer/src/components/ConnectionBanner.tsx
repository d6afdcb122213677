// A banner that never lies: when the link to the host is not working (or, connected, nothing answers), it says
// since when — the host's last answer, its age counting up — and that the figures below are from then. In a
// fleet each host that cannot be read gets its own line, naming the workers it leaves unknown.
import type { DeploymentView } from '../state/store';
import { bannerLines } from './link-banner';
import { readingClock } from './staleness';

export function ConnectionBanner({
  view,
  now,
}: {
  view: DeploymentView;
  now: number;
}): React.JSX.Element | null {
  const lines = bannerLines(view, readingClock(view, now));
  if (lines.length === 0) return null;
  const bad = lines.some((l) => l.tone === 'bad');
  return (
    <div
      className={`banner banner-${bad ? 'bad' : 'warn'}`}
      role="alert"
      data-testid="connection-banner"
      data-state={lines[0].host === undefined ? lines[0].state : 'hosts'}
    >
      {lines.map((l) => (
        <div
          key={l.host ?? ''}
          data-testid={l.host ? `connection-banner-${l.host}` : 'connection-banner-text'}
        >
          {l.text}
        </div>
      ))}
    </div>
  );
}
