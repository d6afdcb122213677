// The recordings folder: one <id>.pdrec.jsonl.gz per session plus a small <id>.meta.json sidecar holding what can
// change after recording (name, annotations added later) and a cached summary (time span, integrity), so listing
// sessions does not decompress every file. The sidecar is rewritten atomically (temp file + rename).
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { AppEvent } from '@shared/domain';
import { systemClock, type Clock } from '../clock';
import { FILE_EXTENSION, formatNote, RecordingOpenError, servicesNamed } from './format';
import { readHeader, readRecording, summarizeRecording } from './reader';
import { redactSecrets } from './redact';
import type { ReadOptions, RecordingHeader, Recording } from './types';
import { RecordingWriter, type WriterOptions } from './writer';

const META_EXTENSION = '.meta.json';
const ID_OK = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A session not closed whose file changed this recently may be recording in another app instance. */
const LIVE_ELSEWHERE_MS = 30_000;
const MAX_NAME = 200;
const MAX_NOTE = 10_000;

/**
 * No session of that id in the recordings folder. The message names the folder (for logs and the CLI); what goes
 * to clients (`explained`, read by toApiErrorShape) names only the session, with what to do.
 */
export class SessionNotFoundError extends Error {
  readonly code = 'not-found';
  constructor(
    readonly sessionId: string,
    dir: string,
  ) {
    super(`No recorded session ${sessionId} in ${dir}`);
    this.name = 'SessionNotFoundError';
  }

  get explained(): { code: string; message: string; hint: string } {
    return {
      code: 'not-found',
      message: `no recorded session "${this.sessionId}"`,
      hint: 'It was deleted, removed by retention or never existed here: refresh the sessions list.',
    };
  }
}

export type SessionState = 'recording' | 'complete' | 'interrupted' | 'damaged';

export interface SessionInfo {
  id: string;
  path: string;
  name: string;
  hostId: string;
  hostLabel: string;
  deploymentId: string;
  deploymentName: string;
  startedAt: number;
  /** Time of the last record (for a session being recorded: the last append). */
  endedAt: number;
  durationMs: number;
  /** Recording plus sidecar, bytes. */
  sizeBytes: number;
  state: SessionState;
  annotations: number;
  /** Why a session is interrupted or damaged, in words. */
  warnings: string[];
}

export interface Annotation {
  id: string;
  /** The time the note is pinned to (epoch ms). */
  ts: number;
  text: string;
  createdAt: number;
}

export interface RetentionResult {
  deleted: string[];
  totalBytes: number;
  /** Bytes still above the limit because only protected sessions (being recorded) remain. */
  overLimitBytes: number;
}

const annotationSchema = z.object({
  id: z.string(),
  ts: z.number(),
  text: z.string(),
  createdAt: z.number(),
});
const metaSchema = z.object({
  metaVersion: z.literal(1),
  name: z.string().optional(),
  annotations: z.array(annotationSchema).default([]),
  summary: z
    .object({
      sizeBytes: z.number(),
      mtimeMs: z.number(),
      name: z.string(),
      hostId: z.string(),
      hostLabel: z.string(),
      deploymentId: z.string(),
      deploymentName: z.string(),
      startedAt: z.number(),
      endedAt: z.number(),
      closedCleanly: z.boolean(),
      damaged: z.boolean(),
      warnings: z.array(z.string()),
      /** The file's format minor version (absent in summaries cached before format 1.2). */
      minorVersion: z.number().optional(),
      /** Every service of the header carries its id (absent in summaries cached before that was asked). */
      servicesNamed: z.boolean().optional(),
    })
    .optional(),
});
type Meta = z.infer<typeof metaSchema>;
type Summary = NonNullable<Meta['summary']>;

export class SessionStore {
  private readonly active = new Map<string, RecordingWriter>();
  /** Serialises sidecar read-modify-write per session. */
  private readonly metaLocks = new Map<string, Promise<unknown>>();
  private readonly clock: Clock;

  constructor(
    readonly dir: string,
    opts: { clock?: Clock } = {},
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  pathOf(id: string): string {
    return join(this.dir, checkId(id) + FILE_EXTENSION);
  }

  private metaPath(id: string): string {
    return join(this.dir, checkId(id) + META_EXTENSION);
  }

  /** Starts recording a new session. The store treats it as active (never deleted) until its writer is closed. */
  async start(
    header: Omit<RecordingHeader, 'sessionId' | 'name'> & { name?: string },
    opts?: WriterOptions,
  ): Promise<{ id: string; path: string; writer: RecordingWriter }> {
    const d = new Date(header.startedAt);
    const stamp = d
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z')
      .replace('T', '-');
    const id = `${stamp}-${randomBytes(3).toString('hex')}`;
    const name = header.name?.trim() || `${header.deployment.name} on ${header.host.label}`;
    const path = this.pathOf(id);
    const writer = await RecordingWriter.open(path, { ...header, sessionId: id, name }, opts);
    this.active.set(id, writer);
    return { id, path, writer };
  }

  /** Ids of sessions this store is recording right now. */
  activeIds(): string[] {
    for (const [id, w] of this.active) if (!w.isOpen) this.active.delete(id);
    return [...this.active.keys()];
  }

  async list(): Promise<SessionInfo[]> {
    const names = await readdir(this.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [] as string[];
      throw new Error(`Cannot list recordings in ${this.dir}: ${err.message}`);
    });
    const ids = names
      .filter((n) => n.endsWith(FILE_EXTENSION))
      .map((n) => n.slice(0, -FILE_EXTENSION.length));
    const out: SessionInfo[] = [];
    for (const id of ids) {
      if (!ID_OK.test(id)) continue;
      out.push(await this.info(id).catch((err: Error) => this.brokenEntry(id, err)));
    }
    return out.sort((a, b) => b.startedAt - a.startedAt);
  }

  /** One session's entry; throws if it does not exist. */
  async info(id: string): Promise<SessionInfo> {
    const path = this.pathOf(id);
    const st = await this.statOf(id);
    const metaBytes = (): Promise<number> =>
      stat(this.metaPath(id)).then(
        (m) => m.size,
        () => 0,
      );
    const meta = await this.readMeta(id);
    const writer = this.active.get(id);
    if (writer && writer.isOpen) {
      const h = writer.header;
      const end = writer.stats.lastTs ?? h.startedAt;
      return {
        id,
        path,
        name: meta.name ?? h.name,
        hostId: h.host.id,
        hostLabel: h.host.label,
        deploymentId: h.deployment.id,
        deploymentName: h.deployment.name,
        startedAt: h.startedAt,
        endedAt: end,
        durationMs: end - h.startedAt,
        sizeBytes: st.size + (await metaBytes()),
        state: 'recording',
        annotations: meta.annotations.length,
        warnings: [],
      };
    }
    if (writer) this.active.delete(id);
    let summary = meta.summary;
    if (!summary || summary.sizeBytes !== st.size || summary.mtimeMs !== st.mtimeMs) {
      const s = await this.summarize(id, path, st.size, st.mtimeMs);
      await this.updateMeta(id, (m) => ({ ...m, summary: s }));
      summary = s;
    } else if (
      (summary.minorVersion === undefined || summary.servicesNamed === undefined) &&
      !summary.damaged
    ) {
      // A summary cached earlier may not say the version or whether the services are named: the header alone
      // tells (milliseconds).
      const h = await readHeader(path).catch(() => undefined);
      if (h) {
        const s: Summary = { ...summary, minorVersion: h.minorVersion, servicesNamed: servicesNamed(h) };
        await this.updateMeta(id, (m) => ({ ...m, summary: s }));
        summary = s;
      }
    }
    const note = formatNote(summary.minorVersion, summary.servicesNamed);
    // File times are wall-clock times: compare with the real clock, not the injected one.
    const liveElsewhere =
      !summary.closedCleanly && !summary.damaged && Date.now() - st.mtimeMs < LIVE_ELSEWHERE_MS;
    const state: SessionState = summary.damaged
      ? 'damaged'
      : summary.closedCleanly
        ? 'complete'
        : liveElsewhere
          ? 'recording'
          : 'interrupted';
    return {
      id,
      path,
      name: meta.name ?? summary.name,
      hostId: summary.hostId,
      hostLabel: summary.hostLabel,
      deploymentId: summary.deploymentId,
      deploymentName: summary.deploymentName,
      startedAt: summary.startedAt,
      endedAt: summary.endedAt,
      durationMs: summary.endedAt - summary.startedAt,
      // Measured after the sidecar update above, so retention sums what is really on disk.
      sizeBytes: st.size + (await metaBytes()),
      state,
      annotations: meta.annotations.length,
      warnings: note && !summary.damaged ? [...summary.warnings, note] : summary.warnings,
    };
  }

  /** Opens a session for review: the recording plus later renames and annotations from the sidecar. */
  async open(id: string, opts: ReadOptions = {}): Promise<Recording> {
    await this.statOf(id);
    const rec = await readRecording(this.pathOf(id), opts);
    let meta: Meta;
    try {
      meta = await this.readMeta(id);
    } catch (err) {
      rec.warnings.push(`${(err as Error).message} Later renames and annotations are not shown.`);
      meta = { metaVersion: 1, annotations: [] };
    }
    if (meta.name) rec.header = { ...rec.header, name: meta.name };
    const from = opts.fromMs ?? -Infinity;
    const to = opts.toMs ?? Infinity;
    const notes = meta.annotations
      .filter((a) => a.ts >= from && a.ts <= to)
      .map((a) => annotationEvent(rec, a));
    if (notes.length) rec.events = [...rec.events, ...notes].sort((a, b) => a.ts - b.ts);
    return rec;
  }

  async rename(id: string, name: string): Promise<void> {
    const clean = name.trim();
    if (!clean || clean.length > MAX_NAME)
      throw new RangeError(`A session name must be 1…${MAX_NAME} characters, got ${clean.length}`);
    await this.info(id);
    await this.updateMeta(id, (m) => ({ ...m, name: clean }));
  }

  /** Pins a note to a time. While the session is recording the note goes into the recording itself. */
  async annotate(id: string, ts: number, text: string): Promise<AppEvent> {
    const clean = noteText(text, ts);
    const a: Annotation = {
      id: `note-${randomBytes(6).toString('hex')}`,
      ts,
      text: clean,
      createdAt: this.clock.now(),
    };
    const writer = this.active.get(id);
    if (writer && writer.isOpen) {
      const e: AppEvent = {
        id: a.id,
        ts,
        kind: 'annotation',
        severity: 'info',
        title: clean,
        deploymentId: writer.header.deployment.id,
        hostId: writer.header.host.id,
      };
      writer.appendEvent(e);
      return e;
    }
    const info = await this.info(id);
    await this.updateMeta(id, (m) => ({ ...m, annotations: [...m.annotations, a] }));
    return {
      id: a.id,
      ts,
      kind: 'annotation',
      severity: 'info',
      title: clean,
      deploymentId: info.deploymentId,
      hostId: info.hostId,
    };
  }

  /** Deletes a session (recording and sidecar). Refuses the session being recorded. */
  async delete(id: string): Promise<void> {
    if (this.isProtected(id, await this.info(id)))
      throw new Error(`Session ${id} is being recorded; stop the recording before deleting it.`);
    await rm(this.pathOf(id), { force: true });
    await rm(this.metaPath(id), { force: true });
  }

  /**
   * Deletes the oldest sessions until recordings take at most maxBytes. Never deletes `activeId`, a session this
   * store is recording, or one that looks live in another app instance.
   */
  async enforceRetention(maxBytes: number, activeId?: string): Promise<RetentionResult> {
    if (!(maxBytes >= 0)) throw new RangeError(`Retention limit must be ≥ 0 bytes, got ${maxBytes}`);
    const sessions = await this.list();
    let total = sessions.reduce((a, s) => a + s.sizeBytes, 0);
    const deleted: string[] = [];
    const candidates = sessions
      .filter((s) => s.id !== activeId && !this.isProtected(s.id, s))
      .sort((a, b) => a.startedAt - b.startedAt);
    for (const s of candidates) {
      if (total <= maxBytes) break;
      await rm(this.pathOf(s.id), { force: true });
      await rm(this.metaPath(s.id), { force: true });
      total -= s.sizeBytes;
      deleted.push(s.id);
    }
    return { deleted, totalBytes: total, overLimitBytes: Math.max(0, total - maxBytes) };
  }

  // ---- internals ----

  private async statOf(id: string): Promise<Stats> {
    try {
      return await stat(this.pathOf(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionNotFoundError(id, this.dir);
      throw new Error(`Cannot read session ${id} in ${this.dir}: ${(err as Error).message}`, { cause: err });
    }
  }

  private isProtected(id: string, info: SessionInfo): boolean {
    const w = this.active.get(id);
    return (w !== undefined && w.isOpen) || info.state === 'recording';
  }

  private async brokenEntry(id: string, err: Error): Promise<SessionInfo> {
    const path = this.pathOf(id);
    const st = await stat(path).catch(() => null);
    const t = st?.mtimeMs ?? 0;
    return {
      id,
      path,
      name: id,
      hostId: '',
      hostLabel: '',
      deploymentId: '',
      deploymentName: '',
      startedAt: t,
      endedAt: t,
      durationMs: 0,
      sizeBytes: st?.size ?? 0,
      state: 'damaged',
      annotations: 0,
      warnings: [err.message],
    };
  }

  private async summarize(id: string, path: string, size: number, mtimeMs: number): Promise<Summary> {
    try {
      const s = await summarizeRecording(path);
      const h = s.header;
      return {
        sizeBytes: size,
        mtimeMs,
        name: h.name,
        hostId: h.host.id,
        hostLabel: h.host.label,
        deploymentId: h.deployment.id,
        deploymentName: h.deployment.name,
        startedAt: h.startedAt,
        endedAt: Math.max(s.lastTs, h.startedAt),
        closedCleanly: s.closedCleanly,
        damaged: false,
        warnings: s.warnings,
        minorVersion: h.minorVersion,
        servicesNamed: servicesNamed(h),
      };
    } catch (err) {
      if (!(err instanceof RecordingOpenError)) throw err;
      // Listed anyway, so the operator sees it and can delete it.
      return {
        sizeBytes: size,
        mtimeMs,
        name: id,
        hostId: '',
        hostLabel: '',
        deploymentId: '',
        deploymentName: '',
        startedAt: mtimeMs,
        endedAt: mtimeMs,
        closedCleanly: false,
        damaged: true,
        warnings: [err.message],
      };
    }
  }

  private async readMeta(id: string): Promise<Meta> {
    let text: string;
    try {
      text = await readFile(this.metaPath(id), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { metaVersion: 1, annotations: [] };
      throw new Error(`Cannot read ${this.metaPath(id)}: ${(err as Error).message}`, { cause: err });
    }
    const parsed = metaSchema.safeParse(safeJson(text));
    if (!parsed.success)
      throw new Error(
        `${this.metaPath(id)} is not a valid session sidecar (${parsed.error.issues[0]?.message ?? 'invalid'}); delete or repair it.`,
      );
    return parsed.data;
  }

  private updateMeta(id: string, change: (m: Meta) => Meta): Promise<void> {
    const prev = this.metaLocks.get(id) ?? Promise.resolve();
    const next = prev
      .catch(() => undefined)
      .then(async () => {
        const m = change(await this.readMeta(id));
        const tmp = `${this.metaPath(id)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
        await writeFile(tmp, JSON.stringify(m, null, 1) + '\n', { mode: 0o600 });
        await rename(tmp, this.metaPath(id));
      });
    this.metaLocks.set(id, next);
    return next.finally(() => {
      if (this.metaLocks.get(id) === next) this.metaLocks.delete(id);
    });
  }
}

/**
 * A note as it is stored: trimmed, checked, and with secrets removed (an operator pasting a command line with its
 * --api-key into a note is the usual way one gets there).
 */
export function noteText(text: string, ts: number): string {
  const clean = text.trim();
  if (!clean || clean.length > MAX_NOTE)
    throw new RangeError(`An annotation must be 1…${MAX_NOTE} characters, got ${clean.length}`);
  if (!Number.isFinite(ts)) throw new RangeError(`An annotation needs a time (epoch ms), got ${ts}`);
  return redactSecrets(clean);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function checkId(id: string): string {
  if (!ID_OK.test(id)) throw new RangeError(`Not a session id: ${JSON.stringify(id)}`);
  return id;
}

function annotationEvent(rec: Recording, a: Annotation): AppEvent {
  return {
    id: a.id,
    ts: a.ts,
    kind: 'annotation',
    severity: 'info',
    title: a.text,
    deploymentId: rec.header.deployment.id,
    hostId: rec.header.host.id,
  };
}
