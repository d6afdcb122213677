// KV-cache usage of one server: used / evictable / free tokens and % of capacity (with DP attention also the
// fullest dp rank), the time-to-full forecast, where the figure comes from (and its caveat), and its history.
import type { DashboardSnapshot } from '@shared/contract';
import type { AppEvent, ServiceObservation } from '@shared/domain';
import { kvRankKey, signalKey, type ServerRole } from '@shared/signals/spec';
import { formatTimeToFull, formatTokens } from '../format';
import { TimeChart } from '../charts/TimeChart';
import { kvHeadline } from './kv-headline';

const RANK_COLORS = ['--accent', '--warn', '--muted', '--prefill', '--decode', '--router'];

export function KvUsagePanel({
  deploymentId,
  role,
  obs,
  dashboard,
  events,
  detailed = false,
}: {
  deploymentId: string;
  role: ServerRole;
  obs?: ServiceObservation;
  dashboard?: DashboardSnapshot;
  events: AppEvent[];
  detailed?: boolean;
}): React.JSX.Element {
  const kv = obs?.kv;
  const detail = dashboard?.kv.find((k) => k.role === role);
  const head = kv ? kvHeadline(kv) : undefined;
  const tone = head?.tone ?? 'idle';
  const ttf = detail?.timeToFullS ?? null;
  const free = detail?.freeTokens ?? (kv ? (kv.availableTokens ?? kv.capacityTokens - kv.usedTokens) : null);
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
          {head ? head.percent : '—'}
        </span>
        {head?.fullestRank && (
          <span
            className={`fullest-rank tone-${head.fullestTone}`}
            data-testid="kv-fullest-rank"
            title="each dp rank has its own pool; a request is refused by the rank it lands on, and the KV alert watches this rank"
          >
            · {head.fullestRank}
          </span>
        )}
        <span className="tokens" data-testid="kv-tokens">
          {head ? (
            head.tokens
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
      {kv && (
        <dl className="kv-breakdown" data-testid="kv-breakdown">
          <dt>used</dt>
          <dd data-testid="kv-used">{formatTokens(kv.usedTokens)}</dd>
          <dt>evictable</dt>
          <dd data-testid="kv-evictable">
            {kv.evictableTokens !== undefined ? (
              formatTokens(kv.evictableTokens)
            ) : (
              <span className="muted" title="needs sglang:kv_evictable_tokens (SGLang v0.5.11+)">
                not exposed
              </span>
            )}
          </dd>
          <dt>free</dt>
          <dd data-testid="kv-free">{formatTokens(free)}</dd>
          <dt>forecast</dt>
          <dd
            data-testid="kv-ttf"
            title="the trend of the last 5 minutes (at least 2), from the last minute's level; none while usage is not rising"
          >
            {ttf === null ? (
              <span className="muted">not filling</span>
            ) : (
              <span className={ttf < 300 ? 'warn' : undefined}>{formatTimeToFull(ttf)}</span>
            )}
          </dd>
        </dl>
      )}
      {kv?.caveat && <p className="caveat">Caveat: {kv.caveat}</p>}
      <TimeChart
        id={`kv-pct-${role}`}
        title={`${role} KV usage, % of capacity`}
        deploymentId={deploymentId}
        series={[
          { key: signalKey(role, 'kv_ratio'), label: `${role} KV %`, color: `--${role}`, fill: true },
          // One line per dp rank (written only with ≥ 2 ranks), so the rank that fills first is visible.
          ...(detailed ? (kv?.ranks ?? []) : []).map((r, i) => ({
            key: kvRankKey(role, r.rank),
            label: `dp rank ${r.rank}`,
            color: RANK_COLORS[i % RANK_COLORS.length],
            dash: [4, 3],
          })),
        ]}
        unit="ratio"
        yMin={0}
        yMax={1}
        role={role}
        events={events}
        height={detailed ? 200 : 140}
      />
      {detailed && (
        <TimeChart
          id={`kv-tokens-${role}`}
          title={`${role} KV tokens and capacity`}
          deploymentId={deploymentId}
          series={[
            { key: signalKey(role, 'kv_used'), label: 'used', color: `--${role}`, fill: true },
            { key: signalKey(role, 'kv_evictable'), label: 'evictable', color: '--warn' },
            { key: signalKey(role, 'kv_capacity'), label: 'capacity', color: '--muted', dash: [6, 4] },
          ]}
          unit="tokens"
          role={role}
          events={events}
          height={200}
          source={detail?.sourceMetrics.length ? `source: ${detail.sourceMetrics.join(' + ')}` : undefined}
        />
      )}
    </section>
  );
}
