// What a feature service may ask of an open deployment. Reading and control are two interfaces, as a storage's
// querier and appender are: every open deployment is a `DeploymentView` — the one watched live
// (live-deployment.ts) and the one read from a file (recorded-deployment.ts) alike — and only a live one is a
// `Deployment`, with links to its hosts and the journal tails they carry. A recording has no control to
// refuse: a service that needs a link gets it from the registry's `live(id, action)` (deployment-registry.ts),
// which answers a live deployment or says once that a recording cannot do that.
import type {
  DashboardSnapshot,
  JournalAroundArgs,
  JournalAroundResult,
  JournalFollowArgs,
  JournalFollowResult,
  SeriesQuery,
  SeriesResult,
  SignalInfo,
} from '@shared/contract';
import type { AppEvent, ConnectionStatus, DeploymentConfig, HostConfig, Observation } from '@shared/domain';
import type { Fleet } from '@shared/fleet';
import type { SshConnection } from '../ssh/connection';
import type { UnitJournalTail } from '../journal/unit-tail';

/** What the deployment's screens read: now for a live deployment, at the review's cursor for a recording. */
export interface DeploymentReadings {
  catalog(): SignalInfo[];
  series(q: SeriesQuery): Promise<SeriesResult>;
  dashboard(): DashboardSnapshot;
  journalAround(args: JournalAroundArgs): Promise<JournalAroundResult>;
  /** The journal of a role's (or a fleet worker's) units up to now, followed from here on where it can be. */
  followJournal(args: JournalFollowArgs): Promise<JournalFollowResult>;
}

/** An open deployment as it can be read: its configuration, fleet, events and readings over time. */
export interface DeploymentView {
  readonly id: string;
  /** The host it was opened from (a fleet's origin). */
  readonly host: HostConfig;
  readonly config: DeploymentConfig;
  /** What fleet discovery found; absent in a recording made before every deployment was opened by it. */
  readonly fleet?: Fleet;
  readonly latest: Observation | undefined;
  readonly readings: DeploymentReadings;
  /** Its timeline, oldest first. */
  events(): readonly AppEvent[];
  /** Every host with its link's state (now, or at a recording's cursor), origin first. */
  hostStates(): { host: HostConfig; connection: ConnectionStatus }[];
}

/** A deployment the app watches live: a view, and control of its hosts. */
export interface Deployment extends DeploymentView {
  /** Every live deployment is opened by fleet discovery (a 1P1D host is a fleet of one). */
  readonly fleet: Fleet;
  /** The link to a host of the deployment (default: the origin's). */
  connection(hostId?: string): SshConnection;
  /** The one journal tail of a unit (on `hostId`, default the host of the service that runs it). */
  journalTail(unit: string, hostId?: string): UnitJournalTail;
}
