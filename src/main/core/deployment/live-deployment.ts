// A deployment as the running app watches it: one SSH link per host (a one-host 1P1D deployment has one) and
// one DeploymentMonitor per reachable host, each polling that host's services. Its hosts are polled together on
// one round clock (every interval, on a fixed grid) and merged from every host's newest (merge-observations.ts)
// once per round — when every host polled this round has answered, or at the next round at the latest, so a
// slow host never holds the others back and a deployment emits exactly one observation per interval, however
// its hosts' polls are spread; one host is the same loop with one target. Feature services reach a deployment
// through the `Deployment` interface, not Core's internals.
import { EventEmitter } from 'node:events';
import type { AppEvent, ConnectionStatus, DeploymentConfig, HostConfig, Observation } from '@shared/domain';
import type { GpuStatus } from '@shared/contract';
import type { Fleet } from '@shared/fleet';
import type { Clock, ClockTimer } from '../clock';
import type { SshConnection } from '../ssh/connection';
import { DeploymentMonitor, type ScrapeEvent } from '../monitor/deployment-monitor';
import type { UnitJournalTail } from '../journal/unit-tail';
import { mergeFleetObservation } from './merge-observations';
import { ApiError } from '../api-error';
import type { Deployment, DeploymentReadings } from './deployment';

export type { Deployment } from './deployment';

/** One host of a deployment: its link, or why there is none (it could not be reached when the fleet opened). */
export interface DeploymentLink {
  host: HostConfig;
  conn: SshConnection | null;
  unreachable?: string;
}

export interface LiveDeploymentOptions {
  host: HostConfig;
  config: DeploymentConfig;
  links: DeploymentLink[];
  fleet: Fleet;
  clock: Clock;
  intervalMs?: number;
  gpuIntervalMs?: number;
  /** Its signals, charts and journal views (the dashboard's signal store reads them as they arrive). */
  readings?: () => DeploymentReadings;
  /** Its timeline (kept by the core). */
  events?: () => readonly AppEvent[];
}

interface Events {
  observation: [Observation];
  scrape: [ScrapeEvent & { hostId: string }];
  gpu: [{ hostId: string; status: GpuStatus }];
  status: [{ link: DeploymentLink; status: ConnectionStatus }];
}

interface Part {
  link: DeploymentLink;
  monitor: DeploymentMonitor | null;
  /** A fleet host's poll still running (a slow host is not polled again until it answers). */
  polling?: boolean;
}

export class LiveDeployment extends EventEmitter<Events> implements Deployment {
  readonly id: string;
  readonly host: HostConfig;
  readonly config: DeploymentConfig;
  readonly fleet: Fleet;
  private readonly parts: Part[];
  private merged: Observation | undefined;
  private readonly newest = new Map<string, Observation>();
  private readonly fresh = new Set<string>();
  private roundTimer: ClockTimer | null = null;
  /** The round whose merged observation is still to come (0: none). */
  private openRound = 0;
  private rounds = 0;
  /** Clock time the next round is due: a fixed grid, so late timers do not add up to a slower cadence. */
  private nextRoundAt = 0;
  private disposed = false;

  constructor(private readonly opts: LiveDeploymentOptions) {
    super();
    this.id = opts.config.id;
    this.host = opts.host;
    this.config = opts.config;
    this.fleet = opts.fleet;
    // Workers whose unit is unknown (host unreachable at discovery) are not polled anywhere.
    const polled: DeploymentConfig = {
      ...opts.config,
      services: opts.config.services.filter((s) => s.unit !== ''),
    };
    this.parts = opts.links.map((link) => ({
      link,
      monitor: link.conn
        ? new DeploymentMonitor(link.host.id, polled, link.conn, {
            clock: opts.clock,
            intervalMs: opts.intervalMs,
            gpuIntervalMs: opts.gpuIntervalMs,
          })
        : null,
    }));
    for (const p of this.parts) {
      const { link, monitor } = p;
      link.conn?.on('status', (status) => this.emit('status', { link, status }));
      if (!monitor) continue;
      monitor.on('observation', (obs) => this.onHostObservation(link.host.id, obs));
      monitor.on('scrape', (e) => this.emit('scrape', { ...e, hostId: link.host.id }));
      monitor.on('gpu', (status) => this.emit('gpu', { hostId: link.host.id, status }));
    }
  }

  get latest(): Observation | undefined {
    return this.merged;
  }

  /** The origin's link and every other host's, origin first. */
  get links(): readonly DeploymentLink[] {
    return this.parts.map((p) => p.link);
  }

  get readings(): DeploymentReadings {
    if (!this.opts.readings)
      throw new ApiError('unsupported', `${this.config.name}: nothing keeps its signal history here`);
    return this.opts.readings();
  }

  events(): readonly AppEvent[] {
    return this.opts.events?.() ?? [];
  }

  startMonitors(): void {
    if (this.disposed) return;
    for (const p of this.parts) p.monitor?.start();
    if (!this.roundTimer && this.rounds === 0) {
      this.nextRoundAt = this.opts.clock.now();
      this.round();
    }
  }

  connection(hostId?: string): SshConnection {
    const p = hostId === undefined ? this.parts[0] : this.parts.find((x) => x.link.host.id === hostId);
    if (!p?.link.conn)
      throw new Error(
        hostId === undefined
          ? `${this.config.name}: no link to ${this.host.label}`
          : `${this.config.name}: no link to ${hostId}${p?.link.unreachable ? ` (${p.link.unreachable})` : ''}`,
      );
    return p.link.conn;
  }

  journalTail(unit: string, hostId?: string): UnitJournalTail {
    const host =
      hostId ?? this.config.services.find((s) => s.unit === unit)?.hostId ?? this.parts[0].link.host.id;
    const p = this.parts.find((x) => x.link.host.id === host) ?? this.parts[0];
    if (!p.monitor)
      throw new Error(`${unit} on ${host}: unreachable: ${p.link.unreachable ?? 'no link to that host'}`);
    return p.monitor.journalTail(unit);
  }

  hostStates(): { host: HostConfig; connection: ConnectionStatus }[] {
    return this.parts.map((p) => ({ host: p.link.host, connection: linkState(p.link, this.opts.clock) }));
  }

  /** Stops every monitor and closes every link. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.roundTimer) this.opts.clock.clearTimeout(this.roundTimer);
    this.roundTimer = null;
    for (const p of this.parts) {
      p.monitor?.dispose();
      p.monitor?.removeAllListeners();
      p.link.conn?.removeAllListeners();
    }
    this.removeAllListeners();
    await Promise.all(this.parts.map((p) => p.link.conn?.stop()));
  }

  private onHostObservation(hostId: string, obs: Observation): void {
    this.newest.set(hostId, obs);
    this.fresh.add(hostId);
  }

  /**
   * One round: every host not still busy with an earlier poll is polled now; the merged observation follows when
   * they have all answered, or — a host slower than an interval — at the start of the next round, with that
   * host's newest reading (its own observation says how long it has been waiting).
   */
  private round(): void {
    this.roundTimer = null;
    if (this.disposed) return;
    const { clock } = this.opts;
    const interval = this.opts.intervalMs ?? 1000;
    if (this.openRound !== 0) this.emitRound();
    const round = ++this.rounds;
    this.openRound = round;
    const polls: Promise<unknown>[] = [];
    for (const p of this.parts) {
      if (!p.monitor || p.polling) continue;
      p.polling = true;
      polls.push(
        p.monitor
          .pollOnce()
          // A poll answers for its own failures in its observation; one that throws is a bug, not the link.
          .catch(() => undefined)
          .finally(() => (p.polling = false)),
      );
    }
    void Promise.all(polls).then(() => {
      if (this.openRound === round && !this.disposed) this.emitRound();
    });
    // A round started late (a blocked event loop, a suspended laptop) moves the grid rather than firing the
    // missed rounds back to back.
    this.nextRoundAt += interval;
    const now = clock.now();
    if (this.nextRoundAt <= now) this.nextRoundAt = now + interval;
    this.roundTimer = clock.setTimeout(() => this.round(), this.nextRoundAt - now);
  }

  private emitRound(): void {
    this.openRound = 0;
    let ts = 0;
    for (const h of this.fresh) ts = Math.max(ts, this.newest.get(h)?.ts ?? 0);
    this.fresh.clear();
    this.merged = mergeFleetObservation({
      deployment: this.config,
      origin: this.host.id,
      ts: ts || this.opts.clock.now(),
      latest: this.newest,
      unreachable: (hostId) => this.unreachable(hostId),
    });
    this.emit('observation', this.merged);
  }

  private unreachable(hostId: string): string | null {
    const p = this.parts.find((x) => x.link.host.id === hostId);
    if (!p) return `${hostId} is not a host of this deployment`;
    if (!p.link.conn) return p.link.unreachable ?? 'no link';
    if (p.link.conn.isConnected) return null;
    return linkReason(p.link.conn.status) ?? `no connection to ${p.link.conn.label}`;
  }
}

function linkReason(s: ConnectionStatus): string | null {
  switch (s.state) {
    case 'reconnecting':
      return s.lastError;
    case 'failed':
      return s.reason;
    case 'stale':
      return s.reason;
    case 'connecting':
      return 'connecting';
    case 'idle':
      return 'not connected';
    default:
      return null;
  }
}

function linkState(link: DeploymentLink, clock: Clock): ConnectionStatus {
  if (link.conn) return link.conn.status;
  return { state: 'failed', reason: link.unreachable ?? 'unreachable', at: clock.now() };
}
