// Contract part: session recordings — every monitoring session is recorded to one file; list, rename,
// annotate, delete, export; settings (on/off, retention by total size).
export type SessionStateDto = 'recording' | 'complete' | 'interrupted' | 'damaged';

export interface SessionInfoDto {
  id: string;
  path: string;
  name: string;
  hostId: string;
  hostLabel: string;
  deploymentId: string;
  deploymentName: string;
  startedAt: number;
  endedAt: number;
  durationMs: number;
  sizeBytes: number;
  state: SessionStateDto;
  annotations: number;
  warnings: string[];
}

export interface RecordingSettings {
  enabled: boolean;
  /** Retention: oldest sessions are deleted past this total; the session being recorded never is. */
  maxTotalBytes: number;
}

export interface ActiveRecording {
  deploymentId: string;
  sessionId: string | null;
  path: string | null;
  state: 'recording' | 'stopped' | 'off';
  bytesWritten: number;
  samples: number;
  /** Why recording stopped (e.g. disk full); monitoring goes on regardless. */
  error?: string;
}

export interface RecordingStatus {
  dir: string;
  settings: RecordingSettings;
  active: ActiveRecording[];
  /** Recent problems of the recorder that are not about one live recording (closing a file, retention). */
  problems: { at: number; message: string }[];
}

/**
 * csv: the charted signals, a column per signal key (what review draws); csv-raw: every raw series the servers
 * exposed, a row per sample (many times larger); openmetrics: the raw series as OpenMetrics; bundle: the incident
 * bundle.
 */
export type ExportFormat = 'csv' | 'csv-raw' | 'openmetrics' | 'bundle';

export interface ExportResult {
  /** Where the backend wrote it. */
  path: string;
  /** Its name in the backend's export folder: browser mode downloads it from /exports/<fileName>. */
  fileName: string;
  bytes: number;
  format: ExportFormat;
  /** For the incident bundle: how many secrets were redacted. */
  redactions?: number;
}

export interface RecordingRequests {
  getRecordingStatus(args: Record<string, never>): Promise<RecordingStatus>;
  setRecordingSettings(args: Partial<RecordingSettings>): Promise<RecordingStatus>;
  listSessions(args: Record<string, never>): Promise<SessionInfoDto[]>;
  renameSession(args: { id: string; name: string }): Promise<void>;
  /** A note pinned to a time; on the session being recorded it also appears on the live timeline. */
  annotateSession(args: { id: string; ts: number; text: string }): Promise<void>;
  deleteSession(args: { id: string }): Promise<void>;
  exportSession(args: {
    id: string;
    format: ExportFormat;
    fromMs?: number;
    toMs?: number;
  }): Promise<ExportResult>;
}

export const RECORDING_REQUESTS = [
  'getRecordingStatus',
  'setRecordingSettings',
  'listSessions',
  'renameSession',
  'annotateSession',
  'deleteSession',
  'exportSession',
] as const satisfies readonly (keyof RecordingRequests)[];

export interface RecordingEvents {
  recordingStatus: RecordingStatus;
}

export const RECORDING_EVENTS = ['recordingStatus'] as const satisfies readonly (keyof RecordingEvents)[];
