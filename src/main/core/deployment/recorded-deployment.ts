// A deployment read from a recording: the same `DeploymentView` as the live one (live-deployment.ts), so a
// review answers what a service reads of a deployment — its config, its fleet, its hosts with their links, its
// state at a moment, its charts, catalogue and journal — from the file. It has no control to offer (no SSH link
// to run a command or follow a journal on), so there is nothing here to refuse: the registry's `live()` says
// that a recording cannot act.
import { basename } from 'node:path';
import { randomBytes } from 'node:crypto';
import type {
  DashboardSnapshot,
  JournalAroundArgs,
  JournalAroundResult,
  JournalEntry,
  JournalFollowArgs,
  JournalFollowResult,
  SeriesQuery,
  SeriesResult,
  SignalInfo,
} from '@shared/contract';
import type {
  AppEvent,
  ConnectionStatus,
  DeploymentConfig,
  HostConfig,
  Observation,
  Role,
} from '@shared/domain';
import type { Fleet } from '@shared/fleet';
import { journalAround } from '../journal/around';
import { roleOf, type ReviewData } from '../review/review-data';
import type { LoadedReview } from '../review/load-review';
import { observationAt, snapshotAt } from '../review/state-at';
import { catalogFor, expectedMetrics } from '../signals/catalog';
import { groupOf } from '../signals/signal-history';
import { GPU_GROUP, gpuIndices } from '../review/host-columns';
import { NVIDIA_SMI_COMMAND } from '../probes/gpu';
import type { JournalLine } from '../recording/types';
import { parseSource } from '../recording/fleet-targets';
import { ApiError } from '../api-error';
import type { DeploymentReadings, DeploymentView } from './deployment';

/** Longest a zoomed-in chart waits for the full detail of a review opened from its overview. */
const FULL_WAIT_MS = 60_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref?.());

export interface RecordedDeploymentOptions {
  id: string;
  /** The recording's display name (the sidecar's rename wins over the header's). */
  name: string;
  /** The recording as loaded (its data is replaced in place when the full read follows an overview). */
  loaded: LoadedReview;
  /** The file, named in the journal's "command". */
  path: string;
  /** The review's cursor: the moment `latest` and `hostStates()` describe. */
  cursor: () => number;
  /** The recorded events (connection changes among them), oldest first. */
  events: () => readonly AppEvent[];
}

export class RecordedDeployment implements DeploymentView {
  readonly id: string;
  readonly host: HostConfig;
  readonly config: DeploymentConfig;
  readonly fleet?: Fleet;
  private readonly hosts: HostConfig[];
  readonly readings: DeploymentReadings;

  constructor(private readonly opts: RecordedDeploymentOptions) {
    const h = opts.loaded.data.header;
    this.id = opts.id;
    // Never 'demo': a recording of the demo is not the demo (no fault switches, no auto-open). What makes it a
    // review is summary.review; the recorded kind is in review.recordedHost.
    this.host = asRecorded(h.host);
    this.config = { id: opts.id, name: opts.name, services: h.deployment.services };
    if (h.fleet) {
      this.fleet = h.fleet.fleet;
      this.hosts = h.fleet.hosts.map(asRecorded);
    } else this.hosts = [this.host];
    this.readings = {
      catalog: () => this.catalog(),
      series: (q) => this.series(q),
      dashboard: () => this.dashboard(),
      journalAround: (a) => this.journalAround(a),
      followJournal: (a) => this.followJournal(a),
    };
  }

  /** The full read replaces the overview's data on the same object: always the current one. */
  private get data(): ReviewData {
    return this.opts.loaded.data;
  }

  get latest(): Observation {
    return observationAt(this.data, this.id, this.host.id, this.opts.cursor());
  }

  events(): readonly AppEvent[] {
    return this.opts.events();
  }

  /**
   * Every host with its link as it was at the cursor: the state when recording began (format 1.4's header),
   * then each recorded connection event of that host up to the cursor.
   */
  hostStates(): { host: HostConfig; connection: ConnectionStatus }[] {
    const at = this.opts.cursor();
    const start = new Map(this.data.header.fleet?.links.map((l) => [l.host, l.connection]) ?? []);
    const last = new Map<string, AppEvent>();
    for (const e of this.opts.events()) {
      if (e.ts > at) break;
      if (e.kind === 'connection' && e.hostId) last.set(e.hostId, e);
    }
    return this.hosts.map((host) => {
      const e = last.get(host.id);
      return { host, connection: e ? linkFromEvent(e) : (start.get(host.id) ?? { state: 'idle' }) };
    });
  }

  private catalog(): SignalInfo[] {
    const data = this.data;
    return catalogFor(data.roles, gpuIndices(data.table), data.table.kvRanks());
  }

  private async series(q: SeriesQuery): Promise<SeriesResult> {
    const loaded = this.opts.loaded;
    // A window the overview cannot fill at the resolution asked waits for the full detail (bounded).
    if (loaded.detail === 'overview' && overviewTooCoarse(loaded.data, q)) {
      loaded.needFull();
      await Promise.race([loaded.full, sleep(FULL_WAIT_MS)]);
    }
    const data = loaded.data;
    const answer = data.table.series(q, data.notExposed, (key) =>
      groupOf(key) === GPU_GROUP
        ? [NVIDIA_SMI_COMMAND]
        : expectedMetrics(groupOf(key) as Role, key.slice(key.indexOf('.') + 1)),
    );
    // The first history asked of a review is its first screen's (the overview's charts): once it is drawn,
    // the full detail may take the core.
    loaded.firstScreenServed();
    return answer;
  }

  private dashboard(): DashboardSnapshot {
    return snapshotAt(this.data, this.opts.events(), this.id, this.opts.cursor());
  }

  private async journal(): Promise<JournalLine[]> {
    return this.opts.loaded.journal.catch((err: Error) => {
      throw new ApiError(
        'journal-failed',
        `the recorded journal could not be read: ${err.message}`,
        'Open the recording again; the review cache may have been removed.',
      );
    });
  }

  private async journalAround(a: JournalAroundArgs): Promise<JournalAroundResult> {
    const journal = await this.journal();
    const keep = this.lineFilter(a.role, a.worker);
    return journalAround(
      {
        read: async (fromMs, toMs, max) => {
          let lo = 0;
          let hi = journal.length;
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (journal[mid].ts < fromMs) lo = mid + 1;
            else hi = mid;
          }
          const lines: JournalEntry[] = [];
          for (let k = lo; k < journal.length && journal[k].ts <= toMs && lines.length < max; k++)
            if (keep(journal[k])) lines.push(this.entry(journal[k], k));
          return { lines, command: `recorded journal in ${basename(this.opts.path)}` };
        },
      },
      a.ts,
      a.spanMs ?? 20_000,
    );
  }

  private async followJournal(a: JournalFollowArgs): Promise<JournalFollowResult> {
    const svc = this.config.services.find((s) =>
      a.worker !== undefined ? (s.id ?? s.role) === a.worker : s.role === a.role,
    );
    if (!svc)
      throw a.worker !== undefined
        ? new ApiError(
            'unknown-worker',
            `${this.config.name} has no worker or router "${a.worker}"`,
            `Its workers are ${this.config.services.map((s) => s.id ?? s.role).join(', ')}.`,
          )
        : new ApiError('unknown-role', `${this.config.name} has no ${a.role} service`);
    const unit = svc.unit;
    const journal = await this.opts.loaded.journal;
    const cursor = this.opts.cursor();
    const keep = this.lineFilter(a.role, a.worker);
    const lines = journal.filter((l) => l.ts <= cursor && keep(l));
    return {
      followId: `rec-${randomBytes(8).toString('hex')}`,
      unit,
      command: `recorded journal of ${unit} up to ${new Date(cursor).toISOString()} (a recording: not followed)`,
      lines: lines.slice(-(a.lines ?? 200)).map((l, i) => this.entry(l, i)),
    };
  }

  /** A fleet worker's lines (every node of it) when one is named, else the role's (or all). */
  private lineFilter(role: Role | undefined, worker: string | undefined): (l: JournalLine) => boolean {
    // A name that is no service's id (a role's) reads the role's lines.
    if (worker !== undefined && this.config.services.some((s) => s.id === worker))
      return (l) => parseSource(l.role).scope === worker;
    return (l) => !role || roleOf(l.role) === role;
  }

  /** A recorded line as the API gives it; a fleet's carries the host and node rank it was read on, as live. */
  private entry(l: JournalLine, k: number): JournalEntry {
    const e = entry(l, k);
    const src = parseSource(l.role);
    if (src.scope === undefined) return e;
    const svc = this.config.services.find((s) => s.id === src.scope);
    const units = svc?.units ?? (svc ? [{ hostId: svc.hostId, unit: svc.unit, nodeRank: 0 }] : []);
    const u = units.find((x) => x.nodeRank === src.nodeRank);
    return {
      ...e,
      ...(u ? { host: u.hostId } : {}),
      ...(units.length > 1 ? { nodeRank: src.nodeRank } : {}),
    };
  }
}

function asRecorded(h: { id: string; label: string; hostname?: string; alias?: string }): HostConfig {
  return {
    id: h.id,
    label: h.label,
    kind: 'ssh',
    ...(h.hostname ? { hostname: h.hostname } : {}),
    ...(h.alias ? { alias: h.alias } : {}),
  };
}

/** The link state a recorded connection event says (core.ts words them by state). */
function linkFromEvent(e: AppEvent): ConnectionStatus {
  if (e.severity === 'info') return { state: 'connected', since: e.ts };
  if (e.severity === 'error') return { state: 'failed', reason: e.title, at: e.ts, hint: e.detail };
  return { state: 'stale', since: e.ts, reason: e.title };
}

/** True when the overview holds fewer than one row per two points asked in the window of `q`. */
function overviewTooCoarse(data: ReviewData, q: SeriesQuery): boolean {
  const stepMs = data.header.overview?.stepMs ?? 0;
  if (!stepMs) return false;
  const from = Math.max(q.fromMs ?? data.firstTs, data.firstTs);
  const to = Math.min(q.toMs ?? data.lastTs, data.lastTs);
  return (to - from) / stepMs < q.maxPoints / 2;
}

function entry(l: JournalLine, k: number): JournalEntry {
  return {
    cursor: `rec-${k}`,
    ts: l.ts,
    priority: l.priority,
    message: l.message,
    unit: l.unit,
    identifier: l.unit.replace(/\.service$/, ''),
  };
}
