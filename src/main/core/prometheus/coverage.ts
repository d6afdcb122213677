// Which of the deployment's metrics endpoints a Prometheus scrapes, under which job and instance and how often,
// and the scrape_config lines for each one it does not. Matching is by host and port as each side dials them,
// as discovery matches router worker URLs: a Prometheus on gpu-a sees `127.0.0.1:30200` where the router lists
// `http://10.1.0.13:30200`; both mean gpu-a's port 30200. Pure: endpoints and targets in, coverage out.
import type { PromTarget } from './prom-api';
import {
  labelHost,
  scrapeConfigLines,
  scrapeConfigsFor,
  type ExportOptions,
  type ScrapeEndpoint,
} from './export-config';
import { isLoopbackHost, parseWorkerUrl } from '@shared/worker-url';

export interface EndpointCoverage {
  endpoint: ScrapeEndpoint;
  scraped: boolean;
  job?: string;
  instance?: string;
  intervalS?: number | null;
  health?: PromTarget['health'];
  lastError?: string;
  /** Scraped but down, or not scraped: in words, naming the endpoint and the Prometheus. */
  message: string;
  /** For an endpoint not scraped: the lines to add under scrape_configs. */
  addLines?: string;
}

export interface CoverageInput {
  endpoints: readonly ScrapeEndpoint[];
  targets: readonly PromTarget[];
  /** "prometheus.service on gpu-a" */
  promLabel: string;
  /** The host the Prometheus runs on (its targets' 127.0.0.1 is that host); unknown for a remote URL. */
  promHostId?: string;
  hostAddresses?: Record<string, string[]>;
  /** The targets were read from this config file, not from the running Prometheus: their state is unknown. */
  fromConfigFile?: string;
}

interface Place {
  /** A host id when known, else the address itself. */
  where: string;
  port: number;
  path: string;
}

/** Where an endpoint is, as (host, port, path): its own host id for its host-local URL. */
function placesOfEndpoint(ep: ScrapeEndpoint, hostAddresses: Record<string, string[]>): Set<string> {
  const u = new URL(ep.metricsUrl);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const out = new Set<string>([key({ where: `host:${ep.hostId}`, port, path: u.pathname })]);
  const hosts = new Set<string>();
  if (!isLoopbackHost(u.hostname)) hosts.add(u.hostname.toLowerCase());
  if (ep.workerUrl) {
    const w = parseWorkerUrl(ep.workerUrl);
    if (!('error' in w) && !isLoopbackHost(w.host)) hosts.add(w.host);
  }
  for (const a of hostAddresses[ep.hostId] ?? []) hosts.add(a.toLowerCase());
  for (const h of hosts) out.add(key({ where: `addr:${h}`, port, path: u.pathname }));
  return out;
}

function placeOfTargetUrl(
  url: string,
  promHostId: string | undefined,
  hostNames: ReadonlyMap<string, string>,
): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const named = hostNames.get(host);
  const where =
    isLoopbackHost(host) && promHostId !== undefined
      ? `host:${promHostId}`
      : named !== undefined
        ? `host:${named}`
        : `addr:${host}`;
  return key({ where, port, path: u.pathname });
}

function key(p: Place): string {
  return `${p.where}|${p.port}|${p.path.replace(/\/+$/, '') || '/'}`;
}

/**
 * The URLs a target stands for: where it is scraped, what the config wrote before relabelling, and its
 * instance label when that reads HOST:PORT (configs often name the host there, as the generated one does).
 */
function targetUrls(t: PromTarget): string[] {
  const urls = [t.scrapeUrl];
  let scheme = 'http';
  let path = '/metrics';
  try {
    const u = new URL(t.scrapeUrl);
    scheme = u.protocol.replace(/:$/, '');
    path = u.pathname;
  } catch {
    // keep the defaults
  }
  const d = t.discoveredLabels;
  if (d?.__address__) urls.push(`${d.__scheme__ ?? scheme}://${d.__address__}${d.__metrics_path__ ?? path}`);
  if (/^[^\s/]+:\d+$/.test(t.instance)) urls.push(`${scheme}://${t.instance}${path}`);
  return urls;
}

export function coverageOf(input: CoverageInput): EndpointCoverage[] {
  const addrs = input.hostAddresses ?? {};
  const exportOpts: ExportOptions = {
    ...(input.promHostId !== undefined ? { promHostId: input.promHostId } : {}),
    hostAddresses: addrs,
  };
  // The names a host goes by in instance labels: its id, the operator's name for it, the generated label.
  const hostNames = new Map<string, string>();
  for (const ep of input.endpoints)
    for (const n of [ep.hostId, ep.hostLabel, labelHost(ep)]) hostNames.set(n.toLowerCase(), ep.hostId);
  const byPlace = new Map<string, PromTarget[]>();
  for (const t of input.targets) {
    for (const url of targetUrls(t)) {
      const k = placeOfTargetUrl(url, input.promHostId, hostNames);
      if (!k) continue;
      const list = byPlace.get(k) ?? [];
      if (!list.includes(t)) list.push(t);
      byPlace.set(k, list);
    }
  }
  return input.endpoints.map((ep) => {
    const name = `${ep.name} ${ep.metricsUrl}`;
    const matches = [...placesOfEndpoint(ep, addrs)].flatMap((k) => byPlace.get(k) ?? []);
    const t = matches.find((m) => m.health === 'up') ?? matches[0];
    if (!t) {
      const lines = scrapeConfigLines(scrapeConfigsFor([ep], exportOpts));
      return {
        endpoint: ep,
        scraped: false,
        message: `${name} is not scraped by ${input.promLabel} — add:`,
        addLines: lines,
      };
    }
    const base = {
      endpoint: ep,
      scraped: true,
      job: t.job,
      instance: t.instance,
      intervalS: t.scrapeIntervalS,
    };
    if (input.fromConfigFile !== undefined) {
      return {
        ...base,
        health: t.health,
        message: `${name} is in ${input.fromConfigFile} as job="${t.job}" instance="${t.instance}"; whether its scrapes succeed is not known while ${input.promLabel} cannot be asked`,
      };
    }
    if (t.health !== 'up') {
      return {
        ...base,
        health: t.health,
        lastError: t.lastError,
        message: `${name} is scraped by ${input.promLabel} as job="${t.job}" instance="${t.instance}", but the last scrape ${t.health === 'down' ? `failed: ${t.lastError || 'no reason given'}` : 'has not happened yet'}`,
      };
    }
    return {
      ...base,
      health: t.health,
      message: `${name} is scraped by ${input.promLabel} as job="${t.job}" instance="${t.instance}"${t.scrapeIntervalS ? ` every ${t.scrapeIntervalS} s` : ''}`,
    };
  });
}
