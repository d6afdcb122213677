// One role of a fleet as a stage of the pipeline: the role's aggregate (KV used / capacity, the fullest worker,
// workers healthy x/N, requests) over one compact row per worker, problems first and then the fullest first,
// collapsed past a screenful so 8 workers of a role still fit beside the other role on 1280×720.
import { useState } from 'react';
import type { ServerRole } from '@shared/signals/spec';
import { formatClock, formatPct, formatTokens } from '../format';
import { navigate } from '../state/ui';
import { kvTone } from '../components/kv-headline';
import { RollButton } from '../restart/RollButton';
import { QUEUE_LABEL, QUEUE_MEANING } from '../components/stage-queues';
import { roleAggregate, sortByFullest, visibleRows, type StageCount, type WorkerRow } from './fleet-model';
import { WorkerHosts } from './WorkerHosts';

/** Rows a role shows before "n more": 8 fit the overview beside the other role at 720 px high. */
const MAX_ROWS = 8;

export function RoleGroup({
  role,
  rows,
  expandAll = false,
}: {
  role: ServerRole;
  rows: readonly WorkerRow[];
  expandAll?: boolean;
}): React.JSX.Element {
  const [expanded, setExpanded] = useState(expandAll);
  const mine = rows.filter((r) => r.role === role);
  const agg = roleAggregate(mine, role);
  const { shown, hidden } = visibleRows(sortByFullest(mine), MAX_ROWS, expanded);
  // A worker not read yet is neither healthy nor down: at open the role reads "checking", not "0/N healthy";
  // nor is one whose host is silent now: it is unknown, since its last reading.
  const down = agg.workers - agg.healthy - agg.pending - agg.unknown;
  const tone =
    down > 0
      ? agg.healthy === 0 && agg.unknown === 0
        ? 'bad'
        : 'warn'
      : agg.workers > 0 && agg.pending === 0 && agg.unknown === 0
        ? 'ok'
        : 'idle';
  const unknownText =
    agg.unknown > 0
      ? `${agg.unknown} unknown${agg.unknownSince !== null ? ` since ${formatClock(agg.unknownSince)}` : ''}`
      : null;
  return (
    <section className={`card role-group tone-${tone}`} data-testid={`role-group-${role}`} data-role={role}>
      <header className="role-head">
        <h2>{role}</h2>
        <span data-testid="role-healthy" className={down > 0 ? 'warn' : 'muted'}>
          {agg.pending === agg.workers && agg.workers > 0
            ? `checking ${agg.workers} worker${agg.workers === 1 ? '' : 's'}…`
            : agg.unknown === agg.workers && agg.workers > 0
              ? `all ${unknownText}`
              : `${agg.healthy}/${agg.workers} healthy${agg.pending > 0 ? ` · ${agg.pending} not read yet` : ''}${unknownText ? ` · ${unknownText}` : ''}`}
          {/* The router's own count when it differs: a worker healthy by its /health that the router has marked
              unhealthy takes no traffic, and the verdict says so. */}
          {agg.healthyAtRouter !== null && agg.healthyAtRouter !== agg.healthy && agg.pending === 0 && (
            <span
              className="warn"
              data-testid="role-healthy-at-router"
              title={routerTitle(mine)}
            >{` · ${agg.healthyAtRouter}/${agg.workers} healthy at the router`}</span>
          )}
        </span>
        {agg.workers > 0 && (
          <RollButton
            target={{ kind: 'role', role }}
            label={agg.workers > 1 ? 'Restart one at a time…' : 'Restart…'}
            testId={`role-restart-${role}`}
          />
        )}
      </header>
      <div className="role-agg" data-testid="role-aggregate">
        <span className="kv-inline" data-testid="role-kv">
          <KvBar ratio={agg.ratio} />
          KV {formatPct(agg.ratio)} · {formatTokens(agg.usedTokens)} / {formatTokens(agg.capacityTokens)}
        </span>
        <span data-testid="role-fullest" className="muted">
          {agg.fullest
            ? `fullest ${agg.fullest.id} on ${agg.fullest.host} at ${formatPct(agg.fullest.ratio)}`
            : agg.workers > 0 && agg.unknown === agg.workers
              ? `KV unknown${agg.unknownSince !== null ? ` since ${formatClock(agg.unknownSince)}` : ''}`
              : agg.workers > 0 && down === agg.workers
                ? `no KV figure: no ${role} worker serves`
                : 'no KV figure yet'}
        </span>
        <span data-testid="role-requests" className="muted">
          {agg.running ?? '—'} running · {agg.queued ?? '—'} queued
          {agg.stage.map((c) => (
            <span key={c.queue} data-testid={`role-queue-${c.queue}`} title={QUEUE_MEANING[c.queue]}>
              {' '}
              · {c.n ?? '—'} {QUEUE_LABEL[c.queue]}
            </span>
          ))}
        </span>
      </div>
      <table className="worker-rows" data-testid={`worker-rows-${role}`}>
        <thead>
          <tr>
            <th>worker</th>
            <th>host</th>
            <th>state</th>
            <th title="running · queued requests, + those in the PD stage queues">run · queue</th>
            <th>KV</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <WorkerLine key={r.id} row={r} />
          ))}
        </tbody>
      </table>
      {hidden.length > 0 && (
        <button className="link" data-testid={`role-more-${role}`} onClick={() => setExpanded(true)}>
          {hidden.length} more, all healthy
          {hidden[0].kv ? `, at or below ${formatPct(hidden[0].kv.ratio, 0)} KV` : ''} — show all
        </button>
      )}
      {expanded && !expandAll && mine.length > MAX_ROWS && (
        <button className="link" data-testid={`role-less-${role}`} onClick={() => setExpanded(false)}>
          show the {MAX_ROWS - 1} fullest only
        </button>
      )}
    </section>
  );
}

function WorkerLine({ row: r }: { row: WorkerRow }): React.JSX.Element {
  const open = (): void => navigate({ name: 'worker', id: r.id });
  return (
    <tr
      className={`worker-row tone-${r.tone}`}
      data-testid={`worker-row-${r.id}`}
      data-host={r.host}
      data-tone={r.tone}
      tabIndex={0}
      onClick={open}
      onKeyDown={(e) => (e.key === 'Enter' ? open() : undefined)}
      title={`${r.url ?? r.id} — units: ${r.units.map((u) => `${u.host}/${u.unit} (rank ${u.nodeRank})`).join(', ')}`}
    >
      <td className="w-id">
        {r.id}
        {r.units.length > 1 && (
          <span className="muted" title="multi-node worker: one unit per node">
            {' '}
            ×{r.units.length}
          </span>
        )}
      </td>
      <td className="w-host" data-testid="worker-host">
        <WorkerHosts row={r} />
      </td>
      {r.unknown ? (
        <td
          colSpan={3}
          className="muted"
          data-testid="worker-unknown"
          title={`${r.unknown.text} — ${r.unreachable ?? r.unknown.why}`}
        >
          {r.unknown.short}
        </td>
      ) : r.unreachable ? (
        <td colSpan={3} className="bad" data-testid="worker-unreachable">
          {r.unreachable}
        </td>
      ) : (
        <>
          <td data-testid="worker-state">
            {/* Running but failing /health reads as unhealthy; the server's own words are in the tooltip. */}
            {r.activeState === 'active' && r.health && !r.health.ok ? (
              <span className="pill pill-warn" data-testid="worker-health" title={r.health.detail}>
                unhealthy
              </span>
            ) : r.healthy && r.atRouter && r.atRouter.state !== 'healthy' ? (
              <span
                className="pill pill-warn"
                data-testid="worker-at-router"
                title={`${r.id} answers its own health check, but the router ${atRouterText(r.atRouter)}: it takes no traffic`}
              >
                {/* Short: the pill must not widen the table past the card at 1280 px. */}
                {r.atRouter.state === 'removed' ? 'removed' : 'not routed'}
              </span>
            ) : (
              <span className={`pill pill-${r.tone}`}>{r.activeState ?? '…'}</span>
            )}
          </td>
          <td className="num" data-testid="worker-requests">
            {r.running ?? '—'} · {r.queued ?? '—'}
            <StageWaiting counts={r.stage} />
          </td>
          <td data-testid="worker-kv" data-ratio={r.kv?.ratio ?? ''}>
            <span className="kv-inline">
              <KvBar ratio={r.kv?.ratio ?? null} />
              {formatPct(r.kv?.ratio, 0)}
            </span>
          </td>
        </>
      )}
    </tr>
  );
}

function KvBar({ ratio }: { ratio: number | null }): React.JSX.Element {
  return (
    <span className="bar" aria-hidden>
      {ratio !== null && (
        <span className={`fill tone-${kvTone(ratio)}`} style={{ width: `${Math.min(100, ratio * 100)}%` }} />
      )}
    </span>
  );
}

/** "+34" after a worker's queue when requests wait in its PD stage queues, which the tooltip names. */
function StageWaiting({ counts }: { counts: readonly StageCount[] }): React.JSX.Element | null {
  const waiting = counts.filter((c): c is { queue: StageCount['queue']; n: number } => (c.n ?? 0) > 0);
  if (waiting.length === 0) return null;
  const n = waiting.reduce((t, c) => t + c.n, 0);
  return (
    <span
      className="warn"
      data-testid="worker-stage-waiting"
      title={waiting.map((c) => `${c.n} ${QUEUE_LABEL[c.queue]}: ${QUEUE_MEANING[c.queue]}`).join('\n')}
    >
      {' '}
      +{n}
    </span>
  );
}

/** What the router says of a worker, in words. */
function atRouterText(v: NonNullable<WorkerRow['atRouter']>): string {
  const what = v.state === 'removed' ? 'has removed it' : 'reports it unhealthy';
  return v.breakerOpen ? `${what} (circuit breaker open)` : what;
}

/** The workers the router does not count healthy, for the role's tooltip. */
function routerTitle(rows: readonly WorkerRow[]): string {
  const out = rows.filter((r) => r.atRouter && r.atRouter.state !== 'healthy');
  return out.length
    ? `The router ${out.map((r) => `${atRouterText(r.atRouter!).replace(/\bit\b/, r.id)}`).join('; ')}.`
    : 'The router reports every listed worker healthy.';
}
