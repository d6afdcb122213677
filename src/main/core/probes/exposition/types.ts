// Output model of the Prometheus text / OpenMetrics exposition parser.

export type ExpositionFormat = 'prometheus' | 'openmetrics';

export type MetricType =
  | 'counter'
  | 'gauge'
  | 'histogram'
  | 'gaugehistogram'
  | 'summary'
  | 'info'
  | 'stateset'
  | 'unknown'
  /** Prometheus text's name for an unannotated family. */
  | 'untyped';

export interface Exemplar {
  labels: Record<string, string>;
  value: number;
  /** Epoch milliseconds. */
  timestampMs?: number;
}

export interface Sample {
  /** Full sample name, e.g. sglang:e2e_request_latency_seconds_bucket */
  name: string;
  /**
   * Read-only: with a series cache (ParseOptions.cache) the samples of one series share one frozen object,
   * across scrapes too.
   */
  labels: Record<string, string>;
  /** NaN and ±Infinity are legal. */
  value: number;
  /** Epoch milliseconds (Prometheus text: as written; OpenMetrics: seconds × 1000). */
  timestampMs?: number;
  exemplar?: Exemplar;
}

export interface MetricFamily {
  /** Family name (for counters in OpenMetrics: without _total). */
  name: string;
  type: MetricType;
  help?: string;
  unit?: string;
  samples: Sample[];
}

export interface Exposition {
  format: ExpositionFormat;
  families: MetricFamily[];
  sampleCount: number;
}

export class ExpositionParseError extends Error {
  /** The message without the "format, line, column" prefix. */
  readonly reason: string;

  constructor(
    message: string,
    /** 1-based */
    readonly line: number,
    /** 1-based */
    readonly column: number,
    readonly format: ExpositionFormat,
  ) {
    super(`${format} exposition, line ${line}, column ${column}: ${message}`);
    this.name = 'ExpositionParseError';
    this.reason = message;
  }
}
