// KV-cache usage of one server: the figure, its source, and its history.
import type { Role, ServiceObservation } from '@shared/domain';
import { formatPct, formatTokens } from '../format';
import { KvChart } from '../charts/KvChart';

export function KvUsagePanel({
  deploymentId,
  role,
  obs,
}: {
  deploymentId: string;
  role: Role;
  obs?: ServiceObservation;
}): React.JSX.Element {
  const kv = obs?.kv;
  const tone = kv ? (kv.ratio >= 0.9 ? 'bad' : kv.ratio >= 0.75 ? 'warn' : 'ok') : 'idle';
  return (
    <section className="card kv-panel" data-testid={`kv-usage-${role}`}>
      <header>
        <h2>{role} KV cache</h2>
        {kv && (
          <span className="source" title={kv.caveat ?? ''} data-testid="kv-source">
            from {kv.sourceMetrics.join(' + ')}
            {kv.caveat ? ' ⚠' : ''}
          </span>
        )}
      </header>
      <div className="kv-figure">
        <span className={`big tone-${tone}`} data-testid="kv-percent">
          {kv ? formatPct(kv.ratio) : '—'}
        </span>
        <span className="tokens" data-testid="kv-tokens">
          {kv ? (
            <>
              {formatTokens(kv.usedTokens)} / {formatTokens(kv.capacityTokens)} tokens
              {kv.evictableTokens !== undefined ? ` · ${formatTokens(kv.evictableTokens)} evictable` : ''}
            </>
          ) : obs?.kvMissing ? (
            <span className="muted">
              not exposed by this server version ({obs.kvMissing.reason}; expected{' '}
              {obs.kvMissing.expected.join(', ')})
            </span>
          ) : obs?.metrics && !obs.metrics.ok ? (
            <span className="muted">metrics unavailable: {obs.metrics.error}</span>
          ) : (
            <span className="muted">waiting for the first scrape…</span>
          )}
        </span>
      </div>
      {kv?.caveat && <p className="caveat">{kv.caveat}</p>}
      <KvChart deploymentId={deploymentId} role={role} />
    </section>
  );
}
