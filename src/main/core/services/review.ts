// Review mode: a recorded session opened as a read-only deployment (`rec:<key>`) that the same dashboard renders
// — its signal history, events as timeline markers, a cursor whose moment the cards show, the journal around it.
// It never touches SSH. Each open recording is a `RecordedDeployment` in the deployment registry (this service
// is one of its sources): the services answer its readings from the file through the same interface as a live
// deployment's, and it refuses actions (restart, faults, discovery) itself with its message.
import { createHash, randomBytes } from 'node:crypto';
import {
  open as openFile,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
  mkdir,
  type FileHandle,
} from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import type {
  RecentReview,
  ResaveResult,
  ReviewCursorResult,
  ReviewOpenResult,
  ReviewRequests,
  UploadStart,
} from '@shared/contract';
import { type RequestArgs, type RequestName } from '@shared/contract';
import { validateArgs } from '@shared/schemas';
import { MAX_UPLOAD_BYTES, REVIEW_ID_PREFIX, UPLOAD_CHUNK_BYTES } from '@shared/api/review';
import type { AppEvent, DeploymentConfig, DeploymentSummary, HostConfig, ReviewSource } from '@shared/domain';
import type { ApiEventSource, ServiceHost } from './service-host';
import { ApiError } from '../api-error';
import { systemClock, type Clock } from '../clock';
import { FILE_EXTENSION, RecordingOpenError } from '../recording/format';
import { readHeader } from '../recording/reader';
import { SessionNotFoundError, type SessionStore } from '../recording/session-store';
import { loadReview, type LoadedReview } from '../review/load-review';
import { REVIEW_OVERVIEW } from '../review/overview-table';
import { resaveRecording } from '../recording/resave';
import { ReviewCache } from '../review/review-cache';
import { readSidecar } from '../review/sidecar';
import { observationAt, snapshotAt } from '../review/state-at';
import { RecordedDeployment } from '../deployment/recorded-deployment';
import type { DeploymentSource } from '../deployment/deployment-registry';

export interface ReviewServiceOptions {
  /** The recordings folder (shared with the recording service). */
  store: SessionStore;
  /** Where the review cache lives (bounded; safe to delete). */
  cacheDir: string;
  /** Where the list of recently opened recordings is kept. */
  recentFile: string;
  cacheMaxBytes?: number;
  /** Review deployments open at once (each holds its session's signals and journal in memory). */
  maxOpen?: number;
  clock?: Clock;
  /** Ids of sessions being recorded right now (read as they are, never cached). */
  recordingIds?: () => string[];
}

interface Review {
  id: string;
  key: string;
  sessionId: string | null;
  path: string;
  name: string;
  loaded: LoadedReview;
  events: AppEvent[];
  host: HostConfig;
  deployment: DeploymentConfig;
  cursor: number;
  /** The recording behind the `Deployment` interface the live one implements (read-only). */
  recorded: RecordedDeployment;
}

interface Upload {
  id: string;
  name: string;
  size: number;
  received: number;
  tmp: string;
  fh: FileHandle;
  timer: ReturnType<typeof setTimeout>;
}

const ID_OK = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MAX_RECENT = 20;
const MAX_UPLOADS = 2;
const UPLOAD_IDLE_MS = 60_000;
const recentSchema = z.array(
  z.object({
    key: z.string(),
    name: z.string(),
    path: z.string(),
    sessionId: z.string().nullable(),
    hostLabel: z.string(),
    deploymentName: z.string(),
    firstTs: z.number(),
    lastTs: z.number(),
    openedAt: z.number(),
  }),
);
type RecentEntry = z.infer<typeof recentSchema>[number];

/** What the review service is given: a review's pushes, and the recorder's status (to prebuild a cache). */
export type ReviewHost = Pick<ServiceHost, 'emit'> & ApiEventSource;

export class ReviewService implements DeploymentSource {
  readonly cache: ReviewCache;
  private readonly reviews = new Map<string, Review>();
  private readonly opening = new Map<string, Promise<ReviewOpenResult>>();
  private readonly uploads = new Map<string, Upload>();
  private readonly clock: Clock;
  private recentLock: Promise<unknown> = Promise.resolve();
  private prebuilding: Promise<void> = Promise.resolve();
  /** Set at shutdown: cache builds not yet begun are dropped instead of waited for. */
  private stopping = false;
  private wakePrebuild: (() => void) | null = null;
  private lastRecording = new Set<string>();

  constructor(
    private readonly core: ReviewHost,
    private readonly opts: ReviewServiceOptions,
  ) {
    this.cache = new ReviewCache(opts.cacheDir, opts.cacheMaxBytes);
    this.clock = opts.clock ?? systemClock;
    // zod builds a validator's parser on its first use (≈ 1–20 ms each): the requests of a review's first
    // screen have theirs built while the app is idle after start, not while the operator waits.
    setTimeout(warmValidators, 0).unref?.();
    // A session that just stopped recording gets its review cache made in the background, so opening it
    // for review later is instant.
    core.on('recordingStatus', (s) => {
      const now = new Set(s.active.map((a) => a.sessionId).filter((x): x is string => !!x));
      for (const id of this.lastRecording) if (!now.has(id)) this.prebuild(id);
      this.lastRecording = now;
    });
  }

  handlers(): ReviewRequests {
    return {
      openSessionReview: (a) => this.openSession(a.id),
      openRecentReview: (a) => this.openRecent(a.key),
      listRecentReviews: () => this.listRecent(),
      setReviewCursor: async (a) => this.setCursor(a.deploymentId, a.ts),
      beginRecordingUpload: (a) => this.beginUpload(a.name, a.sizeBytes),
      uploadRecordingChunk: (a) => this.uploadChunk(a.uploadId, a.offset, a.data),
      finishRecordingUpload: (a) => this.finishUpload(a.uploadId),
      cancelRecordingUpload: (a) => this.cancelUpload(a.uploadId),
      resaveSession: (a) => this.resave(a.id),
    };
  }

  /** Rewrites a finished session in the current format, as `pd-console recording resave` does. */
  private async resave(id: string): Promise<ResaveResult> {
    if (!ID_OK.test(id)) throw new ApiError('bad-arguments', `not a session id: ${JSON.stringify(id)}`);
    if ((this.opts.recordingIds?.() ?? []).includes(id))
      throw new ApiError(
        'session-recording',
        `session ${id} is still being recorded`,
        'It is written in the current format already; close its deployment to end the recording.',
      );
    const path = this.opts.store.pathOf(id);
    if (
      !(await stat(path).then(
        (st) => st.isFile(),
        () => false,
      ))
    )
      throw new SessionNotFoundError(id, this.opts.store.dir);
    let r: Awaited<ReturnType<typeof resaveRecording>>;
    try {
      r = await resaveRecording(path, { overview: REVIEW_OVERVIEW });
    } catch (err) {
      throw new ApiError(
        'resave-failed',
        `session ${id} was not re-saved: ${(err as Error).message.split(path).join(basename(path))}`,
        'The file is unchanged and still opens the slow way.',
      );
    }
    await this.cache.forget(path).catch((err: Error) => this.cacheProblem(err));
    return { fromMinorVersion: r.fromMinorVersion, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter };
  }

  // ---- the registry's view of the open reviews ----

  find(id: string): RecordedDeployment | undefined {
    return this.reviews.get(id)?.recorded;
  }

  /** A session was annotated (annotateSession): an open review of it shows the note at once. */
  sessionAnnotated(sessionId: string): Promise<void> {
    return this.refreshAnnotations(sessionId);
  }

  /** A session was deleted: its review cache goes with it. */
  async sessionDeleted(sessionId: string): Promise<void> {
    await this.cache.forget(this.opts.store.pathOf(sessionId)).catch((err: Error) => this.cacheProblem(err));
  }

  /** Summaries of the open reviews (they join listDeployments). */
  summaries(): DeploymentSummary[] {
    return [...this.reviews.values()].map((r) => this.summary(r));
  }

  /** Opens a session of the recordings folder. */
  openSession(id: string): Promise<ReviewOpenResult> {
    if (!ID_OK.test(id)) throw new ApiError('bad-arguments', `not a session id: ${JSON.stringify(id)}`);
    return this.openOnce(id, () => this.load(id, this.opts.store.pathOf(id), id));
  }

  /**
   * Opens a recording file by path — for trusted callers only (the desktop app's File → Open dialog, the CLI).
   * A file inside the recordings folder opens as its session (annotations, rename).
   */
  openFile(path: string): Promise<ReviewOpenResult> {
    const full = resolve(path);
    const inStore = resolve(dirname(full)) === resolve(this.opts.store.dir) && full.endsWith(FILE_EXTENSION);
    const sessionId = inStore ? basename(full).slice(0, -FILE_EXTENSION.length) : null;
    if (sessionId && ID_OK.test(sessionId)) return this.openSession(sessionId);
    const key = `file-${createHash('sha1').update(full).digest('hex').slice(0, 12)}`;
    return this.openOnce(key, () => this.load(key, full, null));
  }

  async close(id: string): Promise<void> {
    this.reviews.delete(id);
  }

  /** Stops uploads in progress and removes their partial files (app quit). */
  async shutdown(): Promise<void> {
    await Promise.all([...this.uploads.keys()].map((id) => this.cancelUpload(id)));
    this.stopping = true;
    this.wakePrebuild?.();
    await this.prebuilding;
    await this.recentLock;
  }

  // ---- opening ----

  private openOnce(key: string, load: () => Promise<ReviewOpenResult>): Promise<ReviewOpenResult> {
    const id = REVIEW_ID_PREFIX + key;
    const open = this.reviews.get(id);
    if (open) return Promise.resolve(this.result(open));
    let p = this.opening.get(id);
    if (!p) {
      p = load().finally(() => this.opening.delete(id));
      this.opening.set(id, p);
    }
    return p;
  }

  private async load(key: string, path: string, sessionId: string | null): Promise<ReviewOpenResult> {
    const max = this.opts.maxOpen ?? 4;
    if (this.reviews.size >= max)
      throw new ApiError(
        'too-many-reviews',
        `${this.reviews.size} recordings are open for review already`,
        'Close one (its Close button) before opening another: each holds its session in memory.',
      );
    // A session that is not there is the operator's news, not an internal error, and the data folder's path is
    // not theirs to read.
    if (
      sessionId !== null &&
      !(await stat(path).then(
        (st) => st.isFile(),
        () => false,
      ))
    )
      throw new SessionNotFoundError(sessionId, this.opts.store.dir);
    const live = sessionId !== null && (this.opts.recordingIds?.() ?? []).includes(sessionId);
    // The sidecar (a few hundred bytes) is read while the recording is.
    const sidecar = sessionId
      ? readSidecar(this.opts.store.dir, sessionId)
      : Promise.resolve({ name: undefined, annotations: [], warning: null });
    let loaded: LoadedReview;
    try {
      loaded = await loadReview(path, {
        cache: this.cache,
        live,
        onCacheError: (err) => this.cacheProblem(err),
      });
    } catch (err) {
      throw openError(err, path, sessionId);
    }
    const id = REVIEW_ID_PREFIX + key;
    const { data } = loaded;
    const side = await sidecar;
    const name = side.name ?? data.header.name;
    const hostId = data.header.host.id;
    const events = [...data.events, ...side.annotations.map((a) => annotationEvent(a, id, hostId))]
      .map((e) => ({ ...e, deploymentId: id }))
      .sort((a, b) => a.ts - b.ts);
    if (side.warning) loaded.keepWarning(side.warning);
    const recorded = new RecordedDeployment({
      id,
      name,
      loaded,
      path,
      cursor: () => r.cursor,
      events: () => r.events,
    });
    const r: Review = {
      id,
      key,
      sessionId,
      path,
      name,
      loaded,
      events,
      host: recorded.host,
      deployment: recorded.config,
      // Opens at the last recorded scrape: the moment an operator usually comes back to look at (journal
      // lines and events may be stamped later, e.g. by a host whose clock runs ahead).
      cursor: data.lastScrapeTs,
      recorded,
    };
    this.reviews.set(id, r);
    // Opened from the overview: events the overview did not reach (the last stretch of a file never closed)
    // arrive with the full detail, as markers on the open review.
    // The state at the cursor is pushed again with it: the full read holds what the overview has not (the
    // router's own list of its workers), and a page showing it would otherwise wait for the cursor to move.
    // What the open said of the file (warnings, span) is pushed again if the full detail says otherwise: a
    // damaged stretch of data, a file cut after it was closed, a full read that failed.
    const said = reviewFacts(this.summary(r).review);
    void loaded.full.then(() => {
      this.addEvents(r, loaded.data.events);
      if (this.reviews.get(r.id) !== r) return;
      if (loaded.detail === 'full') this.setCursor(r.id, r.cursor);
      const review = this.summary(r).review;
      if (review && reviewFacts(review) !== said)
        this.core.emit('reviewUpdated', { deploymentId: r.id, review });
    });
    // The recent list is written after the answer: the first screen does not wait for a file write, and a
    // list that could not be written costs only its entry.
    void this.remember(r).catch((err: Error) => this.cacheProblem(err));
    return this.result(r);
  }

  /** The review's summary and events, and what its first screen would ask for next (catalogue, snapshot). */
  private result(r: Review): ReviewOpenResult {
    return {
      summary: this.summary(r),
      events: [...r.events],
      first: { catalog: r.recorded.readings.catalog(), dashboard: r.recorded.readings.dashboard() },
    };
  }

  private summary(r: Review): DeploymentSummary {
    const d = r.loaded.data;
    const fleet = r.recorded.fleet;
    return {
      deployment: r.deployment,
      host: r.host,
      connection: { state: 'idle' },
      // A fleet's hosts with their links at the cursor, and what discovery found, as live.
      ...(fleet ? { hosts: r.recorded.hostStates(), fleet } : {}),
      latest: r.recorded.latest,
      review: {
        sessionId: r.sessionId,
        path: r.path,
        name: r.name,
        recordedHost: { ...d.header.host },
        startedAt: d.header.startedAt,
        firstTs: d.firstTs,
        lastTs: d.lastTs,
        cursor: r.cursor,
        closedCleanly: d.closedCleanly,
        warnings: [...d.warnings],
        loadedFrom: r.loaded.loadedFrom,
        openMs: Math.round(r.loaded.openMs),
      },
    };
  }

  private need(id: string): Review {
    const r = this.reviews.get(id);
    if (!r)
      throw new ApiError(
        'unknown-deployment',
        `no recording open for review as "${id}"`,
        'Open it again from the sessions list.',
      );
    return r;
  }

  private addEvents(r: Review, recorded: readonly AppEvent[]): void {
    if (this.reviews.get(r.id) !== r) return;
    const known = new Set(r.events.map((e) => e.id));
    let added = false;
    for (const e of recorded) {
      if (known.has(e.id)) continue;
      const ev = { ...e, deploymentId: r.id };
      r.events.push(ev);
      this.core.emit('event', ev);
      added = true;
    }
    if (added) r.events.sort((a, b) => a.ts - b.ts);
  }

  private async refreshAnnotations(sessionId: string): Promise<void> {
    const r = [...this.reviews.values()].find((x) => x.sessionId === sessionId);
    if (!r) return;
    const side = await readSidecar(this.opts.store.dir, sessionId);
    const known = new Set(r.events.map((e) => e.id));
    for (const a of side.annotations) {
      if (known.has(a.id)) continue;
      const e = annotationEvent(a, r.id, r.host.id);
      r.events.push(e);
      this.core.emit('event', e);
    }
    r.events.sort((a, b) => a.ts - b.ts);
  }

  // ---- the cursor ----

  private setCursor(deploymentId: string, ts: number): ReviewCursorResult {
    const r = this.need(deploymentId);
    const d = r.loaded.data;
    r.cursor = Math.min(d.lastTs, Math.max(d.firstTs, ts));
    const observation = observationAt(d, r.id, r.host.id, r.cursor);
    const dashboard = snapshotAt(d, r.events, r.id, r.cursor);
    // The same pushes a live poll makes: every page that shows the latest state shows the cursor's.
    this.core.emit('observation', observation);
    this.core.emit('dashboard', dashboard);
    return { deploymentId, ts: r.cursor, observation, dashboard };
  }

  // ---- recent ----

  private async readRecent(): Promise<RecentEntry[]> {
    try {
      const parsed = recentSchema.safeParse(JSON.parse(await readFile(this.opts.recentFile, 'utf8')));
      return parsed.success ? parsed.data : [];
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      if (err instanceof SyntaxError) return [];
      throw err;
    }
  }

  private remember(r: Review): Promise<void> {
    const next = this.recentLock.then(async () => {
      const list = (await this.readRecent()).filter((e) => e.key !== r.key);
      const d = r.loaded.data;
      list.unshift({
        key: r.key,
        name: r.name,
        path: r.path,
        sessionId: r.sessionId,
        hostLabel: d.header.host.label,
        deploymentName: d.header.deployment.name,
        firstTs: d.firstTs,
        lastTs: d.lastTs,
        openedAt: this.clock.now(),
      });
      await mkdir(dirname(this.opts.recentFile), { recursive: true, mode: 0o700 });
      const tmp = `${this.opts.recentFile}.tmp-${randomBytes(4).toString('hex')}`;
      await writeFile(tmp, JSON.stringify(list.slice(0, MAX_RECENT), null, 1), { mode: 0o600 });
      await rename(tmp, this.opts.recentFile);
    });
    this.recentLock = next.catch(() => undefined);
    return next;
  }

  private async listRecent(): Promise<RecentReview[]> {
    // An open just answered may not have written its entry yet.
    await this.recentLock;
    const list = await this.readRecent();
    return Promise.all(
      list.map(async (e) => ({
        ...e,
        exists: await stat(e.path).then(
          (s) => s.isFile(),
          () => false,
        ),
      })),
    );
  }

  private async openRecent(key: string): Promise<ReviewOpenResult> {
    await this.recentLock;
    const e = (await this.readRecent()).find((x) => x.key === key);
    if (!e)
      throw new ApiError(
        'unknown-recent',
        'that recording is no longer in the recent list',
        'Open it from the sessions list.',
      );
    return e.sessionId ? this.openSession(e.sessionId) : this.openFile(e.path);
  }

  // ---- uploads (a file dropped on the window) ----

  private async beginUpload(name: string, size: number): Promise<UploadStart> {
    if (this.uploads.size >= MAX_UPLOADS)
      throw new ApiError(
        'upload-busy',
        'two recordings are being uploaded already',
        'Wait for them to finish.',
      );
    if (size > MAX_UPLOAD_BYTES)
      throw new ApiError(
        'too-large',
        `${name} is ${size} bytes; recordings up to ${MAX_UPLOAD_BYTES} bytes can be opened`,
      );
    await mkdir(this.opts.store.dir, { recursive: true, mode: 0o700 });
    const id = randomBytes(12).toString('hex');
    // A dot file without the recording extension: the sessions list never shows a partial upload.
    const tmp = join(this.opts.store.dir, `.upload-${id}.part`);
    const fh = await openFile(tmp, 'wx', 0o600);
    const u: Upload = { id, name, size, received: 0, tmp, fh, timer: this.idleTimer(id) };
    this.uploads.set(id, u);
    return { uploadId: id, chunkBytes: UPLOAD_CHUNK_BYTES };
  }

  private idleTimer(id: string): ReturnType<typeof setTimeout> {
    const t = setTimeout(() => void this.cancelUpload(id), UPLOAD_IDLE_MS);
    t.unref?.();
    return t;
  }

  private upload(id: string): Upload {
    const u = this.uploads.get(id);
    if (!u)
      throw new ApiError('unknown-upload', 'this upload was cancelled or timed out', 'Drop the file again.');
    return u;
  }

  private async uploadChunk(id: string, offset: number, data: string): Promise<{ receivedBytes: number }> {
    const u = this.upload(id);
    if (offset !== u.received)
      throw new ApiError('bad-chunk', `chunk at byte ${offset} of ${u.name}, expected byte ${u.received}`);
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length > UPLOAD_CHUNK_BYTES || u.received + bytes.length > u.size) {
      await this.cancelUpload(id);
      throw new ApiError('bad-chunk', `${u.name}: more bytes than announced (${u.size})`);
    }
    await u.fh.write(bytes, 0, bytes.length, offset);
    u.received += bytes.length;
    clearTimeout(u.timer);
    u.timer = this.idleTimer(id);
    return { receivedBytes: u.received };
  }

  private async finishUpload(id: string): Promise<ReviewOpenResult> {
    const u = this.upload(id);
    this.uploads.delete(id);
    clearTimeout(u.timer);
    await u.fh.close();
    try {
      if (u.received !== u.size)
        throw new ApiError(
          'incomplete-upload',
          `${u.name}: received ${u.received} of ${u.size} bytes`,
          'Drop the file again.',
        );
      let header;
      try {
        header = await readHeader(u.tmp);
      } catch (err) {
        throw openError(err, u.tmp, null, u.name);
      }
      // Keep the session's own id when it is free; a different file with the same id gets a suffix.
      let sessionId = ID_OK.test(header.sessionId)
        ? header.sessionId
        : `imported-${randomBytes(4).toString('hex')}`;
      const existing = await stat(this.opts.store.pathOf(sessionId)).catch(() => null);
      if (existing) {
        if (
          existing.size === u.size &&
          (await sameBytes(existing.size, this.opts.store.pathOf(sessionId), u.tmp))
        ) {
          await rm(u.tmp, { force: true });
          return this.openSession(sessionId);
        }
        sessionId = `${sessionId.slice(0, 100)}-imported-${randomBytes(3).toString('hex')}`;
      }
      await rename(u.tmp, this.opts.store.pathOf(sessionId));
      return await this.openSession(sessionId);
    } finally {
      await rm(u.tmp, { force: true });
    }
  }

  private async cancelUpload(id: string): Promise<void> {
    const u = this.uploads.get(id);
    if (!u) return;
    this.uploads.delete(id);
    clearTimeout(u.timer);
    await u.fh.close().catch(() => undefined);
    await rm(u.tmp, { force: true });
  }

  // ---- background ----

  private prebuild(sessionId: string): void {
    // One at a time, after the writer has closed the file; a failure only means the first open is slower.
    this.prebuilding = this.prebuilding.then(async () => {
      await new Promise<void>((r) => {
        const t = setTimeout(r, 2000);
        this.wakePrebuild = () => {
          clearTimeout(t);
          r();
        };
      });
      this.wakePrebuild = null;
      if (this.stopping) return;
      const path = this.opts.store.pathOf(sessionId);
      try {
        const loaded = await loadReview(path, {
          cache: this.cache,
          noOverview: true,
          onCacheError: (e) => this.cacheProblem(e),
        });
        await loaded.cached;
      } catch (err) {
        this.cacheProblem(new Error(`review cache not made for ${path}: ${(err as Error).message}`));
      }
    });
  }

  private cacheProblem(err: Error): void {
    // Opening still works without the cache (it is only slower); say so where the operator's logs are.
    console.warn(`PD Console review: ${err.message}`);
  }
}

function warmValidators(): void {
  const deploymentId = `${REVIEW_ID_PREFIX}warm-up`;
  const first: { [K in RequestName]?: RequestArgs<K> } = {
    listSessions: {},
    listRecentReviews: {},
    openSessionReview: { id: 'warm-up' },
    getSeriesBatch: {
      deploymentId,
      fromMs: 0,
      toMs: 1,
      groups: [{ keys: ['decode.kv_ratio'], maxPoints: 300 }],
    },
    journalAround: { deploymentId, ts: 0, spanMs: 20_000 },
    setReviewCursor: { deploymentId, ts: 0 },
  };
  for (const [method, args] of Object.entries(first))
    try {
      validateArgs(method as RequestName, args);
    } catch (err) {
      // A sample the schema refuses only means that parser is built on first use, as before.
      console.warn(`PD Console review: validator warm-up of ${method}: ${(err as Error).message}`);
    }
}

function annotationEvent(
  a: { id: string; ts: number; text: string },
  deploymentId: string,
  hostId: string,
): AppEvent {
  return { id: a.id, ts: a.ts, kind: 'annotation', severity: 'info', title: a.text, deploymentId, hostId };
}

function openError(err: unknown, path: string, sessionId: string | null, shownName?: string): Error {
  if (err instanceof RecordingOpenError) {
    const message = shownName ? err.message.split(path).join(shownName) : err.message;
    const hint =
      err.code === 'newer-version'
        ? 'Update PD Console to open it.'
        : err.code === 'not-a-recording'
          ? `Recordings are ${FILE_EXTENSION} files written by PD Console.`
          : 'Check that the file exists and can be read.';
    return new ApiError(err.code, message, hint);
  }
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT')
    return new ApiError(
      'not-found',
      sessionId
        ? `session ${sessionId} no longer exists (deleted, or removed by retention)`
        : `${path} does not exist`,
      'Refresh the sessions list.',
    );
  return err instanceof Error ? err : new Error(String(err));
}

async function sameBytes(size: number, a: string, b: string): Promise<boolean> {
  const hash = async (p: string): Promise<string> =>
    createHash('sha1')
      .update(await readFile(p))
      .digest('hex');
  return size <= 256 * 1024 * 1024 && (await hash(a)) === (await hash(b));
}

/** What a review says of its file, to tell whether it changed. */
function reviewFacts(r: ReviewSource | undefined): string {
  return JSON.stringify(r && [r.warnings, r.closedCleanly, r.firstTs, r.lastTs]);
}
