// Contract part: reviewing a recorded session offline in the same dashboard. A recording opens as a read-only
// deployment (id `rec:<key>`, summary.review set) that every page renders like a live one; a cursor picks the
// moment whose state the cards show, and the usual dashboard requests (series, snapshot, journal around a time)
// answer from the recording.
import type { AppEvent, DeploymentSummary, Observation, ReviewSource } from '../domain';
import type { DashboardSnapshot, SignalInfo } from './dashboard';

/** Prefix of every review deployment id. */
export const REVIEW_ID_PREFIX = 'rec:';
/** Largest recording accepted by upload (a dropped file): a week at 1 s is ≈ 300 MiB. */
export const MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;
/** Upload chunk: its base64 must fit the browser-mode WebSocket frame limit (1 MiB) with room to spare. */
export const UPLOAD_CHUNK_BYTES = 512 * 1024;

/**
 * Said of a recording of an older format — a minor before 1.4, or a one-host file whose services carry no ids —:
 * review reads its data the slow way, and the sessions list offers to re-save it in the one format written now.
 */
export const OLD_FORMAT_NOTE =
  'recorded in an older format: opens the slow way; re-save it (pd-console recording resave FILE) to open it at once';

export interface ResaveResult {
  /** The minor version the file had (it now has the current one). */
  fromMinorVersion: number;
  bytesBefore: number;
  bytesAfter: number;
}

/** What the first screen of a review shows besides its charts, sent with the open instead of asked after it. */
export interface ReviewFirstScreen {
  /** As getSignalCatalog answers. */
  catalog: SignalInfo[];
  /** As getDashboard answers: the state at the cursor. */
  dashboard: DashboardSnapshot;
}

export interface ReviewOpenResult {
  summary: DeploymentSummary;
  /** Every recorded event (alerts, restarts, state changes, annotations), oldest first. */
  events: AppEvent[];
  first: ReviewFirstScreen;
}

export interface RecentReview {
  /** Pass to openRecentReview. */
  key: string;
  name: string;
  path: string;
  sessionId: string | null;
  hostLabel: string;
  deploymentName: string;
  firstTs: number;
  lastTs: number;
  openedAt: number;
  /** False when the file is gone (deleted, moved, retention). */
  exists: boolean;
}

export interface ReviewCursorResult {
  deploymentId: string;
  /** The cursor as set (clamped to the recording). */
  ts: number;
  /** The services as they were at `ts`: unit state, health, scrape, KV, signals. */
  observation: Observation;
  dashboard: DashboardSnapshot;
}

export interface UploadStart {
  uploadId: string;
  /** Largest chunk uploadRecordingChunk accepts (bytes before base64). */
  chunkBytes: number;
}

export interface ReviewRequests {
  /** Opens a session of the recordings folder for review (or returns the review already open). */
  openSessionReview(args: { id: string }): Promise<ReviewOpenResult>;
  /** Opens an entry of listRecentReviews. */
  openRecentReview(args: { key: string }): Promise<ReviewOpenResult>;
  /** Recordings opened lately, newest first. */
  listRecentReviews(args: Record<string, never>): Promise<RecentReview[]>;
  /** Moves the review cursor; also pushes `observation` and `dashboard` for the review deployment. */
  setReviewCursor(args: { deploymentId: string; ts: number }): Promise<ReviewCursorResult>;
  /**
   * A recording file dropped on the window (browser mode has no file paths): its bytes are uploaded in chunks,
   * checked, stored in the recordings folder and opened.
   */
  beginRecordingUpload(args: { name: string; sizeBytes: number }): Promise<UploadStart>;
  uploadRecordingChunk(args: {
    uploadId: string;
    offset: number;
    /** base64 */
    data: string;
  }): Promise<{ receivedBytes: number }>;
  finishRecordingUpload(args: { uploadId: string }): Promise<ReviewOpenResult>;
  cancelRecordingUpload(args: { uploadId: string }): Promise<void>;
  /**
   * Rewrites a complete session of the recordings folder in the current format (same values, states, events and
   * journal; atomic), so that a review opens it at once: what `pd-console recording resave` does.
   */
  resaveSession(args: { id: string }): Promise<ResaveResult>;
}

export const REVIEW_REQUESTS = [
  'openSessionReview',
  'openRecentReview',
  'listRecentReviews',
  'setReviewCursor',
  'beginRecordingUpload',
  'uploadRecordingChunk',
  'finishRecordingUpload',
  'cancelRecordingUpload',
  'resaveSession',
] as const satisfies readonly (keyof ReviewRequests)[];

export interface ReviewEvents {
  /** A recording was opened outside the window (the desktop app's File → Open): show it. */
  reviewOpened: ReviewOpenResult;
  /**
   * What an open review says of its recording changed after the open was answered: the full read that follows
   * an open from the overview found damage, a cut or a missing index (its warnings), or could not be read.
   */
  reviewUpdated: { deploymentId: string; review: ReviewSource };
}

export const REVIEW_EVENTS = [
  'reviewOpened',
  'reviewUpdated',
] as const satisfies readonly (keyof ReviewEvents)[];
