// A deployment read from a recording: the same `Deployment` interface as the live one (live-deployment.ts), so a
// review answers what a service asks of a deployment — its config, its fleet, its hosts with their links, its
// state at a moment — from the file. It is read-only: there is no SSH link to run a command or follow a journal
// on, and asking for one is refused with the reason and what to do instead.
import type { AppEvent, ConnectionStatus, DeploymentConfig, HostConfig, Observation } from '@shared/domain';
import type { Fleet } from '@shared/fleet';
import type { SshConnection } from '../ssh/connection';
import type { UnitJournalTail } from '../journal/unit-tail';
import type { ReviewData } from '../review/review-data';
import { observationAt } from '../review/state-at';
import { ApiError } from '../api-error';
import type { Deployment } from './live-deployment';

export interface RecordedDeploymentOptions {
  id: string;
  /** The recording's display name (the sidecar's rename wins over the header's). */
  name: string;
  data: ReviewData;
  /** The review's cursor: the moment `latest` and `hostStates()` describe. */
  cursor: () => number;
  /** The recorded events (connection changes among them), oldest first. */
  events: () => readonly AppEvent[];
}

export class RecordedDeployment implements Deployment {
  readonly id: string;
  readonly host: HostConfig;
  readonly config: DeploymentConfig;
  readonly fleet?: Fleet;
  private readonly hosts: HostConfig[];

  constructor(private readonly opts: RecordedDeploymentOptions) {
    const h = opts.data.header;
    this.id = opts.id;
    // Never 'demo': a recording of the demo is not the demo (no fault switches, no auto-open). What makes it a
    // review is summary.review; the recorded kind is in review.recordedHost.
    this.host = asRecorded(h.host);
    this.config = { id: opts.id, name: opts.name, services: h.deployment.services };
    if (h.fleet) {
      this.fleet = h.fleet.fleet;
      this.hosts = h.fleet.hosts.map(asRecorded);
    } else this.hosts = [this.host];
  }

  get latest(): Observation {
    return observationAt(this.opts.data, this.id, this.host.id, this.opts.cursor());
  }

  connection(hostId?: string): SshConnection {
    throw this.refuse(`an SSH link to ${hostId ?? this.host.label}`);
  }

  journalTail(unit: string): UnitJournalTail {
    throw this.refuse(`following the journal of ${unit}`);
  }

  /**
   * Every host with its link as it was at the cursor: the state when recording began (format 1.4's header),
   * then each recorded connection event of that host up to the cursor.
   */
  hostStates(): { host: HostConfig; connection: ConnectionStatus }[] {
    const at = this.opts.cursor();
    const start = new Map(this.opts.data.header.fleet?.links.map((l) => [l.host, l.connection]) ?? []);
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

  /** Why an action cannot run on a recording, as the API answers it. */
  refuse(what: string): ApiError {
    return new ApiError(
      'review-read-only',
      `${what} is not available in review: "${this.config.name}" is a recording, not a live deployment`,
      'Open the live deployment from the start screen to act on it.',
    );
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
