// A router's worker list: what its ExecStart names (`--prefill URL [PORT]`, `--decode URL`, `--worker-urls`)
// merged with what its live `/workers` answers (smg and sglang-router ≥ 0.2.0:
// `{"workers":[{url, worker_type, is_healthy, bootstrap_port, dp_rank…}], "total", "stats"}`, see
// ../shared/reference/upstream/sglang-real-shapes.txt §4). Workers added at run time (`POST /workers`) are only
// in the answer; a DP-aware router lists `{base}@{rank}` there for a flag's one `base`. Pure.
//
// Each URL is taken apart once and its worker key (worker-url.ts) looked up in a Map, so the list costs time in
// proportion to its length; and at most MAX_ROUTER_WORKERS workers are taken, the rest counted and said.

import type { FleetRouter, WorkerRole, WorkerSource, WorkersApiFailure } from '@shared/fleet';
import type { RouterFlags } from './sglang-flags';
import { cleanWorkerUrl, parseWorkerUrl, workerKey } from '@shared/worker-url';

/**
 * The most workers one router's list contributes. Far above real PD fleets: SGLang's large-scale PD runs are
 * on the order of a hundred GPUs in a handful of servers, and even a DP-aware router listing one entry per GPU
 * (`{base}@{rank}`) stays under 1,024 up to 128 eight-GPU nodes. It is also about what one console can watch:
 * every worker is a service polled each second through its host's SSH link, and 1,024 of them is already one
 * such poll per millisecond. Beyond it, a runaway or hostile /workers answer would decide how long discovery
 * takes and how much the console holds.
 */
export const MAX_ROUTER_WORKERS = 1024;

export interface ApiWorker {
  /** Without user-info (cleanWorkerUrl). */
  url: string;
  role: WorkerRole;
  healthy?: boolean;
  bootstrapPort?: number | null;
  /** dp_base_url of a DP-aware entry. */
  dpBaseUrl?: string;
  /** The answer gave the URL with a user name or password, dropped. */
  hadUserinfo?: true;
}

/** A /workers answer the console could not use: what kind of failure, and the sentence that says it. */
export class WorkersAnswerError extends Error {
  constructor(
    message: string,
    readonly failure: WorkersApiFailure,
  ) {
    super(message);
    this.name = 'WorkersAnswerError';
  }
}

/**
 * The first characters of an answer, quoted, with everything but printable ASCII escaped (no terminal escapes)
 * and the user-info of any URL in it hidden.
 */
function safeSnippet(text: string, max = 60): string {
  const head = [...text.slice(0, max * 2)]
    .slice(0, max)
    .join('')
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"']*@/gi, '$1<hidden>@');
  const escaped = head.replace(/[^\x20-\x7e]/gu, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
  return `"${escaped.replace(/"/g, '\\"')}"${text.length > head.length ? '…' : ''}`;
}

/**
 * Reads a /workers body; throws a WorkersAnswerError saying what the answer was when it is not the documented
 * shape (its content type and first bytes, made safe to print).
 */
export function parseWorkersAnswer(body: string, contentType?: string): ApiWorker[] {
  const type = contentType ? `${contentType.split(';')[0].trim()}, ` : '';
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new WorkersAnswerError(
      `/workers did not answer JSON (${type}${Buffer.byteLength(body).toLocaleString('en-US')} bytes, starts ${safeSnippet(body)})`,
      'not-json',
    );
  }
  const list = (json as { workers?: unknown })?.workers;
  if (!Array.isArray(list))
    throw new WorkersAnswerError(
      `/workers answered JSON without a "workers" array (${type}${jsonShape(json)})`,
      'wrong-shape',
    );
  const out: ApiWorker[] = [];
  list.forEach((w: unknown, i) => {
    const o = w as Record<string, unknown>;
    if (typeof o?.url !== 'string')
      throw new WorkersAnswerError(
        `/workers: workers[${i}] has no "url" string (it is ${jsonShape(w)})`,
        'wrong-shape',
      );
    const type = typeof o.worker_type === 'string' ? o.worker_type.toLowerCase() : 'regular';
    // Encode (EPD) workers are their own pool; a PD console does not manage them.
    if (type !== 'prefill' && type !== 'decode' && type !== 'regular') return;
    const bp = o.bootstrap_port;
    const url = cleanWorkerUrl(o.url);
    out.push({
      url: url.url,
      role: type,
      ...(typeof o.is_healthy === 'boolean' ? { healthy: o.is_healthy } : {}),
      ...(typeof bp === 'number' || bp === null ? { bootstrapPort: bp } : {}),
      ...(typeof o.dp_base_url === 'string' ? { dpBaseUrl: cleanWorkerUrl(o.dp_base_url).url } : {}),
      ...(url.hadUserinfo ? { hadUserinfo: true as const } : {}),
    });
  });
  return out;
}

/** What a JSON value is, by its keys or type, never its values (they may hold credentials). */
function jsonShape(v: unknown): string {
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (v === null) return 'null';
  if (typeof v !== 'object') return `a ${typeof v}`;
  const keys = Object.keys(v);
  if (keys.length === 0) return 'an empty object';
  const shown = keys.slice(0, 8).map((k) => safeSnippet(k, 30));
  return `an object with keys ${shown.join(', ')}${keys.length > 8 ? `, … (${keys.length})` : ''}`;
}

/** The key two spellings of one worker share (worker-url.ts); a URL that is not one is its own key. */
function workerUrlKey(url: string): string {
  const ep = parseWorkerUrl(url);
  return 'error' in ep ? `not a URL ${url}` : workerKey(ep);
}

/** Whether two URLs differ only in what no one reads as another name: case, an added `http://`, a final `/`. */
export function sameSpelling(a: string, b: string): boolean {
  const plain = (u: string) =>
    (/^[a-z][a-z0-9+.-]*:\/\//i.test(u) ? u : `http://${u}`).replace(/\/+(@\d+)?$/, '$1').toLowerCase();
  return plain(a) === plain(b);
}

export interface RouterWorkerList {
  workers: FleetRouter['workers'];
  /** Distinct workers listed beyond MAX_ROUTER_WORKERS, left out. */
  leftOut: number;
  /** URLs (as kept) given with user-info, by the flags or the answer. */
  userinfoDropped: string[];
}

type Entry = FleetRouter['workers'][number];

/**
 * The router's list: ExecStart entries first, in flag order; an API entry for the same worker adds its source;
 * API-only entries follow. A DP-aware API entry replaces its base URL's flag entry (the ranks are the workers).
 * The first `max` distinct workers are taken; the others are counted in `leftOut`.
 */
export function routerWorkerList(
  flags: Pick<RouterFlags, 'prefill' | 'decode' | 'workerUrls'> &
    Partial<Pick<RouterFlags, 'userinfoDropped'>>,
  api: readonly ApiWorker[] | undefined,
  max = MAX_ROUTER_WORKERS,
): RouterWorkerList {
  const byKey = new Map<string, Entry>();
  /** Flag entries a DP-aware answer replaced, by their base URL's key. */
  const replaced = new Map<string, Entry>();
  const left = new Set<string>();
  const userinfo = new Set(flags.userinfoDropped ?? []);

  const put = (
    key: string,
    url: string,
    entry: () => Entry,
    source: WorkerSource,
    bootstrapPort?: number | null,
  ) => {
    const hit = byKey.get(key);
    if (hit) {
      if (!hit.sources.includes(source)) hit.sources.push(source);
      if (![hit.url, ...(hit.alsoListedAs ?? [])].some((x) => sameSpelling(x, url)))
        (hit.alsoListedAs ??= []).push(url);
      if (hit.bootstrapPort === undefined && bootstrapPort !== undefined) hit.bootstrapPort = bootstrapPort;
      return;
    }
    if (byKey.size >= max) {
      left.add(key);
      return;
    }
    byKey.set(key, entry());
  };
  const add = (url: string, role: WorkerRole, source: WorkerSource, bootstrapPort?: number | null) =>
    put(
      workerUrlKey(url),
      url,
      () => ({ url, role, sources: [source], ...(bootstrapPort !== undefined ? { bootstrapPort } : {}) }),
      source,
      bootstrapPort,
    );

  for (const r of flags.prefill) add(r.url, 'prefill', 'execstart', r.bootstrapPort);
  for (const r of flags.decode) add(r.url, 'decode', 'execstart');
  for (const u of flags.workerUrls) add(u, 'regular', 'execstart');
  for (const w of api ?? []) {
    if (w.hadUserinfo) userinfo.add(w.url);
    if (w.dpBaseUrl) {
      const baseKey = workerUrlKey(w.dpBaseUrl);
      const base = byKey.get(baseKey);
      if (base && base.sources[0] === 'execstart') {
        byKey.delete(baseKey);
        replaced.set(baseKey, base);
      }
      const flag = replaced.get(baseKey);
      if (flag) {
        const bp = flag.bootstrapPort ?? w.bootstrapPort;
        put(
          workerUrlKey(w.url),
          w.url,
          () => ({
            url: w.url,
            role: w.role,
            sources: ['execstart', 'workers-api'],
            ...(bp !== undefined ? { bootstrapPort: bp } : {}),
          }),
          'workers-api',
          bp,
        );
        continue;
      }
    }
    add(w.url, w.role, 'workers-api', w.bootstrapPort);
  }
  // A Map iterates in insertion order: flags first, then what only the answer has.
  return { workers: [...byKey.values()], leftOut: left.size, userinfoDropped: [...userinfo] };
}

/**
 * What a router's worker list needs the operator to know beyond its workers, one sentence each: why /workers
 * was not used and what was instead, how many workers were left out, which URLs carried credentials.
 */
export function routerListFindings(r: FleetRouter): string[] {
  const out: string[] = [];
  if (r.workersApiError) out.push(`worker list: ${r.workersApiError}`);
  if (r.workersLeftOut)
    out.push(
      `lists ${(r.workers.length + r.workersLeftOut).toLocaleString('en-US')} workers; the console takes the first ` +
        `${r.workers.length.toLocaleString('en-US')} and left out ${r.workersLeftOut.toLocaleString('en-US')} ` +
        '(check the router’s --prefill/--decode flags and its /workers for entries registered by mistake)',
    );
  if (r.userinfoDropped?.length)
    out.push(
      `lists ${r.userinfoDropped.length === 1 ? 'a worker URL' : `${r.userinfoDropped.length} worker URLs`} with a ` +
        `user name or password in it (${r.userinfoDropped.slice(0, 5).join(', ')}${r.userinfoDropped.length > 5 ? ', …' : ''}); ` +
        'the console dropped them and shows none — anyone who can read the router’s flags or /workers sees them: ' +
        "give the worker's key with the router's --api-key instead",
    );
  return out;
}
