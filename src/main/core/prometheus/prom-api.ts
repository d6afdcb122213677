// The contract between the Prometheus HTTP API client (reached directly or through a host's SSH tunnel) and
// its users: discovery of what it scrapes, history queries and the exporters. One interface so history and
// discovery can be tested against a real Prometheus through the real client, and the client stays swappable
// for Thanos / VictoriaMetrics / Mimir, which answer the same HTTP API.

/** One series of a range query: its labels and [unix seconds, value] points (Prometheus sends values as text). */
export interface PromRangeSeries {
  metric: Record<string, string>;
  values: [number, number][];
}

export interface PromRangeResult {
  series: PromRangeSeries[];
  /** Response bytes as they crossed the tunnel, for the benchmark and the "bytes moved" figure. */
  bytes: number;
  /** Warnings Prometheus attached to a successful answer (e.g. partial data from a Thanos store). */
  warnings: string[];
}

/** A scrape target as /api/v1/targets reports it. */
export interface PromTarget {
  job: string;
  instance: string;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
  lastScrape: string;
  scrapeIntervalS: number | null;
  labels: Record<string, string>;
  /**
   * Labels before relabelling (`__address__`, `__metrics_path__`, `__scheme__`): the address the config wrote,
   * which is what discovery matches when relabel_configs rewrite it. Absent from engines that omit them.
   */
  discoveredLabels?: Record<string, string>;
}

/** Why a Prometheus request failed, worded for the operator (names the query and what to change). */
export interface PromFailure {
  code:
    | 'unreachable'
    | 'tls'
    | 'timeout'
    | 'auth'
    | 'bad-query'
    | 'too-many-samples'
    | 'resolution-too-fine'
    | 'server-error'
    | 'garbage'
    | 'retention';
  message: string;
  fix?: string;
  query?: string;
}

export interface PromApi {
  /** Where it is, as shown to the operator ("prometheus.service on gpu-a", "http://…:9090 via gpu-a"). */
  readonly label: string;
  queryRange(
    expr: string,
    startS: number,
    endS: number,
    stepS: number,
    signal?: AbortSignal,
  ): Promise<PromRangeResult>;
  query(expr: string, timeS?: number, signal?: AbortSignal): Promise<PromRangeResult>;
  targets(signal?: AbortSignal): Promise<PromTarget[]>;
  /** The loaded configuration as YAML (`/api/v1/status/config`). */
  configYaml(signal?: AbortSignal): Promise<string>;
  /** The TSDB retention as configured (`/api/v1/status/flags` storage.tsdb.retention.time), seconds; null when unknown. */
  retentionS(signal?: AbortSignal): Promise<number | null>;
  dispose(): void;
}
