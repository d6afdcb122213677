// The workers the router reports and how it sees each one: health, circuit breaker, requests in flight. A
// worker the router removed or whose breaker is open takes no traffic however healthy the server itself is.
import type { RouterWorkerState } from '@shared/contract';
import { normalizeWorkerUrl as norm } from '@shared/worker-url';

const CB_TEXT: Record<NonNullable<RouterWorkerState['cbState']>, string> = {
  closed: 'closed',
  open: 'open — no traffic',
  half_open: 'half-open — probing',
  removed: 'removed',
};

function health(w: RouterWorkerState): { text: string; cls: string } {
  if (w.removed) return { text: 'removed', cls: 'bad' };
  if (w.healthy === null) return { text: 'not reported', cls: 'muted' };
  return w.healthy ? { text: 'healthy', cls: 'ok' } : { text: 'unhealthy', cls: 'bad' };
}

export function RouterWorkers({
  workers,
  services,
}: {
  workers?: RouterWorkerState[];
  /** The deployment's services: a worker the router does not give a role is named by the one at its URL. */
  services: readonly { role: string; apiUrl?: string; workerUrl?: string }[];
}): React.JSX.Element {
  // A fleet's workers are known to the router by their worker URL, which need not be their API URL.
  const roleAt = (url: string): string | undefined =>
    services.find((s) => [s.workerUrl, s.apiUrl].some((u) => u !== undefined && norm(u) === norm(url)))?.role;
  return (
    <section className="card" data-testid="router-workers">
      <h2>Workers the router reports</h2>
      {!workers ? (
        <p className="muted">Waiting for the router’s first scrape…</p>
      ) : workers.length === 0 ? (
        <p className="muted">
          The router’s metrics name no worker (no smg_worker_health / sgl_router_worker_health series yet).
        </p>
      ) : (
        <table className="router-workers">
          <thead>
            <tr>
              <th>worker</th>
              <th>role</th>
              <th>health</th>
              <th>circuit breaker</th>
              <th>in flight</th>
            </tr>
          </thead>
          <tbody>
            {workers.map((w) => {
              const h = health(w);
              return (
                <tr key={w.url} data-testid="router-worker" data-url={w.url}>
                  <td>
                    <code>{w.url}</code>
                  </td>
                  <td>
                    {w.role ??
                      (roleAt(w.url) ? (
                        <span title="the router's metrics do not say; this is the deployment's service at that URL">
                          {roleAt(w.url)}
                        </span>
                      ) : (
                        <span className="muted">—</span>
                      ))}
                  </td>
                  <td className={h.cls} data-testid="router-worker-health">
                    {h.text}
                  </td>
                  <td className={w.cbState === 'open' ? 'bad' : w.cbState === 'half_open' ? 'warn' : ''}>
                    {w.cbState ? CB_TEXT[w.cbState] : <span className="muted">not reported</span>}
                  </td>
                  <td>{w.activeRequests ?? <span className="muted">—</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
