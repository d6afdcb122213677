// The pipeline's parts between its stages: the verdict of where requests pile up, with its evidence, and the
// links' rates — router → prefill, and prefill → decode's KV transfer (the overview places the stages).
import type { DashboardSnapshot } from '@shared/contract';
import type { Observation } from '@shared/domain';
import type { SignalKey } from '@shared/signals/spec';
import { formatClock, formatPct, formatValue } from '../format';
import { evidenceBeyondHeadline } from './verdict-evidence';
import { transferFigures } from './transfer-link';

const VERDICT_TONE: Record<string, string> = {
  healthy: 'ok',
  idle: 'idle',
  unknown: 'idle',
  // Nothing is known of a host that cannot be read: neither good nor bad.
  unreachable: 'idle',
  'service-down': 'bad',
};

const valueOf =
  (dashboard?: DashboardSnapshot) =>
  (k: SignalKey): number | null =>
    dashboard?.values[k] ?? null;

/** Where requests pile up, with its evidence (the fleet overview shows the same box). */
export function VerdictBox({ dashboard }: { dashboard?: DashboardSnapshot }): React.JSX.Element {
  const verdict = dashboard?.verdict;
  const evidence = verdict ? evidenceBeyondHeadline(verdict) : [];
  return (
    <div
      className={`verdict tone-${verdict ? (VERDICT_TONE[verdict.kind] ?? 'warn') : 'idle'}`}
      data-testid="verdict"
      data-kind={verdict?.kind ?? 'unknown'}
    >
      <strong data-testid="verdict-headline">
        {verdict?.headline ?? 'Waiting for the first poll to tell where requests wait…'}
      </strong>
      {evidence.length > 0 && (
        <ul data-testid="verdict-evidence">
          {evidence.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
      {verdict?.nextStep && (
        <p className="verdict-next" data-testid="verdict-next">
          Next: {verdict.nextStep}
        </p>
      )}
    </div>
  );
}

/** Router → prefill: the router's request rate, 5xx share and p99. */
export function RouterLink({ dashboard }: { dashboard?: DashboardSnapshot }): React.JSX.Element {
  const v = valueOf(dashboard);
  return (
    <div className="pipe-link" data-testid="pd-link-router">
      <span className="arrow" aria-hidden>
        →
      </span>
      <span>{formatValue('requests_per_s', v('router.router_requests_per_s'))}</span>
      <span className="muted">5xx {formatPct(v('router.router_error_share'))}</span>
      <span className="muted">p99 {formatValue('seconds', v('router.router_latency_p99_s'))}</span>
    </div>
  );
}

/**
 * Prefill → decode: the KV transfer's rate, latency and failures (in a fleet, the roles' aggregates); the last
 * figures, said so, when one side has no worker serving (transfer-link.ts).
 */
export function TransferLink({
  dashboard,
  latest,
}: {
  dashboard?: DashboardSnapshot;
  latest?: Observation;
}): React.JSX.Element {
  const f = transferFigures(valueOf(dashboard), latest);
  const stale = f.notServing.length > 0;
  const unknown = f.unknown.length > 0;
  const last = (text: string): string => (stale && !text.startsWith('—') ? `— (last ${text})` : text);
  const since = f.unknown.map((u) => u.since).filter((t): t is number => t !== null);
  return (
    <div className="pipe-link" data-testid="pd-link-transfer" data-stale={stale || unknown}>
      <span className="arrow" aria-hidden>
        →
      </span>
      <span className="muted">KV transfer</span>
      <span data-testid="transfer-rate" className={stale || unknown ? 'muted' : undefined}>
        {unknown ? '—' : last(formatValue('gb_per_s', f.gbPerS))}
      </span>
      <span data-testid="transfer-latency" className={stale || unknown ? 'muted' : undefined}>
        latency {unknown ? '—' : last(formatValue('ms', f.latencyMs))}
      </span>
      <span data-testid="transfer-failures" className={f.failuresPerMin > 0 && !unknown ? 'bad' : 'muted'}>
        {unknown ? '—' : formatValue('per_min', f.failuresPerMin)} failures
      </span>
      {unknown ? (
        <span className="muted" data-testid="transfer-unknown">
          {f.unknown.map((u) => u.role).join(' and ')} unknown
          {since.length ? ` since ${formatClock(Math.min(...since))}` : ''}
        </span>
      ) : stale ? (
        <span className="warn" data-testid="transfer-stale">
          no {f.notServing.join(' or ')} worker serving
        </span>
      ) : null}
    </div>
  );
}
