// A worker URL as a router knows it, taken apart and compared: `http://10.1.0.13:30000`, `10.1.0.13:30000`, or
// the DP-aware `http://10.1.0.13:30000@3` (smg lists one entry per DP rank, `{base}@{rank}`). The `@rank` suffix
// must come off before URL parsing, which would read `host:port@3` as user:password@host. The one place where
// a worker URL is parsed, normalised and compared — by discovery, the probes, the CLI and the screens — so they
// agree on which worker a URL names (no Node or DOM imports: the renderer uses it too).
//
// A worker is its host and port: two spellings of one (`127.0.0.1`, `localhost`, `[::1]`; `:80` or none for
// http; `Host.`, a trailing slash) are one worker, so identity is the normalised key of workerKey(). User-info
// (`http://admin:PW@host`) is never part of that identity nor of what is shown: cleanWorkerUrl() drops it where
// a URL enters discovery (the router's flags, its /workers answer), so no report, screen or recording can carry
// a password a router's configuration holds.

export interface WorkerEndpoint {
  /** As given, without user-info: the worker's URL as shown. */
  url: string;
  /** Without the `@rank` suffix. */
  baseUrl: string;
  dpRank?: number;
  /** Lowercase, IPv6 without brackets, no trailing dot. */
  host: string;
  port: number;
  protocol: 'http:' | 'https:';
}

const DP_SUFFIX = /^(.*)@(\d+)$/;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** Scheme (optional) and user-info up to the authority's last `@`; the authority ends at `/ ? # \` (WHATWG). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)?[^/?#\\]*@/i;
/** Stands in for what comes before the last `@` of something that is not a URL; has no `@`, so it stays hidden. */
const HIDDEN = '<hidden>';

/**
 * The URL as it may be kept and shown: user-info dropped; in text that is not a URL but has an `@`, whatever
 * comes before its last `@` hidden (it may be a password with a `/` in it). `hadUserinfo` says whether anything
 * was taken out. A trailing `@digits` is a DP rank, never user-info.
 */
export function cleanWorkerUrl(raw: string): { url: string; hadUserinfo: boolean } {
  const t = raw.trim();
  const dp = DP_SUFFIX.exec(t);
  const base = dp ? dp[1] : t;
  const rank = dp ? `@${dp[2]}` : '';
  const m = USERINFO.exec(base);
  if (m) return { url: (m[1] ?? '') + base.slice(m[0].length) + rank, hadUserinfo: true };
  if (base.includes('@') && !canParse(base)) {
    const scheme = SCHEME.exec(base)?.[0] ?? '';
    return { url: `${scheme}${HIDDEN}${base.slice(base.lastIndexOf('@') + 1)}${rank}`, hadUserinfo: true };
  }
  return { url: t, hadUserinfo: false };
}

function canParse(base: string): boolean {
  try {
    new URL(SCHEME.test(base) ? base : `http://${base}`);
    return true;
  } catch {
    return false;
  }
}

export function parseWorkerUrl(url: string): WorkerEndpoint | { error: string } {
  const shown = cleanWorkerUrl(url).url;
  const dp = DP_SUFFIX.exec(shown);
  const base = dp ? dp[1] : shown;
  const rank = dp ? Number(dp[2]) : undefined;
  let parsed: URL;
  try {
    parsed = new URL(SCHEME.test(base) ? base : `http://${base}`);
  } catch {
    return { error: `${JSON.stringify(shown)} is not a URL` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { error: `${JSON.stringify(shown)} is not an http(s) URL (${parsed.protocol.replace(/:$/, '')})` };
  const host = normalHost(parsed.hostname);
  if (host === '') return { error: `${JSON.stringify(shown)} has no host` };
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  return {
    url: shown,
    baseUrl: base,
    ...(rank !== undefined ? { dpRank: rank } : {}),
    host,
    port,
    protocol: parsed.protocol,
  };
}

/** Lowercase, without IPv6 brackets or the root's trailing dot (`gpu-b.` is `gpu-b`). */
export function normalHost(host: string): string {
  return host
    .trim()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * What makes two worker URLs one worker before the console knows which host a name is on: host (every
 * loopback spelling one) and port, and the DP rank. The scheme does not count: one port serves one protocol.
 */
export function workerKey(ep: WorkerEndpoint): string {
  const host = isLoopbackHost(ep.host) ? 'loopback' : ep.host;
  return `${host.includes(':') ? `[${host}]` : host}:${ep.port}${ep.dpRank !== undefined ? `@${ep.dpRank}` : ''}`;
}

/** The same URL with the host replaced by one the worker's own host can dial (for scrapes through its link). */
export function urlOnHost(ep: WorkerEndpoint, host: string): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${ep.protocol}//${h}:${ep.port}`;
}

// The one definition of "the host it is dialled from", for the product and the demo's simulated network alike:
// the names every host gives itself — `localhost`, `127.0.0.1`, `::1` (also IPv4-mapped), and the unspecified
// `0.0.0.0` / `::`, which Linux connects to the local host. RFC 1122 reserves all of 127.0.0.0/8 for loopback,
// but another 127.x is not taken as "this host" here: a worker URL is compared as an endpoint, and a server
// bound to 127.0.0.1 refuses a connection to 127.0.0.5, so `127.0.0.5:30000` is not the `127.0.0.1:30000`
// worker; and the demo fleet gives each simulated host its own 127.x, matched against host addresses like any
// other. `::ffff:7f00:1` is how a URL parser writes the IPv4-mapped `::ffff:127.0.0.1`.
const LOOPBACK = new Set([
  'localhost',
  '127.0.0.1',
  '::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '0.0.0.0',
  '::',
]);

/** Whether a host (URL host, listen address, peer address; any spelling) means "the host it is dialled from". */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(normalHost(host));
}

/**
 * The router's per-worker gauges name the same few URLs every scrape: each is normalised once. Bounded, since
 * a label is whatever the router serves; when full it starts over rather than tracking what is least used.
 */
const normalized = new Map<string, string>();
const MAX_REMEMBERED = 1024;

/** Lower-case scheme and host, `http://` when no scheme is given, no trailing slash. */
export function normalizeWorkerUrl(url: string): string {
  let out = normalized.get(url);
  if (out !== undefined) return out;
  let u = url.trim();
  if (!SCHEME.test(u)) u = `http://${u}`;
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/]*)(.*)$/i.exec(u);
  out = m ? `${m[1].toLowerCase()}${m[2].toLowerCase()}${m[3]}`.replace(/\/+$/, '') : u;
  if (normalized.size >= MAX_REMEMBERED) normalized.clear();
  // A label value may be a slice of the whole scrape's text: kept as a key, it must not keep that text alive.
  normalized.set(ownCopy(url), ownCopy(out));
  return out;
}

/** A string that does not share memory with the text it was sliced from (V8 keeps a slice's parent alive). */
function ownCopy(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}
