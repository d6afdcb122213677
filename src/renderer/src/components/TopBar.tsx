// Navigation, the time window (ranges, back to live), theme, palette — and the connection as it is.
import type { DeploymentView } from '../state/store';
import { ConnectionIndicator } from './ConnectionIndicator';
import {
  backToLive,
  navigate,
  RANGES,
  setPalette,
  setRange,
  toggleTheme,
  useUi,
  type Page,
} from '../state/ui';
import { formatRange } from '../format';
import { ReviewRanges } from '../review/ReviewRanges';
import { openSessionsPage } from '../sessions/state';
import { HistoryRanges } from '../charts/HistoryRanges';
import { updatedText } from './link-banner';
import { readingClock } from './staleness';

const TABS: Array<{ page: Page; label: string; key: string; testid: string }> = [
  { page: { name: 'overview' }, label: 'Overview', key: 'o', testid: 'nav-overview' },
  { page: { name: 'kv' }, label: 'KV cache', key: 'k', testid: 'nav-kv' },
  { page: { name: 'metrics' }, label: 'Metrics', key: 'm', testid: 'nav-metrics' },
  { page: { name: 'alerts' }, label: 'Alerts', key: 'a', testid: 'nav-alerts' },
  { page: { name: 'service', role: 'prefill' }, label: 'Prefill', key: 'p', testid: 'nav-service-prefill' },
  { page: { name: 'service', role: 'decode' }, label: 'Decode', key: 'd', testid: 'nav-service-decode' },
  { page: { name: 'service', role: 'router' }, label: 'Router', key: 'r', testid: 'nav-service-router' },
];

function same(a: Page, b: Page): boolean {
  return a.name === b.name && (a.name !== 'service' || (b.name === 'service' && a.role === b.role));
}

export function TopBar({
  view,
  onClose,
  now,
}: {
  view: DeploymentView;
  onClose: () => void;
  now: number;
}): React.JSX.Element {
  const ui = useUi();
  // The time of the last reading that answered: pushes keep coming while the host is silent, and their times
  // are not updates.
  const updated = updatedText(view.latest, readingClock(view, now));
  const { deployment, host } = view.summary;
  // An alert expected during a restart by this console needs nobody: not counted.
  const firing = view.dashboard?.alerts.filter((a) => !a.expected).length ?? 0;
  return (
    <header className="topbar">
      <div className="topbar-row">
        <div className="title">
          {/* Cut with an ellipsis where the bar is narrow (a fleet's name at 1280 px): the whole name on hover. */}
          <h1 title={deployment.name} data-testid="deployment-title">
            {deployment.name}
          </h1>
          <span className="muted">
            {host.label}
            {updated ? (
              <>
                {' · '}
                <span
                  data-testid="updated"
                  data-quiet={updated.quiet ? 'true' : 'false'}
                  className={updated.quiet ? 'warn' : undefined}
                >
                  {updated.text}
                </span>
              </>
            ) : null}
          </span>
        </div>
        {view.summary.review ? (
          <span className="review-pill" data-testid="review-indicator" title={view.summary.review.path}>
            Recording · read-only
          </span>
        ) : (
          <ConnectionIndicator status={view.connection} />
        )}
        <button data-testid="open-sessions-topbar" onClick={openSessionsPage} title="Recorded sessions">
          Sessions
        </button>
        <button data-testid="open-palette" onClick={() => setPalette(true)} title="Command palette (Ctrl+K)">
          ⌘K
        </button>
        <button data-testid="theme-toggle" onClick={toggleTheme} title="Light / dark (t)">
          {ui.theme === 'system' ? 'Theme: system' : ui.theme === 'dark' ? 'Theme: dark' : 'Theme: light'}
        </button>
        <button onClick={onClose} data-testid="close-deployment">
          Close
        </button>
      </div>
      <div className="topbar-row">
        <nav className="tabs" aria-label="Pages">
          {TABS.filter(
            (t) =>
              t.page.name !== 'service' ||
              deployment.services.some((s) => s.role === (t.page as { role: string }).role),
          ).map((t) => (
            <button
              key={t.testid}
              data-testid={t.testid}
              aria-current={same(ui.page, t.page) ? 'page' : undefined}
              title={`${t.label} (${t.key})`}
              onClick={() => navigate(t.page)}
            >
              {t.label}
              {t.page.name === 'alerts' && firing > 0 ? (
                <span className="badge" data-testid="alert-badge">
                  {firing}
                </span>
              ) : null}
            </button>
          ))}
        </nav>
        {view.summary.review ? (
          <ReviewRanges view={view} />
        ) : (
          <div className="ranges" role="group" aria-label="Time range">
            {RANGES.map((r, i) => (
              <button
                key={r.id}
                data-testid={`range-${r.id}`}
                aria-pressed={ui.view.mode === 'live' && ui.view.range === r.id}
                title={`last ${r.label} (${i + 1})`}
                onClick={() => setRange(r.id)}
              >
                {r.label}
              </button>
            ))}
            <HistoryRanges />
            {ui.view.mode === 'fixed' ? (
              <button
                className="primary"
                data-testid="back-to-live"
                onClick={backToLive}
                title="Back to live (l)"
              >
                {formatRange(ui.view.from, ui.view.to)} · back to live
              </button>
            ) : (
              <span className="live-dot" data-testid="live-indicator" title="Following live data">
                live
              </span>
            )}
          </div>
        )}
      </div>
    </header>
  );
}
