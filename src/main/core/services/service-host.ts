// What the core gives a feature service, as narrow interfaces rather than the concrete Core: each service
// names the parts it uses (a `Pick` of ServiceHost in its own file), compose.ts hands it the Core, and a
// test hands it a fake with no SSH behind it. Deployments are reached only through the registry, so a
// service never tells a live deployment from a recorded one.
import type { EventEmitter } from 'node:events';
import type { ApiEvents, EventName } from '@shared/contract';
import type { AppEvent } from '@shared/domain';
import type { Clock } from '../clock';
import type { CoreHooks } from '../core-hooks';
import type { DeploymentLookup } from '../fleet/deployment-registry';

/** A timeline entry as a service writes it: the timeline gives it its id (unless set) and deployment. */
export type TimelineEntry = Omit<AppEvent, 'id' | 'deploymentId'> & { id?: string };

/** Pushes one API event to every client, typed by the contract's event map. */
export interface ApiEventSink {
  emit<K extends EventName>(name: K, payload: ApiEvents[K]): boolean;
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
