// Paths the console itself and load balancers poll on a router: not user traffic.

/**
 * Paths the console itself (and load balancers) poll: they are not user traffic, and counting them would
 * dilute the error share.
 */
export function isControlPath(path: string | undefined): boolean {
  if (!path) return false;
  const p = path.split('?')[0];
  return (
    /^\/(health|health_generate|liveness|readiness|metrics|engine_metrics|flush_cache|server_info|model_info|get_loads|list_workers|add_worker|remove_worker)$/.test(
      p,
    ) ||
    p.startsWith('/get_') ||
    p.startsWith('/workers') ||
    p.startsWith('/v1/models') ||
    p === '/v1/loads'
  );
}
