// The monitors' /metrics scrapes as a restart or a roll reads them while it runs: the latest of each service
// (impact preview, the router's view before a worker goes down) and the next one to arrive (waiting for a
// drained worker to empty, for the router to report a worker healthy again). Every periodic read of a host is
// the monitor's; an action listens to it instead of scraping the endpoints a second time with its own caches.
import type { EventEmitter } from 'node:events';
import type { Role } from '@shared/domain';
import type { CoreHooks } from '../core-hooks';
import type { Exposition } from '../probes/exposition/types';

export interface ScrapeReading {
  /** When the monitor scraped it (the core's clock). */
  ts: number;
  exposition: Exposition;
}

/** One deployment's scrapes, by service key (scrapeKey). */
export interface ScrapeFeed {
  latest(service: string): ScrapeReading | undefined;
  /**
   * The next scrape of `service` to arrive after this call; undefined when none arrives within twice the
   * service's scrape cadence as seen so far (a service that is down is not scraped: the caller says so).
   */
  next(service: string): Promise<ScrapeReading | undefined>;
}

/**
 * The feed of a roll run where no monitor runs (the CLI's fleet roll, which discovers the fleet outside the
 * app): the router is then read from its control plane (GET /workers, /readiness) alone.
 */
export const NO_MONITOR: ScrapeFeed = { latest: () => undefined, next: async () => undefined };

/** A service's key among the scrapes: its id. */
export function scrapeKey(s: { id?: string; role: Role }): string {
  // A one-host deployment's services have no id yet: its role names its one service. Remove once every
  // service carries an id.
  return s.id ?? s.role;
}

/** How long `next` waits when a service's cadence is not known yet, and its bounds otherwise (real time). */
const FIRST_WAIT_MS = 5_000;
const MIN_WAIT_MS = 1_000;
const MAX_WAIT_MS = 30_000;
/** Waiters per deployment and service, bounded so a stuck caller cannot grow the set. */
const MAX_WAITERS = 64;

interface Entry {
  latest?: ScrapeReading;
  /** Real time between the last two scrapes that arrived, ms. */
  gapMs?: number;
  arrivedAt?: number;
  waiters: Set<(r: ScrapeReading | undefined) => void>;
}

/** Keeps what the core's monitors scrape, per open deployment; closed deployments are forgotten. */
export class MonitorScrapes {
  private readonly byDeployment = new Map<string, Map<string, Entry>>();
  private readonly offs: Array<() => void> = [];

  constructor(hooks: Pick<EventEmitter<CoreHooks>, 'on' | 'off'>) {
    const onScrape = (e: CoreHooks['scrape'][0]): void => this.arrived(e);
    const onClosed = ({ deploymentId }: { deploymentId: string }): void => this.forget(deploymentId);
    hooks.on('scrape', onScrape);
    hooks.on('closed', onClosed);
    this.offs.push(
      () => hooks.off('scrape', onScrape),
      () => hooks.off('closed', onClosed),
    );
  }

  /** The feed of one deployment. */
  of(deploymentId: string): ScrapeFeed {
    return {
      latest: (service) => this.byDeployment.get(deploymentId)?.get(service)?.latest,
      next: (service) => this.next(deploymentId, service),
    };
  }

  dispose(): void {
    for (const off of this.offs.splice(0)) off();
    this.byDeployment.clear();
  }

  private entry(deploymentId: string, service: string): Entry {
    let m = this.byDeployment.get(deploymentId);
    if (!m) this.byDeployment.set(deploymentId, (m = new Map()));
    let e = m.get(service);
    if (!e) m.set(service, (e = { waiters: new Set() }));
    return e;
  }

  private arrived(e: CoreHooks['scrape'][0]): void {
    const entry = this.entry(e.deploymentId, scrapeKey(e));
    const now = Date.now();
    if (entry.arrivedAt !== undefined) entry.gapMs = now - entry.arrivedAt;
    entry.arrivedAt = now;
    entry.latest = { ts: e.ts, exposition: e.exposition };
    const waiters = [...entry.waiters];
    entry.waiters.clear();
    for (const w of waiters) w(entry.latest);
  }

  private next(deploymentId: string, service: string): Promise<ScrapeReading | undefined> {
    const entry = this.entry(deploymentId, service);
    const waitMs =
      entry.gapMs === undefined
        ? FIRST_WAIT_MS
        : Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, 2 * entry.gapMs));
    return new Promise((resolve) => {
      if (entry.waiters.size >= MAX_WAITERS) {
        resolve(undefined);
        return;
      }
      const timer = setTimeout(() => {
        entry.waiters.delete(done);
        resolve(undefined);
      }, waitMs);
      timer.unref?.();
      const done = (r: ScrapeReading | undefined): void => {
        clearTimeout(timer);
        resolve(r);
      };
      entry.waiters.add(done);
    });
  }

  private forget(deploymentId: string): void {
    const m = this.byDeployment.get(deploymentId);
    if (!m) return;
    this.byDeployment.delete(deploymentId);
    // A waiter of a closed deployment learns at once that no scrape comes.
    for (const e of m.values()) {
      const waiters = [...e.waiters];
      e.waiters.clear();
      for (const w of waiters) w(undefined);
    }
  }
}
