// What the core gives a feature service, as narrow interfaces rather than the concrete Core: each service
// names the parts it uses (a `Pick` of ServiceHost in its own file), compose.ts hands it the Core, and a
// test hands it a fake with no SSH behind it. Deployments are reached only through the registry, so a
// service never tells a live deployment from a recorded one.
import type { EventEmitter } from 'node:events';
import type { ApiEvents, EventName } from '@shared/contract';
import type { AppEvent, DeploymentConfig, HostConfig, Observation } from '@shared/domain';
import type { Clock } from '../clock';
import type { CoreHooks } from '../core-hooks';
import type { Deployment } from '../deployment/deployment';
import type { DeploymentLookup } from '../deployment/deployment-registry';
import type { SshConnection } from '../ssh/connection';
import type { UnitJournalTail } from '../journal/unit-tail';

/** A timeline entry as a service writes it: the timeline gives it its id (unless set) and deployment. */
export type TimelineEntry = Omit<AppEvent, 'id' | 'deploymentId'> & { id?: string };

/** The API's events as an emitter's map (the core is an EventEmitter of it; a test may use one too). */
export type ApiEventMap = { [K in EventName]: [ApiEvents[K]] };

/** Pushes one API event to every client, typed by the contract's event map. */
export type ApiEventSink = Pick<EventEmitter<ApiEventMap>, 'emit'>;

/** Hears the API events other services push (the review service waits for a recording to stop). */
export type ApiEventSource = Pick<EventEmitter<ApiEventMap>, 'on'>;

/**
 * A live deployment's parts reached by id, as the recording and dashboard services still read them (their
 * internals are being reworked elsewhere); every other service resolves `deployments` and asks the
 * `Deployment`. Each throws ApiError `unknown-deployment` for an id the core does not watch.
 */
export interface LiveDeploymentAccess {
  deploymentOf(deploymentId: string): {
    host: HostConfig;
    deployment: DeploymentConfig;
    latest?: Observation;
  };
  connectionOf(deploymentId: string, hostId?: string): SshConnection;
  journalTail(deploymentId: string, unit: string, hostId?: string): UnitJournalTail;
  liveDeployment(deploymentId: string): Deployment;
  /** The timelines' time, as a number (the same as `clock.now()`). */
  readonly now: number;
}

/** Everything a service may be given; each takes only the `Pick` it needs. */
export interface ServiceHost extends ApiEventSink {
  /** Every open deployment, live and recorded. */
  readonly deployments: DeploymentLookup;
  /** Internal notifications: scrapes, opened/closed deployments, observations, GPU readings. */
  readonly hooks: Pick<EventEmitter<CoreHooks>, 'on' | 'off'>;
  /** The time the deployments' timelines are on. */
  readonly clock: Pick<Clock, 'now'>;
  /**
   * Adds an event to a deployment's timeline and pushes it; throws ApiError `unknown-deployment` when it
   * is not open.
   */
  addEvent(deploymentId: string, e: TimelineEntry): AppEvent;
}
