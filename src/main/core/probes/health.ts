// /health of the SGLang servers and /readiness of the router, read through the SSH tunnel.
import type http from 'node:http';
import type { HealthResult } from '@shared/domain';
import { HttpError, httpGet } from '../ssh/http-agent';

export async function checkHealth(agent: http.Agent, url: string, now: () => number): Promise<HealthResult> {
  try {
    const res = await httpGet(agent, url, { timeoutMs: 5000, maxBytes: 64 * 1024 });
    const ok = res.status === 200;
    return {
      ok,
      status: res.status,
      detail: ok
        ? `${res.status} OK`
        : res.status === 503
          ? '503 — not ready (starting, loading or draining)'
          : `HTTP ${res.status}`,
      checkedAt: now(),
    };
  } catch (err) {
    const refused = err instanceof HttpError && err.code === 'refused';
    return {
      ok: false,
      detail: refused ? 'connection refused (process not listening yet, or down)' : (err as Error).message,
      checkedAt: now(),
    };
  }
}
