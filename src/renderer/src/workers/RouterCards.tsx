// The fleet's routers, each with its state and its own worker list's size (two routers over the same workers
// each show their own list).
import type { RouterRow } from './fleet-model';
import { navigate } from '../state/ui';

export function RouterCards({ routers }: { routers: readonly RouterRow[] }): React.JSX.Element {
  return (
    <div className="router-cards" data-testid="router-cards">
      {routers.length === 0 && <p className="card muted">No router found.</p>}
      {routers.map((r) => (
        <section
          key={r.id}
          className={`card service-card router-card tone-${r.tone}`}
          data-testid={`router-card-${r.id}`}
          data-host={r.host}
        >
          <header>
            <h2>{r.id}</h2>
            <span className="unit">{r.host}</span>
          </header>
          <span className="unit" title="systemd unit">
            {r.unit}
          </span>
          {r.unknown ? (
            <span className="muted" data-testid="router-unknown" title={r.unreachable ?? r.unknown.why}>
              {r.unknown.text}
            </span>
          ) : r.unreachable ? (
            <span className="bad" data-testid="router-unreachable">
              {r.unreachable}
            </span>
          ) : (
            <span data-testid="router-state">
              <span className={`pill pill-${r.tone}`}>{r.activeState ?? '…'}</span>{' '}
              {r.health ? (
                <span className={r.health.ok ? 'ok' : 'bad'}>{r.health.ok ? 'ready' : r.health.detail}</span>
              ) : (
                <span className="muted">not checked yet</span>
              )}
            </span>
          )}
          {r.lists && (
            <span className="muted" data-testid="router-lists">
              lists {r.lists.prefill} prefill · {r.lists.decode} decode
              {r.lists.regular > 0 ? ` · ${r.lists.regular} regular` : ''}
            </span>
          )}
          {/* Its own gauges' count, the one the verdict's "2 of 3 workers healthy at the router" reads. */}
          {r.healthyAtRouter && r.healthyAtRouter.total + r.healthyAtRouter.removed > 0 && (
            <span
              className={
                r.healthyAtRouter.healthy < r.healthyAtRouter.total || r.healthyAtRouter.removed
                  ? 'warn'
                  : 'ok'
              }
              data-testid="router-healthy-workers"
            >
              {r.healthyAtRouter.healthy}/{r.healthyAtRouter.total} workers healthy at the router
              {r.healthyAtRouter.removed > 0 ? ` · ${r.healthyAtRouter.removed} removed` : ''}
            </span>
          )}
          <button
            className="link"
            data-testid={`open-worker-${r.id}`}
            onClick={() => navigate({ name: 'worker', id: r.id })}
          >
            Details →
          </button>
        </section>
      ))}
    </div>
  );
}
