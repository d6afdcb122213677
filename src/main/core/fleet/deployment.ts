// What a feature service may ask of an open deployment, whether it is watched live (live-deployment.ts: links
// and a monitor per host) or read from a file (recorded-deployment.ts). Services resolve an id to one of these
// through the registry (deployment-registry.ts) and never ask which kind it is: a recording answers the same
// readings from its file, at the review's cursor, and refuses actions itself with its own message.
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
import type { ApiError } from '../api-error';
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

export interface Deployment {
  readonly id: string;
  /** The host it was opened from (a fleet's origin). */
  readonly host: HostConfig;
  readonly config: DeploymentConfig;
  /** What fleet discovery found; absent for a one-host deployment. */
  readonly fleet?: Fleet;
  readonly latest: Observation | undefined;
  readonly readings: DeploymentReadings;
  /** Its timeline, oldest first. */
  events(): readonly AppEvent[];
  /** The link to a host of the deployment (default: the origin's). */
  connection(hostId?: string): SshConnection;
  /** The one journal tail of a unit (on `hostId`, default the host of the service that runs it). */
  journalTail(unit: string, hostId?: string): UnitJournalTail;
  /** Every host with its link's state, origin first. */
  hostStates(): { host: HostConfig; connection: ConnectionStatus }[];
  /** Why `action` (a request name) cannot run on this deployment, or null when it can. */
  refusal(action: string): ApiError | null;
}
