// Session recording: the public API. The file format is specified in docs/recording-format.md.
export { RecordingWriter, type WriterOptions } from './writer';
export { readRecording, readHeader, summarizeRecording, type RecordingSummary } from './reader';
export {
  SessionStore,
  SessionNotFoundError,
  type SessionInfo,
  type SessionState,
  type Annotation,
  type RetentionResult,
} from './session-store';
export {
  exportCsv,
  writeCsvFile,
  csvChunks,
  CSV_HEADER,
  MAX_CSV_STRING_ROWS,
  type CsvOptions,
} from './export-csv';
export {
  exportOpenMetrics,
  writeOpenMetricsFile,
  openMetricsChunks,
  MAX_OPENMETRICS_STRING_SAMPLES,
  type OpenMetricsOptions,
  type OpenMetricsResult,
} from './export-openmetrics';
export { writeIncidentBundle, type IncidentBundleInput, type IncidentBundleResult } from './incident-bundle';
export { redactSecrets, redactSecretsCounted, REDACTED } from './redact';
export {
  RecordingOpenError,
  FORMAT_ID,
  FORMAT_VERSION,
  FORMAT_MINOR_VERSION,
  FILE_EXTENSION,
} from './format';
export type * from './types';
