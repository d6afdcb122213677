// The core: implements every request of the API contract and pushes its events. It owns the open
// deployments (one SSH connection, one monitor and one history each) and knows nothing of Electron,
// WebSockets or React — the shells adapt it to their transport.
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
  GpuStatus,
  DemoRouterEra,
  DemoServerEra,
  EventName,
  MonitoringRequests,
  OpenDemoArgs,
} from '@shared/contract';
import { systemClock, type Clock } from './clock';
import { SshConnection } from './ssh/connection';
import { DeploymentMonitor } from './monitor/deployment-monitor';
import { diffObservations, newEventId } from './monitor/change-events';
import { ApiError } from './api-error';
import type { Exposition } from './probes/exposition/types';
import type { UnitJournalTail } from './journal/unit-tail';

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
  resolveSsh?: SshResolver;
  /** Deployment to assume on a plain SSH host until discovery proposes one. */
  defaultDeployment?: (host: HostConfig) => Omit<DeploymentConfig, 'id'>;
  intervalMs?: number;
  /** nvidia-smi interval of every monitor (ms). */
  gpuIntervalMs?: number;
  connectTimeoutMs?: number;
  /** Finds the deployment on a freshly connected host; notes become timeline events (diagnostics). */
  discover?: (
    conn: SshConnection,
    host: HostConfig,
  ) => Promise<{ deployment: Omit<DeploymentConfig, 'id'>; notes: AppEvent[] } | null>;
}

const MAX_EVENTS = 2000;

interface OpenDeployment {
  host: HostConfig;
  deployment: DeploymentConfig;
  conn: SshConnection;
  monitor: DeploymentMonitor;
  events: AppEvent[];
  dispose: () => Promise<void>;
}

type CoreEvents = { [K in EventName]: [ApiEvents[K]] };

/** Internal (not API) notifications for feature services: recording, signals, alerts, restarts. */
export interface CoreHooks {
  /** Every successful scrape, parsed, with the deployment it belongs to. */
  scrape: [{ deploymentId: string; hostId: string; ts: number; role: Role; exposition: Exposition }];
  /** A deployment was opened (its connection exists; its first observation may not). */
  opened: [{ deploymentId: string; host: HostConfig; deployment: DeploymentConfig }];
  /** A deployment was closed. */
  closed: [{ deploymentId: string }];
  /** Each observation, after the core has stored it (same object the API pushes). */
  observed: [Observation];
  /** Each nvidia-smi reading of a deployment's host (readings, or why there are none). */
  gpu: [{ deploymentId: string; hostId: string; status: GpuStatus }];
}

export class Core extends EventEmitter<CoreEvents> implements MonitoringRequests {
  private readonly clock: Clock;
  private readonly open = new Map<string, OpenDeployment>();
  /** Hooks for feature services inside main; never exposed to clients. */
  readonly hooks = new EventEmitter<CoreHooks>();
  private demoPromise: Promise<DeploymentSummary> | null = null;
  private demoEras: { era: DemoServerEra; router: DemoRouterEra } | null = null;

  constructor(private readonly opts: CoreOptions) {
    super();
    this.clock = opts.clock ?? systemClock;
  }

  /** This service's part of the API, bound for dispatch. */
  handlers(): { [K in keyof MonitoringRequests]: MonitoringRequests[K] } {
    return {
      getAppInfo: (a) => this.getAppInfo(a),
      listDeployments: (a) => this.listDeployments(a),
      openDemo: (a) => this.openDemo(a),
      connectHost: (a) => this.connectHost(a),
      closeDeployment: (a) => this.closeDeployment(a),
      listEvents: (a) => this.listEvents(a),
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
    // Opening the demo twice (two windows, a double click) joins the first attempt.
    this.demoPromise ??= this.startDemo(args).catch((err) => {
      this.demoPromise = null;
      throw err;
    });
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

  async connectHost(args: { host: HostConfig }): Promise<DeploymentSummary> {
    const { host } = args;
    const resolve = this.opts.resolveSsh;
    if (!resolve) throw new ApiError('unsupported', 'this build cannot connect to SSH hosts');
    if (this.open.has(host.id)) return this.summary(this.open.get(host.id)!);
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
    // Then find out what runs there, instead of assuming unit names and ports.
    let template = this.opts.defaultDeployment?.(host);
    let notes: AppEvent[] = [];
    if (this.opts.discover) {
      try {
        const found = await this.opts.discover(conn, host);
        if (found) {
          template = found.deployment;
          notes = found.notes;
        }
      } catch (err) {
        notes = [this.note(`discovery on ${host.label} failed: ${(err as Error).message}`, 'warning')];
      }
    }
    if (!template || template.services.length === 0) {
      await conn.stop();
      throw new ApiError(
        'no-deployment',
        `no SGLang prefill/decode/router units found on ${host.label}`,
        notes.map((n) => n.title + (n.detail ? ` — ${n.detail}` : '')).join('\n') || undefined,
      );
    }
    const d = await this.startDeployment(host, template, configure, undefined, conn);
    for (const n of notes) this.record(d, { ...n, deploymentId: d.deployment.id, hostId: host.id });
    return this.summary(d);
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
    }
    await d.dispose();
    this.hooks.emit('closed', { deploymentId: args.deploymentId });
  }

  async listEvents(args: { deploymentId: string }): Promise<AppEvent[]> {
    return [...this.get(args.deploymentId).events];
  }

  /** The SSH connection of an open deployment, for feature services (journal tail, restarts). */
  connectionOf(deploymentId: string): SshConnection {
    return this.get(deploymentId).conn;
  }

  /**
   * The one journal tail of a unit of an open deployment, owned by its monitor: views, restarts and the recorder
   * subscribe to it rather than each polling the host.
   */
  journalTail(deploymentId: string, unit: string): UnitJournalTail {
    return this.get(deploymentId).monitor.journalTail(unit);
  }

  deploymentOf(deploymentId: string): {
    host: HostConfig;
    deployment: DeploymentConfig;
    latest?: Observation;
  } {
    const d = this.get(deploymentId);
    return { host: d.host, deployment: d.deployment, latest: d.monitor.latestObservation };
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
    for (const d of this.open.values()) d.conn.reconnectNow(reason, { automatic: true });
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
    const d = await this.startDeployment(
      host,
      demo.deployment,
      async () => ({
        host: demo.host,
        port: demo.port,
        username: demo.username,
        privateKey: demo.clientPrivateKey,
        // The demo host is reached like any other: its key is pinned, never accepted blindly.
        hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => verify(key.equals(expected)),
      }),
      () => demo.stop(),
    );
    await d.conn.waitConnected(15_000);
    return this.summary(d);
  }

  private async startDeployment(
    host: HostConfig,
    template: Omit<DeploymentConfig, 'id'>,
    configure: () => Promise<ConnectConfig>,
    onDispose?: () => Promise<void>,
    connected?: SshConnection,
  ): Promise<OpenDeployment> {
    const id = `${host.id}`;
    if (this.open.has(id)) return this.open.get(id)!;
    const deployment: DeploymentConfig = { ...template, id };
    const conn = connected ?? this.newConnection(host, configure);
    const monitor = new DeploymentMonitor(host.id, deployment, conn, {
      clock: this.clock,
      intervalMs: this.opts.intervalMs,
      gpuIntervalMs: this.opts.gpuIntervalMs,
    });
    const d: OpenDeployment = {
      host,
      deployment,
      conn,
      monitor,
      events: [],
      dispose: async () => {
        monitor.dispose();
        monitor.removeAllListeners();
        conn.removeAllListeners();
        await conn.stop();
        await onDispose?.();
      },
    };
    this.open.set(id, d);
    conn.on('status', (status) => this.onConnection(d, status));
    monitor.on('observation', (obs) => this.onObservation(d, obs));
    monitor.on('scrape', (e) => this.hooks.emit('scrape', { ...e, deploymentId: id, hostId: host.id }));
    monitor.on('gpu', (status) => this.hooks.emit('gpu', { deploymentId: id, hostId: host.id, status }));
    this.hooks.emit('opened', { deploymentId: id, host, deployment });
    if (connected) this.onConnection(d, conn.status);
    else await conn.start();
    monitor.start();
    return d;
  }

  private newConnection(host: HostConfig, configure: () => Promise<ConnectConfig>): SshConnection {
    return new SshConnection({ label: host.alias ?? host.label, configure, clock: this.clock });
  }

  private onConnection(d: OpenDeployment, status: ConnectionStatus): void {
    this.emit('connection', { deploymentId: d.deployment.id, hostId: d.host.id, status });
    const title =
      status.state === 'connected'
        ? `connected to ${d.conn.label}`
        : status.state === 'reconnecting'
          ? `connection to ${d.conn.label} lost: ${status.lastError}`
          : status.state === 'failed'
            ? `cannot connect to ${d.conn.label}: ${status.reason}`
            : status.state === 'stale'
              ? `${d.conn.label} stopped answering: ${status.reason}`
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
        hostId: d.host.id,
        title,
        detail: status.state === 'failed' ? status.hint : undefined,
      });
  }

  private onObservation(d: OpenDeployment, obs: Observation): void {
    const prev = this.previous.get(d.deployment.id);
    for (const e of diffObservations(prev, obs)) this.record(d, e);
    this.previous.set(d.deployment.id, obs);
    this.hooks.emit('observed', obs);
    this.emit('observation', obs);
  }

  private readonly previous = new Map<string, Observation>();

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
    return {
      deployment: d.deployment,
      host: d.host,
      connection: d.conn.status,
      latest: d.monitor.latestObservation,
    };
  }
}
