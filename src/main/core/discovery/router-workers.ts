// A router's worker list: what its ExecStart names (`--prefill URL [PORT]`, `--decode URL`, `--worker-urls`)
// merged with what its live `/workers` answers (smg and sglang-router ≥ 0.2.0:
// `{"workers":[{url, worker_type, is_healthy, bootstrap_port, dp_rank…}], "total", "stats"}`, see
// ../shared/reference/upstream/sglang-real-shapes.txt §4). Workers added at run time (`POST /workers`) are only
// in the answer; a DP-aware router lists `{base}@{rank}` there for a flag's one `base`. Pure.

import type { FleetRouter, WorkerRole, WorkerSource } from '@shared/fleet';
import type { RouterFlags } from './sglang-flags';
import { parseWorkerUrl } from './worker-url';

export interface ApiWorker {
  url: string;
  role: WorkerRole;
  healthy?: boolean;
  bootstrapPort?: number | null;
  /** dp_base_url of a DP-aware entry. */
  dpBaseUrl?: string;
}

/** Reads a /workers body; throws an Error saying what in it is not the documented shape. */
export function parseWorkersAnswer(body: string): ApiWorker[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`/workers did not answer JSON (starts ${JSON.stringify(body.slice(0, 60))})`);
  }
  const list = (json as { workers?: unknown })?.workers;
  if (!Array.isArray(list)) throw new Error('/workers answered JSON without a "workers" array');
  const out: ApiWorker[] = [];
  list.forEach((w: unknown, i) => {
    const o = w as Record<string, unknown>;
    if (typeof o?.url !== 'string') throw new Error(`/workers: workers[${i}] has no "url" string`);
    const type = typeof o.worker_type === 'string' ? o.worker_type.toLowerCase() : 'regular';
    // Encode (EPD) workers are their own pool; a PD console does not manage them.
    if (type !== 'prefill' && type !== 'decode' && type !== 'regular') return;
    const bp = o.bootstrap_port;
    out.push({
      url: o.url,
      role: type,
      ...(typeof o.is_healthy === 'boolean' ? { healthy: o.is_healthy } : {}),
      ...(typeof bp === 'number' || bp === null ? { bootstrapPort: bp } : {}),
      ...(typeof o.dp_base_url === 'string' ? { dpBaseUrl: o.dp_base_url } : {}),
    });
  });
  return out;
}

/** One URL form for comparing: scheme added, trailing slash dropped, host lowercased. */
export function sameWorkerUrl(a: string, b: string): boolean {
  const pa = parseWorkerUrl(a);
  const pb = parseWorkerUrl(b);
  if ('error' in pa || 'error' in pb) return a === b;
  return pa.host === pb.host && pa.port === pb.port && pa.dpRank === pb.dpRank;
}

/**
 * The router's list: ExecStart entries first, in flag order; an API entry for the same URL adds its source;
 * API-only entries follow. A DP-aware API entry replaces its base URL's flag entry (the ranks are the workers).
 */
export function routerWorkerList(
  flags: Pick<RouterFlags, 'prefill' | 'decode' | 'workerUrls'>,
  api: readonly ApiWorker[] | undefined,
): FleetRouter['workers'] {
  const list: FleetRouter['workers'] = [];
  const add = (url: string, role: WorkerRole, source: WorkerSource, bootstrapPort?: number | null) => {
    const hit = list.find((w) => sameWorkerUrl(w.url, url));
    if (hit) {
      if (!hit.sources.includes(source)) hit.sources.push(source);
      if (hit.bootstrapPort === undefined && bootstrapPort !== undefined) hit.bootstrapPort = bootstrapPort;
      return;
    }
    list.push({ url, role, sources: [source], ...(bootstrapPort !== undefined ? { bootstrapPort } : {}) });
  };
  for (const r of flags.prefill) add(r.url, 'prefill', 'execstart', r.bootstrapPort);
  for (const r of flags.decode) add(r.url, 'decode', 'execstart');
  for (const u of flags.workerUrls) add(u, 'regular', 'execstart');
  const fromFlags = new Map<string, FleetRouter['workers'][number]>();
  for (const w of api ?? []) {
    if (w.dpBaseUrl) {
      const at = list.findIndex((x) => sameWorkerUrl(x.url, w.dpBaseUrl!) && x.sources[0] === 'execstart');
      if (at >= 0) fromFlags.set(w.dpBaseUrl, list.splice(at, 1)[0]);
      const flag = fromFlags.get(w.dpBaseUrl);
      if (flag) {
        const bp = flag.bootstrapPort ?? w.bootstrapPort;
        list.push({
          url: w.url,
          role: w.role,
          sources: ['execstart', 'workers-api'],
          ...(bp !== undefined ? { bootstrapPort: bp } : {}),
        });
        continue;
      }
    }
    add(w.url, w.role, 'workers-api', w.bootstrapPort);
  }
  return list;
}
