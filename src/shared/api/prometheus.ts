// Contract part: the operator's Prometheus (or vmagent / VictoriaMetrics) — which one watches the deployment,
// what of it it scrapes (job, instance, interval) and its retention, the scrape_config lines for what it does
// not scrape, and the generated prometheus.yml and Grafana dashboard.
import type { Role } from '../domain';

export type PrometheusAuthArgs =
  { kind: 'basic'; user: string; password: string } | { kind: 'bearer'; token: string };

export interface PrometheusSourceArgs {
  deploymentId: string;
  /** Base URL as the Prometheus host (or the laptop) dials it; null goes back to discovery. */
  url: string | null;
  /** A host of the deployment to reach the URL through (its SSH tunnel); absent: the laptop dials it. */
  viaHost?: string;
  /** Kept in the secret store; never sent back. A user and password in the URL are moved here (basic auth). */
  auth?: PrometheusAuthArgs;
  /** For an https URL: a PEM file (on the machine the app runs on) of the CA that signed its certificate. */
  caFile?: string;
}

export interface PrometheusFoundUnit {
  hostId: string;
  hostLabel: string;
  unit: string;
  engine: 'prometheus' | 'vmagent' | 'victoria-metrics';
  activeState?: string;
  listenAddress: string;
  url: string;
  configFile: string | null;
  notes: string[];
}

export interface PrometheusEndpointStatus {
  /** The service's id (`decode-0`): its `worker` label. */
  id: string;
  /** How the screen names it: the id, or the role of the only worker of its role. */
  name: string;
  role: Role;
  hostLabel: string;
  metricsUrl: string;
  scraped: boolean;
  job?: string;
  instance?: string;
  intervalS?: number | null;
  health?: 'up' | 'down' | 'unknown';
  lastError?: string;
  message: string;
  /** For an endpoint not scraped: the lines to add under scrape_configs. */
  addLines?: string;
}

export interface PrometheusProblem {
  code: string;
  message: string;
  fix?: string;
}

export interface PrometheusStatus {
  deploymentId: string;
  at: number;
  /** The Prometheus in use: found on a host, or the URL the operator gave; null when none was found. */
  source: {
    kind: 'unit' | 'url';
    label: string;
    url: string;
    viaHost?: string;
    engine?: PrometheusFoundUnit['engine'];
    auth?: 'basic' | 'bearer';
    /** The CA file an https URL is verified with, besides the system's CAs. */
    caFile?: string;
    /** What was done with the URL given (credentials moved to the secret store, a CA file not used). */
    warnings?: string[];
  } | null;
  /** Every engine unit discovery found on the deployment's hosts. */
  found: PrometheusFoundUnit[];
  /** Hosts whose units could not be read, and why. */
  hostErrors: Array<{ hostLabel: string; message: string }>;
  retentionS: number | null;
  endpoints: PrometheusEndpointStatus[];
  /** Asking the Prometheus failed: why, in words, and what to change. */
  problem?: PrometheusProblem;
  /** A complete prometheus.yml for the deployment (what to run when there is none). */
  suggestedConfig: string;
}

export interface ExportedFile {
  fileName: string;
  mimeType: string;
  text: string;
  /** What to do with it, line by line (for the prometheus.yml: where to run it, the commands that install it). */
  notes?: string[];
}

export interface PrometheusRequests {
  /** `fresh`: look for Prometheus units on the hosts now, not at the look of the last 30 s ("Check again"). */
  getPrometheusStatus(args: { deploymentId: string; fresh?: boolean }): Promise<PrometheusStatus>;
  setPrometheusSource(args: PrometheusSourceArgs): Promise<PrometheusStatus>;
  exportPrometheusConfig(args: { deploymentId: string }): Promise<ExportedFile>;
  exportGrafanaDashboard(args: { deploymentId: string }): Promise<ExportedFile>;
}

export const PROMETHEUS_REQUESTS = [
  'getPrometheusStatus',
  'setPrometheusSource',
  'exportPrometheusConfig',
  'exportGrafanaDashboard',
] as const satisfies readonly (keyof PrometheusRequests)[];

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PrometheusEvents {}
export const PROMETHEUS_EVENTS = [] as const;
