// The scrape_configs a Prometheus needs to watch a deployment: one job per role, every worker's and router's
// metrics endpoint as a static target addressed the way the Prometheus's host dials it, instance labels naming the
// worker. Lines to add to a Prometheus found on a host scrape that host's services on 127.0.0.1; a whole generated
// config for a deployment on several hosts uses the addresses the router uses for its workers (and each host's own
// address for a service known only as 127.0.0.1), so one Prometheus reaches every target, and says where to run it
// and how to install it. Built as objects and written with js-yaml, so quoting and nesting are the YAML library's,
// not string pasting.
import yaml from 'js-yaml';
import { serviceId, type DeploymentConfig, type Role } from '@shared/domain';
import { isLoopbackHost, parseWorkerUrl } from '@shared/worker-url';
import { fleetWorkersOf, workerShortName } from '@shared/worker-names';

/** One metrics endpoint of the deployment, as discovery found it. */
export interface ScrapeEndpoint {
  /** The service's id (`decode-1`, `decode-0`, `router`): its `worker` label. */
  id: string;
  /** How texts name it: the id, or the role of the only worker of its role (signals/worker-names.ts). */
  name: string;
  role: Role;
  hostId: string;
  /** Where the service runs, as the operator names it (`gpu-a`, `demo`). */
  hostLabel: string;
  unit: string;
  /** As seen from its own host, e.g. http://127.0.0.1:30200/metrics. */
  metricsUrl: string;
  /** The worker URL as the router lists it (a fleet's `http://10.1.0.13:30200`), which other hosts dial. */
  workerUrl?: string;
}

export interface ExportOptions {
  /** The host the Prometheus runs on: its own services are scraped on 127.0.0.1 (unless `network`). */
  promHostId?: string;
  /** Addresses other hosts reach each host at, by host id (for a service whose URLs only say 127.0.0.1). */
  hostAddresses?: Record<string, string[]>;
  /**
   * Every target by an address on the network, the Prometheus's own host's services too where their address is
   * known: a worker by the URL the router lists it under, another service by its host's address. A config made
   * this way is not tied to one host's 127.0.0.1.
   */
  network?: boolean;
  /** Default 15s. */
  scrapeInterval?: string;
}

export const JOB_OF_ROLE: Record<Role, string> = {
  prefill: 'sglang-prefill',
  decode: 'sglang-decode',
  router: 'sglang-router',
};

export function endpointsOf(
  deployment: DeploymentConfig,
  hostLabels: Record<string, string>,
): ScrapeEndpoint[] {
  const names = new Map((fleetWorkersOf(deployment.services) ?? []).map((w) => [w.id, workerShortName(w)]));
  return deployment.services.flatMap((s) =>
    s.metricsUrl
      ? [
          {
            id: serviceId(s),
            name: names.get(serviceId(s)) ?? serviceId(s),
            role: s.role,
            hostId: s.hostId,
            hostLabel: hostLabels[s.hostId] ?? s.hostId,
            unit: s.unit,
            metricsUrl: s.metricsUrl,
            ...(s.workerUrl ? { workerUrl: s.workerUrl } : {}),
          },
        ]
      : [],
  );
}

export interface StaticTarget {
  /** host:port as the Prometheus dials it. */
  address: string;
  metricsPath: string;
  scheme: 'http' | 'https';
  labels: { instance: string; worker: string; host: string };
  /** Why this address was chosen when it is a guess (another host known only by its name). */
  note?: string;
}

/** The host as a label value: the operator's name for it when that is a plain name, else its id. */
export function labelHost(ep: Pick<ScrapeEndpoint, 'hostId' | 'hostLabel'>): string {
  return /^[A-Za-z0-9._-]+$/.test(ep.hostLabel) ? ep.hostLabel : ep.hostId;
}

/** The address a Prometheus on `opts.promHostId` dials to reach `ep`. */
export function targetOf(ep: ScrapeEndpoint, opts: ExportOptions = {}): StaticTarget {
  const u = new URL(ep.metricsUrl);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  const local = opts.promHostId === undefined || opts.promHostId === ep.hostId;
  let host = u.hostname;
  let note: string | undefined;
  if (isLoopbackHost(host) && (!local || opts.network)) {
    const worker = ep.workerUrl ? parseWorkerUrl(ep.workerUrl) : null;
    const known = opts.hostAddresses?.[ep.hostId]?.find((a) => !isLoopbackHost(a));
    if (worker && !('error' in worker) && !isLoopbackHost(worker.host)) host = worker.host;
    else if (known) host = known;
    else if (!local) {
      host = ep.hostLabel;
      note = `${ep.hostLabel}'s address is not known here; replace it if that name does not resolve on the Prometheus host`;
    }
  }
  const address = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  return {
    address,
    metricsPath: u.pathname || '/metrics',
    scheme: u.protocol === 'https:' ? 'https' : 'http',
    // 127.0.0.1:30200 means another server on every host: the instance names the host the worker runs on.
    labels: { instance: `${labelHost(ep)}:${port}`, worker: ep.id, host: labelHost(ep) },
    ...(note ? { note } : {}),
  };
}

export interface ScrapeConfig {
  job_name: string;
  scrape_interval?: string;
  metrics_path?: string;
  scheme?: string;
  static_configs: Array<{ targets: string[]; labels: Record<string, string> }>;
}

/** One job per role (and per path/scheme when they differ), one static_config per endpoint. */
export function scrapeConfigsFor(
  endpoints: readonly ScrapeEndpoint[],
  opts: ExportOptions = {},
): ScrapeConfig[] {
  const jobs = new Map<string, ScrapeConfig>();
  for (const ep of endpoints) {
    const t = targetOf(ep, opts);
    const base = JOB_OF_ROLE[ep.role];
    const key = `${base}|${t.metricsPath}|${t.scheme}`;
    let job = jobs.get(key);
    if (!job) {
      const taken = [...jobs.values()].filter((j) => j.job_name.startsWith(base)).length;
      job = {
        job_name: taken === 0 ? base : `${base}-${taken + 1}`,
        ...(opts.scrapeInterval ? { scrape_interval: opts.scrapeInterval } : {}),
        ...(t.metricsPath !== '/metrics' ? { metrics_path: t.metricsPath } : {}),
        ...(t.scheme !== 'http' ? { scheme: t.scheme } : {}),
        static_configs: [],
      };
      jobs.set(key, job);
    }
    job.static_configs.push({ targets: [t.address], labels: { ...t.labels, role: ep.role } });
  }
  return [...jobs.values()];
}

export interface ConfigFileOptions extends ExportOptions {
  header?: string;
  /** The file's name, for the install commands. */
  fileName?: string;
  /** How the operator names the Prometheus's host (`gpu-a`). */
  promHostLabel?: string;
}

/**
 * A whole prometheus.yml: global interval and the deployment's scrape_configs, headed by where to run it and the
 * commands that install it. A deployment on several hosts is addressed on the network (`network`): the addresses
 * the router uses for its workers, so the Prometheus can run on the router's host or any host that reaches them.
 */
export function prometheusConfigYaml(
  endpoints: readonly ScrapeEndpoint[],
  opts: ConfigFileOptions = {},
): string {
  const network = opts.network ?? spansHosts(endpoints);
  const placed = { ...opts, network };
  const doc = {
    global: { scrape_interval: opts.scrapeInterval ?? '15s', evaluation_interval: '15s' },
    scrape_configs: scrapeConfigsFor(endpoints, { ...placed, scrapeInterval: undefined }),
  };
  const notes = endpoints.flatMap((ep) => targetOf(ep, placed).note ?? []);
  const head = [opts.header, ...runAndInstall(endpoints, placed), ...notes.map((n) => `NOTE: ${n}`)]
    .filter((x): x is string => !!x)
    .map((l) => `# ${l}\n`)
    .join('');
  return head + yaml.dump(doc, { lineWidth: 120, noRefs: true, quotingType: "'" });
}

/** Whether the endpoints are on more than one host: then no one host's 127.0.0.1 reaches them all. */
export function spansHosts(endpoints: readonly ScrapeEndpoint[]): boolean {
  return new Set(endpoints.map((ep) => ep.hostId)).size > 1;
}

/** Where the config's Prometheus must run, and the commands that install it there (Debian's prometheus package). */
export function runAndInstall(endpoints: readonly ScrapeEndpoint[], opts: ConfigFileOptions): string[] {
  const where =
    opts.promHostLabel ??
    endpoints.find((ep) => ep.hostId === opts.promHostId)?.hostLabel ??
    opts.promHostId ??
    endpoints[0]?.hostLabel ??
    'the deployment’s host';
  const loopback = endpoints.filter((ep) => isLoopbackHost(targetOf(ep, opts).address.replace(/:\d+$/, '')));
  const run = !opts.network
    ? `Where to run it: on ${where}, where every target is (each is scraped on 127.0.0.1).`
    : loopback.length === 0
      ? `Where to run it: on ${where} (the router's host: its router reaches every worker at these addresses) or any host that reaches them — the targets are the addresses the router uses for its workers, not one host's 127.0.0.1.`
      : `Where to run it: on ${where}: ${loopback.map((ep) => ep.name).join(', ')} ${loopback.length === 1 ? 'is' : 'are'} scraped on its 127.0.0.1 (no other address of ${where} is known here), the others at the addresses the router uses for its workers.`;
  const file = opts.fileName ?? 'prometheus.yml';
  return [
    run,
    `Install on ${where} (Prometheus as the prometheus.service unit, config in /etc/prometheus):`,
    `  promtool check config ${file}`,
    `  sudo install -m 0644 ${file} /etc/prometheus/prometheus.yml   # replaces that file: with other jobs in it, add the scrape_configs below to it instead`,
    '  sudo systemctl reload prometheus   # or POST /-/reload when it runs with --web.enable-lifecycle',
    `  then its targets page (http://127.0.0.1:9090/targets on ${where}) lists every target up`,
  ];
}

/** Just the lines to paste under an existing `scrape_configs:` (list items, indented two spaces). */
export function scrapeConfigLines(configs: readonly ScrapeConfig[]): string {
  return yaml
    .dump(configs, { lineWidth: 120, noRefs: true, quotingType: "'" })
    .split('\n')
    .map((l) => (l === '' ? l : `  ${l}`))
    .join('\n');
}
