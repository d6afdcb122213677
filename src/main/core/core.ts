// The core: implements every request of the API contract and pushes its events. It owns the open
// deployments (a LiveDeployment each: one SSH link and one monitor per host, one timeline) and knows nothing
// of Electron, WebSockets or React — the shells adapt it to their transport.
import { EventEmitter } from 'node:events';
import type { ConnectConfig } from 'ssh2';
import type {
  AppEvent,
  ConnectionStatus,
  DeploymentConfig,
  DeploymentSummary,
  HostConfig,
  Observation,
  Role,
} from '@shared/domain';
import type {
  ApiEvents,
  AppInfo,
  DemoRouterEra,
  DemoServerEra,
  EventName,
  MonitoringRequests,
  OpenDemoArgs,
} from '@shared/contract';
import { systemClock, type Clock } from './clock';
import { SshConnection } from './ssh/connection';
import { LiveDeployment, type DeploymentLink } from './deployment/live-deployment';
import type { Deployment, DeploymentReadings } from './deployment/deployment';
import { DeploymentRegistry } from './deployment/deployment-registry';
import type { Fleet } from '@shared/fleet';
import { openFleet, type FleetEnvironment, type FleetNote } from './deployment/open-fleet';
import { fleetOfServices } from './deployment/fleet-config';
import { ChangeEvents, newEventId } from './monitor/change-events';
import { ApiError } from './api-error';
import type { UnitJournalTail } from './journal/unit-tail';
import type { CoreHooks } from './core-hooks';

export type { CoreHooks } from './core-hooks';

/** What the core needs from a demo host implementation (src/main/demo provides it). */
export interface DemoLauncher {
  (opts: { speed: number; era?: DemoServerEra; router?: DemoRouterEra }): Promise<{
    /** The eras it runs (the defaults filled in), so a request for other eras can be refused. */
    era?: DemoServerEra;
    router?: DemoRouterEra;
    host: string;
    port: number;
    username: string;
    clientPrivateKey: string;
    hostKeyPublic: Buffer;
    deployment: Omit<DeploymentConfig, 'id'>;
    stop(): Promise<void>;
  }>;
}

/** What the core needs to open the demo fleet (src/main/demo/fleet.ts through compose.ts). */
export interface DemoFleetLauncher {
  (opts: { speed: number; era?: DemoServerEra; router?: DemoRouterEra }): Promise<{
    era: DemoServerEra;
    router: DemoRouterEra;
    /** The host its router runs on, as an ssh alias of the fleet's own ssh config. */
    origin: HostConfig;
    /** Reaches the fleet's hosts through that config, as an operator's ~/.ssh would. */
    env: FleetEnvironment;
    name: string;
    /** Why its hosts share 127.0.0.1 (macOS), or null. */
    fallback: string | null;
    stop(): Promise<void>;
  }>;
}

/** Resolves a configured SSH host to ssh2 options (keys, agent, known_hosts, jump hosts). */
export interface SshResolver {
  (host: HostConfig): Promise<ConnectConfig>;
}

export interface CoreOptions {
  clock?: Clock;
  shell: AppInfo['shell'];
  version: string;
  autoOpenDemo?: boolean;
  demo?: DemoLauncher;
  demoFleet?: DemoFleetLauncher;
  resolveSsh?: SshResolver;
  /**
   * How discovery reaches other hosts from a connected one (the operator's ssh config); without it only
   * workers on the connected host itself are found (no ssh alias leads anywhere else).
   */
  fleetEnvironment?: Omit<FleetEnvironment, 'resolve'>;
  /** The units the operator picked on a host (the settings file), by role. */
  discoveryChoices?: (hostId: string) => Partial<Record<Role, string>>;
  /** Deployment to open on an SSH host where discovery failed. */
  defaultDeployment?: (host: HostConfig) => Omit<DeploymentConfig, 'id'>;
  intervalMs?: number;
  /** nvidia-smi interval of every monitor (ms). */
  gpuIntervalMs?: number;
  connectTimeoutMs?: number;
}

/** Discovery without the operator's ssh config: workers on the connected host are found, others are unplaced. */
const NO_ALIASES: FleetEnvironment['discovery'] = {
  aliases: {
    one: async (alias) => ({ alias, hostname: alias, port: 22, user: '', addresses: [] }),
    all: async () => [],
  },
  lookupAll: async () => [],
  configFile: '~/.ssh/config',
};

const MAX_EVENTS = 2000;

interface OpenDeployment {
  host: HostConfig;
  deployment: DeploymentConfig;
  live: LiveDeployment;
  events: AppEvent[];
  /** Turns its observations into timeline events; goes with it, so a reopened deployment starts afresh. */
  changes: ChangeEvents;
  dispose: () => Promise<void>;
}

type CoreEvents = { [K in EventName]: [ApiEvents[K]] };

export class Core extends EventEmitter<CoreEvents> implements MonitoringRequests {
  /** The time the timelines are on (services read it through ServiceHost). */
  readonly clock: Clock;
  private readonly open = new Map<string, OpenDeployment>();
  /** Hosts being opened now, by host id: a second request for one waits for the first. */
  private readonly connecting = new Map<string, Promise<DeploymentSummary>>();
  /** Hooks for feature services inside main; never exposed to clients. */
  readonly hooks = new EventEmitter<CoreHooks>();
  private demoPromise: Promise<DeploymentSummary> | null = null;
  private demoEras: { era: DemoServerEra; router: DemoRouterEra } | null = null;
  private demoTopology: 'single' | 'fleet' | null = null;
  /**
   * Every open deployment by id, live and recorded: the core adds the ones it watches, the review service the
   * recordings it has open. Requests reach a deployment through it.
   */
  readonly deployments = new DeploymentRegistry();
  private liveReadings: ((deploymentId: string) => DeploymentReadings) | null = null;

  constructor(private readonly opts: CoreOptions) {
    super();
    this.clock = opts.clock ?? systemClock;
    this.deployments.add({
      find: (id) => this.open.get(id)?.live,
      summaries: () => [...this.open.values()].map((d) => this.summary(d)),
      close: (id) => this.closeDeployment({ deploymentId: id }),
    });
  }

  /**
   * Where a live deployment's readings (signals, charts, journal views) come from: the dashboard service's
   * signal store, which reads every scrape. Set once by that service.
   */
  provideLiveReadings(fn: (deploymentId: string) => DeploymentReadings): void {
    this.liveReadings = fn;
  }

  /** This service's part of the API, bound for dispatch. */
  handlers(): { [K in keyof MonitoringRequests]: MonitoringRequests[K] } {
    return {
      getAppInfo: (a) => this.getAppInfo(a),
      // The API lists, closes and reads the timeline of every open deployment, recordings in review included.
      listDeployments: async () => this.deployments.list(),
      openDemo: (a) => this.openDemo(a),
      connectHost: (a) => this.connectHost(a),
      closeDeployment: (a) => this.deployments.close(a.deploymentId),
      listEvents: async (a) => [...this.deployments.resolve(a.deploymentId).events()],
    };
  }

  async getAppInfo(_args?: Record<string, never>): Promise<AppInfo> {
    return {
      version: this.opts.version,
      shell: this.opts.shell,
      platform: process.platform,
      autoOpenDemo: this.opts.autoOpenDemo ?? false,
    };
  }

  async listDeployments(_args?: Record<string, never>): Promise<DeploymentSummary[]> {
    return [...this.open.values()].map((d) => this.summary(d));
  }

  async openDemo(args: OpenDemoArgs): Promise<DeploymentSummary> {
    const topology = args.topology ?? 'single';
    if (this.demoTopology !== null && this.demoTopology !== topology)
      throw new ApiError(
        'demo-open',
        `the ${this.demoTopology === 'fleet' ? 'demo fleet' : 'single-host demo'} is already open`,
        'Close it first, then open the other demo.',
      );
    this.demoTopology = topology;
    // Opening the demo twice (two windows, a double click) joins the first attempt.
    this.demoPromise ??= (topology === 'fleet' ? this.startDemoFleet(args) : this.startDemo(args)).catch(
      (err) => {
        this.demoTopology = null;
        this.demoPromise = null;
        throw err;
      },
    );
    const summary = await this.demoPromise;
    // Joining a demo that runs other eras would show the operator figures of a version they did not ask for.
    const running = this.demoEras;
    if (
      running &&
      ((args.era && args.era !== running.era) || (args.router && args.router !== running.router))
    )
      throw new ApiError(
        'demo-open',
        `the demo deployment is already open with server era ${running.era} and router era ${running.router}`,
        'Close the demo deployment first, then open it again with the era you want.',
      );
    return summary;
  }

  /**
   * Connects to a host and opens what runs there. `addHosts` (the CLI's --add-host) are hosts of the fleet
   * discovery would not reach from the router's list alone; with them the deployment is always opened as a fleet.
   */
  async connectHost(
    args: { host: HostConfig },
    opts: { addHosts?: HostConfig[] } = {},
  ): Promise<DeploymentSummary> {
    const { host } = args;
    if (this.open.has(host.id)) return this.summary(this.open.get(host.id)!);
    // A second request while the first still connects (a double click, a second window) waits for it: two
    // sets of links to one host would be opened, and the second's never stopped.
    const pending = this.connecting.get(host.id);
    if (pending) return pending;
    const opening = this.connectNew(host, opts.addHosts ?? []);
    this.connecting.set(host.id, opening);
    try {
      return await opening;
    } finally {
      this.connecting.delete(host.id);
    }
  }

  private async connectNew(host: HostConfig, addHosts: HostConfig[]): Promise<DeploymentSummary> {
    const resolve = this.opts.resolveSsh;
    if (!resolve) throw new ApiError('unsupported', 'this build cannot connect to SSH hosts');
    const configure = (): Promise<ConnectConfig> => resolve(host);
    // Connect first, so a dead host or refused login is answered here, where the operator asked.
    const conn = this.newConnection(host, configure);
    await conn.start();
    try {
      // start() returns after the first attempt. If that failed, say so now instead of retrying in the
      // background while the operator waits: retries are for links that were up and dropped.
      const first = conn.status;
      if (first.state === 'reconnecting')
        throw new ApiError('unreachable', `cannot connect to ${host.label}: ${first.lastError}`);
      await conn.waitConnected(this.opts.connectTimeoutMs ?? 60_000);
    } catch (err) {
      await conn.stop();
      if (err instanceof ApiError) throw err;
      const e = err as { explained?: { code: string; message: string; hint?: string } };
      if (e.explained) throw new ApiError(e.explained.code, e.explained.message, e.explained.hint);
      throw err;
    }
    // Then find out what runs there, instead of assuming unit names and ports: the router's workers, on
    // whichever hosts they are.
    let opened;
    try {
      opened = await openFleet(
        host,
        {
          resolve,
          connect: (h, c) => this.newConnection(h, c),
          discovery: NO_ALIASES,
          ...this.opts.fleetEnvironment,
        },
        conn,
        undefined,
        { addHosts, chosen: this.opts.discoveryChoices },
      );
    } catch (err) {
      const fallback = this.opts.defaultDeployment?.(host);
      if ((err instanceof ApiError && err.code === 'no-deployment') || !fallback) {
        await conn.stop();
        throw err;
      }
      const { fleet, services } = fleetOfServices(host.id, fallback.services);
      const failed: FleetNote = { title: `discovery on ${host.label} failed: ${(err as Error).message}` };
      return this.openFleet(host, { ...fallback, services }, [{ host, conn }], fleet, undefined, [failed]);
    }
    return this.openFleet(host, opened.template, opened.links, opened.fleet, undefined, opened.notes);
  }

  private note(title: string, severity: AppEvent['severity'], detail?: string): AppEvent {
    const ts = this.clock.now();
    return { id: newEventId(ts), ts, kind: 'info', severity, title, detail };
  }

  async closeDeployment(args: { deploymentId: string }): Promise<void> {
    const d = this.open.get(args.deploymentId);
    if (!d) return;
    this.open.delete(args.deploymentId);
    if (d.host.kind === 'demo') {
      this.demoPromise = null;
      this.demoEras = null;
      this.demoTopology = null;
    }
    await d.dispose();
    this.hooks.emit('closed', { deploymentId: args.deploymentId });
  }

  async listEvents(args: { deploymentId: string }): Promise<AppEvent[]> {
    return [...this.get(args.deploymentId).events];
  }

  /**
   * The SSH connection of an open deployment, for feature services (journal tail, restarts): the origin's, or
   * in a fleet the one of `hostId`.
   */
  connectionOf(deploymentId: string, hostId?: string): SshConnection {
    return this.get(deploymentId).live.connection(hostId);
  }

  /**
   * The one journal tail of a unit of an open deployment, owned by its host's monitor: views, restarts and the
   * recorder subscribe to it rather than each polling the host. In a fleet a unit name may exist on two hosts
   * (a multi-node worker): `hostId` says which.
   */
  journalTail(deploymentId: string, unit: string, hostId?: string): UnitJournalTail {
    return this.get(deploymentId).live.journalTail(unit, hostId);
  }

  /** The open deployment behind the `Deployment` interface (links, fleet, latest observation). */
  liveDeployment(deploymentId: string): Deployment {
    return this.get(deploymentId).live;
  }

  deploymentOf(deploymentId: string): {
    host: HostConfig;
    deployment: DeploymentConfig;
    latest?: Observation;
  } {
    const d = this.get(deploymentId);
    return { host: d.host, deployment: d.deployment, latest: d.live.latest };
  }

  /** Adds an event to a deployment's timeline and pushes it to clients. */
  addEvent(deploymentId: string, e: Omit<AppEvent, 'id' | 'deploymentId'> & { id?: string }): AppEvent {
    const d = this.get(deploymentId);
    const full: AppEvent = { ...e, id: e.id ?? newEventId(e.ts), deploymentId };
    this.record(d, full);
    return full;
  }

  get now(): number {
    return this.clock.now();
  }

  /** The machine woke up or the network changed: links are probably dead although nothing said so yet. */
  onResume(reason = 'resumed from sleep or the network changed'): void {
    for (const d of this.open.values())
      for (const l of d.live.links) l.conn?.reconnectNow(reason, { automatic: true });
  }

  /** Close everything (app quit, end of a CLI command). */
  async shutdown(): Promise<void> {
    await Promise.all([...this.open.keys()].map((id) => this.closeDeployment({ deploymentId: id })));
  }

  private async startDemo(args: OpenDemoArgs): Promise<DeploymentSummary> {
    const launch = this.opts.demo;
    if (!launch) throw new ApiError('unsupported', 'this build has no demo host');
    const demo = await launch({ speed: args.speed ?? 1, era: args.era, router: args.router });
    this.demoEras = demo.era && demo.router ? { era: demo.era, router: demo.router } : null;
    const host: HostConfig = {
      id: 'demo',
      label: 'demo GPU host (simulated)',
      kind: 'demo',
      hostname: demo.host,
      port: demo.port,
      user: demo.username,
    };
    const expected = demo.hostKeyPublic;
    const conn = this.newConnection(host, async () => ({
      host: demo.host,
      port: demo.port,
      username: demo.username,
      privateKey: demo.clientPrivateKey,
      // The demo host is reached like any other: its key is pinned, never accepted blindly.
      hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => verify(key.equals(expected)),
    }));
    // The demo host says what it runs: its services are the deployment, in the model every deployment has.
    const { fleet, services } = fleetOfServices(host.id, demo.deployment.services);
    // Its link is up before the first round, so that round reads the host instead of a link still connecting.
    const started = conn.start();
    const summary = this.openFleet(
      host,
      { ...demo.deployment, services },
      [{ host, conn }],
      fleet,
      () => demo.stop(),
      [],
      started,
    );
    await started;
    await conn.waitConnected(15_000);
    return this.summary(this.get(summary.deployment.id));
  }

  private async startDemoFleet(args: OpenDemoArgs): Promise<DeploymentSummary> {
    const launch = this.opts.demoFleet;
    if (!launch) throw new ApiError('unsupported', 'this build has no demo fleet');
    const demo = await launch({ speed: args.speed ?? 1, era: args.era, router: args.router });
    this.demoEras = { era: demo.era, router: demo.router };
    try {
      const opened = await openFleet(demo.origin, {
        connect: (h, c) => this.newConnection(h, c),
        ...demo.env,
      });
      const notes = [...(demo.fallback ? [{ title: `demo fleet: ${demo.fallback}` }] : []), ...opened.notes];
      return this.openFleet(
        demo.origin,
        { ...opened.template, name: demo.name },
        opened.links,
        opened.fleet,
        () => demo.stop(),
        notes,
      );
    } catch (err) {
      await demo.stop();
      throw new ApiError(
        'demo-open',
        `the demo fleet did not open: ${(err as Error).message}`,
        'Try again; if it keeps failing, open the single-host demo.',
      );
    }
  }

  /**
   * Opens a deployment: `links` are every host's (origin first), connected where they could be (a link not yet
   * started connects in the background); a host without a link makes its workers say "unreachable: …" and the
   * rest are watched as usual. `notes` (what discovery said) open its timeline.
   */
  openFleet(
    host: HostConfig,
    template: Omit<DeploymentConfig, 'id'>,
    links: DeploymentLink[],
    fleet: Fleet,
    onDispose?: () => Promise<void>,
    notes: readonly FleetNote[] = [],
    /** The first round waits for it (a link connecting as the deployment opens). */
    linksUp?: Promise<void>,
  ): DeploymentSummary {
    const have = this.open.get(host.id);
    if (have) return this.summary(have);
    const d = this.openLive(host, { ...template, id: host.id }, links, fleet, onDispose);
    for (const l of links) if (l.conn) this.onConnection(d, l, l.conn.status);
    for (const n of notes)
      this.record(d, {
        ...this.note(n.title, n.severity ?? 'warning', n.detail),
        ...(n.role ? { role: n.role } : {}),
        deploymentId: host.id,
        hostId: host.id,
      });
    const go = (): void => d.live.startMonitors();
    // A link that fails to come up is said by its status; the monitors start either way.
    if (linksUp) void linksUp.then(go, go);
    else go();
    return this.summary(d);
  }

  private openLive(
    host: HostConfig,
    deployment: DeploymentConfig,
    links: DeploymentLink[],
    fleet: Fleet,
    onDispose?: () => Promise<void>,
  ): OpenDeployment {
    const id = deployment.id;
    const live = new LiveDeployment({
      host,
      config: deployment,
      links,
      fleet,
      clock: this.clock,
      intervalMs: this.opts.intervalMs,
      gpuIntervalMs: this.opts.gpuIntervalMs,
      readings: () => {
        if (!this.liveReadings)
          throw new ApiError('unsupported', `${deployment.name}: this build keeps no signal history`);
        return this.liveReadings(id);
      },
      events: () => d.events,
    });
    const d: OpenDeployment = {
      host,
      deployment,
      live,
      events: [],
      changes: new ChangeEvents(),
      dispose: async () => {
        await live.dispose();
        await onDispose?.();
      },
    };
    this.open.set(id, d);
    live.on('status', ({ link, status }) => this.onConnection(d, link, status));
    live.on('observation', (obs) => this.onObservation(d, obs));
    live.on('scrape', (e) => this.hooks.emit('scrape', { ...e, deploymentId: id }));
    live.on('gpu', (e) => this.hooks.emit('gpu', { deploymentId: id, hostId: e.hostId, status: e.status }));
    this.hooks.emit('opened', { deploymentId: id, host, deployment });
    return d;
  }

  private newConnection(host: HostConfig, configure: () => Promise<ConnectConfig>): SshConnection {
    return new SshConnection({ label: host.alias ?? host.label, configure, clock: this.clock });
  }

  private onConnection(d: OpenDeployment, link: DeploymentLink, status: ConnectionStatus): void {
    const hostId = link.host.id;
    this.emit('connection', { deploymentId: d.deployment.id, hostId, status });
    const label = link.conn?.label ?? link.host.label;
    const title =
      status.state === 'connected'
        ? `connected to ${label}`
        : status.state === 'reconnecting'
          ? `connection to ${label} lost: ${status.lastError}`
          : status.state === 'failed'
            ? `cannot connect to ${label}: ${status.reason}`
            : status.state === 'stale'
              ? `${label} stopped answering: ${status.reason}`
              : null;
    // Only the first of a run of reconnect attempts is worth a timeline entry.
    const prev = d.events.at(-1);
    if (title && !(status.state === 'reconnecting' && prev?.kind === 'connection' && prev.title === title))
      this.record(d, {
        id: newEventId(this.clock.now()),
        ts: this.clock.now(),
        kind: 'connection',
        severity: status.state === 'connected' ? 'info' : status.state === 'failed' ? 'error' : 'warning',
        deploymentId: d.deployment.id,
        hostId,
        title,
        detail: status.state === 'failed' ? status.hint : undefined,
      });
  }

  private onObservation(d: OpenDeployment, obs: Observation): void {
    for (const e of d.changes.next(obs)) this.record(d, e);
    this.hooks.emit('observed', obs);
    this.emit('observation', obs);
  }

  private record(d: OpenDeployment, e: AppEvent): void {
    d.events.push(e);
    if (d.events.length > MAX_EVENTS) d.events.splice(0, d.events.length - MAX_EVENTS);
    this.emit('event', e);
  }

  private get(deploymentId: string): OpenDeployment {
    const d = this.open.get(deploymentId);
    if (!d)
      throw new ApiError(
        'unknown-deployment',
        `no open deployment "${deploymentId}"`,
        'Open it again from the start screen.',
      );
    return d;
  }

  private summary(d: OpenDeployment): DeploymentSummary {
    const live = d.live;
    return {
      deployment: d.deployment,
      host: d.host,
      connection: live.hostStates()[0].connection,
      hosts: live.hostStates(),
      fleet: live.fleet,
      latest: live.latest,
    };
  }
}
