// Records every monitoring session (on by default) to one file per session: parsed scrapes, unit state and
// health changes, timeline events (alerts, actions, restart steps, annotations), GPU readings, each poll's
// scrape durations and /server_info capacity (host-series.ts), and the journal lines of the monitored units,
// heard from the monitor's tail of each unit. A fleet is recorded whole (format 1.4): each worker its own target,
// each host's GPUs their own, every unit's journal on its own host, and the hosts and discovery's findings in the
// header. A recording that fails (disk full) stops with a clear message; monitoring goes on.
import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type {
  ActiveRecording,
  ExportFormat,
  ExportResult,
  RecordingRequests,
  RecordingSettings,
  RecordingStatus,
  SessionInfoDto,
} from '@shared/api/recording';
import type { AppEvent, DeploymentConfig, HostConfig, Observation, UnitState } from '@shared/domain';
import type { JournalEntry } from '@shared/contract';
import type { ApiEventSource, LiveDeploymentAccess, ServiceHost } from './service-host';
import type { RecordingWriter } from '../recording/writer';
import { noteText, SessionStore } from '../recording/session-store';
import { writeCsvFile } from '../recording/export-csv';
import { writeChunks } from '../recording/export-util';
import { buildReviewData } from '../review/review-data';
import { signalsCsvChunks } from '../review/signals-csv';
import { exportOpenMetrics, writeOpenMetricsFile } from '../recording/export-openmetrics';
import { systemctlCatCommand } from '../discovery/commands';
import { httpGet } from '../ssh/http-agent';
import type { Clock } from '../clock';
import { writeIncidentBundle } from '../recording/incident-bundle';
import { GPU_TARGET, gpuExposition, MONITOR_TARGET, monitorExposition } from '../recording/host-series';
import type { JournalSubscription } from '../journal/unit-tail';
import { ApiError } from '../api-error';
import type { SettingCell } from '../config/setting-cell';
import { REVIEW_OVERVIEW } from '../review/overview-table';
import { hostGpuTarget, unitSource, workerTarget, type RecordedFleet } from '../recording/fleet-targets';

export interface RecordingServiceOptions {
  /** Folder holding the session files. */
  dir: string;
  /** Folder exports are written to. */
  exportDir: string;
  /** This run's overrides of the saved settings (a one-shot CLI command records nothing). */
  settings?: Partial<RecordingSettings>;
  /** The saved settings (the settings file): read at start, written when the operator changes them. */
  store?: SettingCell<RecordingSettings>;
  appVersion: string;
  /** How often the recorder wants new journal lines (ms); the unit's tail may read more often for others. */
  journalIntervalMs?: number;
  /** The clock a deployment's host stamps its journal with (the demo's runs faster than real time). */
  clockFor?: (host: HostConfig) => Clock;
}

interface Live {
  deploymentId: string;
  sessionId: string | null;
  path: string | null;
  writer: RecordingWriter | null;
  state: ActiveRecording['state'];
  error?: string;
  journals: JournalSubscription[];
  lastUnit: Map<string, string>;
  lastHealth: Map<string, string>;
  /** A fleet: targets and sources are named per worker and host (fleet-targets.ts). */
  fleet: boolean;
  /**
   * What arrived while the session's file was being created, written as soon as it is: the first scrapes of a
   * session come in the same second as its open, and creating the file can take longer than that on a busy
   * machine. Null when there is nothing to wait for (recording, off or stopped).
   */
  pending: ((w: RecordingWriter) => void)[] | null;
}

/** Records kept while a session's file is created: a few minutes of a fleet's rounds; beyond, the oldest go. */
const MAX_PENDING = 4096;

export const DEFAULT_RECORDING_SETTINGS: RecordingSettings = { enabled: true, maxTotalBytes: 2 * 1024 ** 3 };
const MAX_PROBLEMS = 20;

/** What the recorder is given: the hooks it records, the timeline it writes problems to, pushes, and the links. */
export type RecordingHost = Pick<ServiceHost, 'hooks' | 'emit' | 'addEvent'> &
  ApiEventSource &
  Pick<LiveDeploymentAccess, 'deploymentOf' | 'connectionOf' | 'journalTail' | 'liveDeployment' | 'now'>;

export class RecordingService {
  readonly store: SessionStore;
  private settings: RecordingSettings;
  private readonly live = new Map<string, Live>();
  private readonly closing = new Set<Promise<void>>();
  private readonly problems: { at: number; message: string }[] = [];

  constructor(
    private readonly core: RecordingHost,
    private readonly opts: RecordingServiceOptions,
  ) {
    this.store = new SessionStore(opts.dir);
    this.settings = { ...DEFAULT_RECORDING_SETTINGS, ...opts.store?.get(), ...opts.settings };
    opts.store?.onChange((saved) => {
      this.settings = { ...saved, ...opts.settings };
      void this.enforceRetention().then(() => this.publish());
    });
    core.hooks.on('opened', (e) => void this.begin(e.deploymentId, e.host, e.deployment));
    core.hooks.on('closed', (e) => {
      const p = this.end(e.deploymentId);
      this.closing.add(p);
      void p.finally(() => this.closing.delete(p));
    });
    // A fleet's worker is its own target (`decode@decode-1`), as it is its own series live (format 1.4).
    core.hooks.on('scrape', (e) =>
      this.write(e.deploymentId, (w) =>
        w.appendScrape(e.ts, e.id === undefined ? e.role : workerTarget(e.role, e.id), e.exposition),
      ),
    );
    core.hooks.on('gpu', (e) => {
      if (e.status.gpus.length === 0 || e.status.ts === null) return;
      const ts = e.status.ts;
      const exposition = gpuExposition(e.status.gpus);
      this.write(e.deploymentId, (w, l) =>
        w.appendScrape(ts, l.fleet ? hostGpuTarget(e.hostId) : GPU_TARGET, exposition),
      );
    });
    core.hooks.on('observed', (o) => this.write(o.deploymentId, (w, l) => this.observed(w, l, o)));
    core.on('event', (e: AppEvent) => {
      if (e.deploymentId) this.write(e.deploymentId, (w) => w.appendEvent(e));
    });
  }

  /** Writes a record of the deployment's session now, or once its file exists; nothing when none is recorded. */
  private write(deploymentId: string, record: (w: RecordingWriter, l: Live) => void): void {
    const l = this.live.get(deploymentId);
    if (!l) return;
    if (l.writer) return record(l.writer, l);
    if (!l.pending) return;
    if (l.pending.length >= MAX_PENDING) l.pending.shift();
    l.pending.push((w) => record(w, l));
  }

  /** A poll's own records: the monitor's figures, and each unit's state and health when they change. */
  private observed(w: RecordingWriter, l: Live, o: Observation): void {
    w.appendScrape(o.ts, MONITOR_TARGET, monitorExposition(o));
    const unit = (source: string, u: UnitState): void => {
      // Store changes only: a steady unit costs nothing per poll.
      const key = JSON.stringify([u.activeState, u.subState, u.mainPid, u.nRestarts, u.result]);
      if (l.lastUnit.get(source) === key) return;
      l.lastUnit.set(source, key);
      // The writer redacts ExecStart (--api-key and friends), event texts and journal lines itself.
      w.appendUnitState(o.ts, source, u);
    };
    for (const s of o.services) {
      const source = s.id === undefined ? s.role : workerTarget(s.role, s.id);
      if (s.systemd) unit(source, s.systemd);
      // A multi-node worker's other nodes: each unit's own state, read on its own host.
      for (const u of s.units ?? [])
        if (u.nodeRank > 0 && u.systemd && s.id !== undefined)
          unit(unitSource(s.role, s.id, u.nodeRank), u.systemd);
      if (s.health) {
        const key = `${s.health.ok}|${s.health.status}|${s.health.detail}`;
        if (l.lastHealth.get(source) !== key) {
          l.lastHealth.set(source, key);
          w.appendHealth(o.ts, source, s.health);
        }
      }
    }
  }

  handlers(): RecordingRequests {
    return {
      getRecordingStatus: async () => this.status(),
      setRecordingSettings: async (a) => {
        this.settings = { ...this.settings, ...a };
        if (this.opts.store) await this.opts.store.set({ ...this.opts.store.get(), ...a });
        if (a.maxTotalBytes !== undefined) await this.enforceRetention();
        this.publish();
        return this.status();
      },
      listSessions: async () => (await this.store.list()).map((s): SessionInfoDto => ({ ...s })),
      renameSession: (a) => this.store.rename(a.id, a.name),
      annotateSession: async (a) => {
        const l = [...this.live.values()].find((x) => x.sessionId === a.id && x.writer);
        if (!l) {
          await this.store.annotate(a.id, a.ts, a.text);
          return;
        }
        // A note on the session being recorded goes onto the live timeline, whose every event the recorder
        // writes (redacted): through the store as well, it would be in the file twice.
        this.core.addEvent(l.deploymentId, {
          id: `note-${randomBytes(6).toString('hex')}`,
          ts: a.ts,
          kind: 'annotation',
          severity: 'info',
          title: noteText(a.text, a.ts),
        });
      },
      deleteSession: async (a) => {
        if (this.store.activeIds().includes(a.id))
          throw new ApiError(
            'recording-active',
            'this session is being recorded',
            'Close the deployment first.',
          );
        await this.store.delete(a.id);
      },
      exportSession: (a) => this.export(a.id, a.format, a.fromMs, a.toMs),
    };
  }

  status(): RecordingStatus {
    return {
      dir: this.opts.dir,
      settings: { ...this.settings },
      active: [...this.live.values()].map((l) => ({
        deploymentId: l.deploymentId,
        sessionId: l.sessionId,
        path: l.path,
        state: l.state,
        bytesWritten: l.writer?.stats.bytesWritten ?? 0,
        samples: l.writer?.stats.samples ?? 0,
        error: l.error,
      })),
      problems: [...this.problems],
    };
  }

  /** Closes every recording cleanly (app quit). */
  async shutdown(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.end(id)));
    await Promise.all([...this.closing]);
  }

  private async begin(deploymentId: string, host: HostConfig, deployment: DeploymentConfig): Promise<void> {
    const l: Live = {
      deploymentId,
      sessionId: null,
      path: null,
      writer: null,
      state: 'off',
      journals: [],
      lastUnit: new Map(),
      lastHealth: new Map(),
      fleet: deployment.services.some((s) => s.id !== undefined),
      pending: this.settings.enabled ? [] : null,
    };
    this.live.set(deploymentId, l);
    if (!this.settings.enabled) return this.publish();
    // The session starts now, with the records that come while its file is created (`pending`).
    const startedAt = this.core.now;
    try {
      await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
      const fleet = l.fleet ? this.fleetOf(deploymentId) : undefined;
      const { id, path, writer } = await this.store.start(
        {
          startedAt,
          host: { id: host.id, label: host.label, kind: host.kind, hostname: host.hostname },
          deployment,
          appVersion: this.opts.appVersion,
          ...(fleet ? { fleet } : {}),
        },
        // The overview (format 1.3) holds review's signals at its resolution, so a review opens at once from it.
        { overview: REVIEW_OVERVIEW },
      );
      if (this.live.get(deploymentId) !== l) {
        // Closed while the file was being created.
        await writer.close();
        return;
      }
      Object.assign(l, { sessionId: id, path, writer, state: 'recording' });
      writer.onError((err) => this.stopped(l, err));
      const waiting = l.pending ?? [];
      l.pending = null;
      for (const record of waiting) record(writer);
      this.followJournals(l, host, deployment);
      await this.enforceRetention();
    } catch (err) {
      this.stopped(l, err as Error);
    }
    this.publish();
  }

  private followJournals(l: Live, host: HostConfig, deployment: DeploymentConfig): void {
    const startedAt = this.core.now;
    // One clock for every record of a recording: the core's, which stamps scrapes, states and events. Journal
    // lines carry the host's own time; on a host whose clock runs at wall speed that is the same time line, but
    // the demo's clock runs `speed` times faster, and its stamps would land minutes after the scrapes around
    // them. Mapping each stamp back to the wall clock (rather than stamping lines when a poll receives them,
    // up to a poll interval late and all at once) keeps "the journal around this moment" true to the second.
    const hostClock = this.opts.clockFor?.(host);
    const toCore = (ms: number): number =>
      hostClock?.wallTimeOf ? Math.round(hostClock.wallTimeOf(ms)) + (this.core.now - Date.now()) : ms;
    // Every unit of every worker, on its own host: a multi-node worker's other nodes log too.
    const units = deployment.services.flatMap((s) =>
      s.id === undefined
        ? [{ source: s.role as string, unit: s.unit, hostId: undefined as string | undefined }]
        : (s.units ?? [{ hostId: s.hostId, unit: s.unit, nodeRank: 0 }])
            .filter((u) => u.unit !== '')
            .map((u) => ({ source: unitSource(s.role, s.id!, u.nodeRank), unit: u.unit, hostId: u.hostId })),
    );
    for (const s of units) {
      let tail;
      try {
        tail = this.core.journalTail(l.deploymentId, s.unit, s.hostId);
      } catch {
        // A unit no monitor follows (its host unreachable): the recording has no lines for it.
        continue;
      }
      const record = (lines: readonly JournalEntry[]): void => {
        for (const line of lines) {
          const ts = toCore(line.ts);
          // Lines of the backlog logged before this session belong to an earlier one.
          if (ts >= startedAt)
            l.writer?.appendJournal({
              ts,
              role: s.source,
              unit: s.unit,
              priority: line.priority,
              message: line.message,
            });
        }
      };
      // The tail keeps reading through link drops; a journal that cannot be read is shown by the dashboard,
      // and the recording just has no lines for it.
      const sub = tail.subscribe({ onLines: record }, { intervalMs: this.opts.journalIntervalMs ?? 2000 });
      l.journals.push(sub);
      // The backlog ends where the live lines begin: its part since the session started is recorded first.
      sub.backlog.then(record, () => undefined);
    }
  }

  /** The header's description of a fleet: every host, discovery's findings, each link as recording begins. */
  private fleetOf(deploymentId: string): RecordedFleet {
    const d = this.core.liveDeployment(deploymentId);
    const states = d.hostStates();
    return {
      hosts: states.map(({ host: h }) => ({
        id: h.id,
        label: h.label,
        kind: h.kind,
        ...(h.alias ? { alias: h.alias } : {}),
        ...(h.hostname ? { hostname: h.hostname } : {}),
      })),
      fleet: d.fleet,
      links: states.map((s) => ({ host: s.host.id, connection: s.connection })),
    };
  }

  private stopped(l: Live, err: Error): void {
    if (l.state === 'stopped') return;
    const message = `Recording stopped: ${err.message}. Monitoring goes on; free disk space or change the recordings folder (${this.opts.dir}), then reopen the deployment to record again.`;
    Object.assign(l, { state: 'stopped', error: message });
    for (const j of l.journals) j.dispose();
    l.writer = null;
    l.pending = null;
    try {
      this.core.addEvent(l.deploymentId, {
        ts: this.core.now,
        kind: 'info',
        severity: 'error',
        title: 'recording stopped',
        detail: message,
      });
    } catch {
      // The deployment is already closed: nothing to tell.
    }
    this.publish();
  }

  private async end(deploymentId: string): Promise<void> {
    const l = this.live.get(deploymentId);
    if (!l) return;
    this.live.delete(deploymentId);
    for (const j of l.journals) j.dispose();
    const w = l.writer;
    l.writer = null;
    if (w)
      await w
        .close()
        .catch((err: Error) =>
          this.problem(
            `closing the recording ${l.path ?? ''} failed: ${err.message}; the file is readable up to its last flush`,
          ),
        );
    this.publish();
  }

  /** Keeps a recorder problem for the UI (bounded) and pushes the status so it is shown at once. */
  private problem(message: string): void {
    this.problems.push({ at: this.core.now, message });
    if (this.problems.length > MAX_PROBLEMS) this.problems.splice(0, this.problems.length - MAX_PROBLEMS);
    this.publish();
  }

  private async enforceRetention(): Promise<void> {
    const active = this.store.activeIds();
    await this.store
      .enforceRetention(this.settings.maxTotalBytes, active[0])
      .catch((err: Error) =>
        this.problem(
          `could not delete old recordings to stay under the retention limit: ${err.message} (folder ${this.opts.dir})`,
        ),
      );
  }

  private async export(
    id: string,
    format: ExportFormat,
    fromMs?: number,
    toMs?: number,
  ): Promise<ExportResult> {
    await mkdir(this.opts.exportDir, { recursive: true, mode: 0o700 });
    const rec = await this.store.open(id);
    // Exports never overwrite: each gets the time it was made in its name.
    const base = join(
      this.opts.exportDir,
      `${id}-export-${new Date(this.core.now).toISOString().replace(/[:.]/g, '')}`,
    );
    let path: string;
    let redactions: number | undefined;
    if (format === 'csv') {
      path = `${base}.signals.csv`;
      await writeChunks(
        signalsCsvChunks(buildReviewData(rec).table, { fromMs, toMs }),
        path,
        'CSV export of the signals',
      );
    } else if (format === 'csv-raw') {
      path = `${base}.raw.csv`;
      await writeCsvFile(rec, { fromMs, toMs }, path);
    } else if (format === 'openmetrics') {
      path = `${base}.om.txt`;
      await writeOpenMetricsFile(rec, { fromMs, toMs }, path);
    } else {
      path = `${base}.incident.tar.gz`;
      const from = fromMs ?? rec.firstTs;
      const to = toMs ?? rec.lastTs;
      const extras = await this.liveExtras(rec.header.deployment.id);
      const info = await this.store.info(id);
      const r = await writeIncidentBundle(
        {
          recordingPath: this.store.pathOf(id),
          session: { id, name: info.name },
          unitFiles: extras.unitFiles,
          journal: rec.journal.filter((j) => j.ts >= from && j.ts <= to),
          snapshots: extras.snapshots.length
            ? extras.snapshots
            : [
                {
                  name: 'window-end.om.txt',
                  takenAt: to,
                  text: exportOpenMetrics(rec, { fromMs: Math.max(from, to - 60_000), toMs: to }),
                },
              ],
          window: { fromMs: from, toMs: to },
          note: extras.unitFiles.length
            ? undefined
            : 'Unit files were not included: the deployment was not connected when the bundle was made.',
        },
        path,
      );
      redactions = r.redactions;
    }
    return { path, fileName: basename(path), bytes: (await stat(path)).size, format, redactions };
  }

  /** Unit files and raw /metrics of a deployment that is open right now; empty when it is not. */
  private async liveExtras(deploymentId: string): Promise<{
    unitFiles: { unit: string; text: string }[];
    snapshots: { name: string; takenAt: number; text: string }[];
  }> {
    const unitFiles: { unit: string; text: string }[] = [];
    const snapshots: { name: string; takenAt: number; text: string }[] = [];
    let conn;
    let deployment;
    try {
      conn = this.core.connectionOf(deploymentId);
      deployment = this.core.deploymentOf(deploymentId).deployment;
    } catch {
      return { unitFiles, snapshots };
    }
    for (const s of deployment.services) {
      const cat = await conn
        .exec(systemctlCatCommand(s.unit), { timeoutMs: 10_000, maxBytes: 1024 * 1024 })
        .catch(() => null);
      if (cat?.exitCode === 0) unitFiles.push({ unit: s.unit, text: cat.stdout });
      if (!s.metricsUrl) continue;
      const res = await httpGet(conn.httpAgent(), s.metricsUrl, {
        timeoutMs: 5000,
        maxBytes: 16 * 1024 * 1024,
      }).catch(() => null);
      if (res?.status === 200)
        snapshots.push({ name: `${s.role}.metrics.txt`, takenAt: this.core.now, text: res.body });
    }
    return { unitFiles, snapshots };
  }

  private publish(): void {
    this.core.emit('recordingStatus', this.status());
  }
}
