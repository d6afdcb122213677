// A worker URL as a router knows it, taken apart: `http://10.1.0.13:30000`, `10.1.0.13:30000`, or the
// DP-aware `http://10.1.0.13:30000@3` (smg lists one entry per DP rank, `{base}@{rank}`). The `@rank`
// suffix must come off before URL parsing, which would read `host:port@3` as user:password@host.

export interface WorkerEndpoint {
  /** As given: the worker's identity. */
  url: string;
  /** Without the `@rank` suffix. */
  baseUrl: string;
  dpRank?: number;
  /** Lowercase, IPv6 without brackets. */
  host: string;
  port: number;
  protocol: 'http:' | 'https:';
}

const DP_SUFFIX = /^(.*)@(\d+)$/;

export function parseWorkerUrl(url: string): WorkerEndpoint | { error: string } {
  const trimmed = url.trim();
  const dp = DP_SUFFIX.exec(trimmed);
  // `user@host` URLs do not exist among router workers; an all-digit tail after @ is a DP rank.
  const base = dp && !/^[a-z]+:\/\/[^/]*@[^@]*$/i.test(dp[1]) ? dp[1] : trimmed;
  const rank = dp && base !== trimmed ? Number(dp[2]) : undefined;
  let parsed: URL;
  try {
    parsed = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(base) ? base : `http://${base}`);
  } catch {
    return { error: `${JSON.stringify(url)} is not a URL` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { error: `${JSON.stringify(url)} is not an http(s) URL (${parsed.protocol.replace(/:$/, '')})` };
  if (parsed.username || parsed.password)
    return { error: `${JSON.stringify(url)} carries a user name; worker URLs are http://HOST:PORT` };
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === '') return { error: `${JSON.stringify(url)} has no host` };
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
  return {
    url: trimmed,
    baseUrl: base,
    ...(rank !== undefined ? { dpRank: rank } : {}),
    host,
    port,
    protocol: parsed.protocol,
  };
}

/** The same URL with the host replaced by one the worker's own host can dial (for scrapes through its link). */
export function urlOnHost(ep: WorkerEndpoint, host: string): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${ep.protocol}//${h}:${ep.port}`;
}

// Only the conventional self-addresses: other 127.x addresses can be distinct hosts' addresses (the demo fleet
// gives each simulated host its own), so they are matched against host addresses like any other.
const LOOPBACK = /^(localhost|127\.0\.0\.1|::1|0\.0\.0\.0|::)$/i;

/** Whether a URL host means "the host that the URL is dialled from". */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host.replace(/^\[|\]$/g, ''));
}
