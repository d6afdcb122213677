// The dashboard service: keeps each open deployment's signal history (live from the core's hooks, GPU readings
// included), evaluates alert rules, reads the PD pipeline verdict, hands journal views the monitor's tail of
// their unit and answers the dashboard part of the API. Events go out on the core's bus like every other push.
import { randomUUID } from 'node:crypto';
import type {
  ActiveAlert,
  AlertRule,
  DashboardPush,
  DashboardRequests,
  DashboardSnapshot,
  GpuStatus,
  JournalAroundResult,
  JournalEntry,
  JournalFollowResult,
  ScrapeFamilies,
  SignalInfo,
} from '@shared/contract';
import {
  serviceId,
  type ConnectionStatus,
  type DeploymentConfig,
  type Observation,
  type Role,
} from '@shared/domain';
import type { DemoFaultName, DemoFaultState } from '@shared/demo-faults';
import type { Settings } from '@shared/api/settings';
import type { EventEmitter } from 'node:events';
import type { ApiEventMap, LiveDeploymentAccess, ServiceHost, TimelineEntry } from './service-host';
import { systemClock, type Clock } from '../clock';
import { ApiError } from '../api-error';
import { SignalsStore } from '../signals/signals-store';
import { catalogFor } from '../signals/catalog';
import { VerdictTracker } from '../signals/verdict-tracker';
import { UnitReadings } from '../signals/unit-readings';
import { OperatorActions } from '../actions/in-progress';
import { fleetWorkersOf, type FleetWorker } from '@shared/worker-names';
import { DEFAULT_ALERT_RULES } from '../alerts/rules';
import { memoryCell, type SettingCell } from '../config/setting-cell';
import {
  evaluateAlerts,
  initialAlertState,
  type AlertChange,
  type AlertLink,
  type AlertState,
} from '../alerts/engine';
import type { RestartingUnit } from '../actions/restarting';
import type { JournalSubscription } from '../journal/unit-tail';
import { journalWindowCommand } from '../journal/commands';
import { hostsJournal, journalAround, type HostJournal } from '../journal/around';
import { parseJournalJson } from '../journal/journal-json';
import { FamilyCensusCache } from '../signals/family-census';
import type { DeploymentReadings } from '../deployment/deployment';
import { dashboardSnapshot } from '../signals/dashboard-snapshot';
import type { DeploymentLookup } from '../deployment/deployment-registry';
import { dashboardPush } from './dashboard-push';

/** The units this console is restarting on a deployment now (the restart and roll services'). */
export type RestartingSource = (deploymentId: string) => RestartingUnit[];

/** The demo host's simulated faults (wired by the composition root for the demo only). */
export interface DemoFaultSwitch {
  /** On or off for a target (a role, worker or host; none: everywhere), on for `forMs` of the demo's clock. */
  set(fault: DemoFaultName, on: boolean, target?: string, forMs?: number): void;
  states(): DemoFaultState[];
}

export interface DashboardServiceOptions {
  clock?: Clock;
  store?: SignalsStore;
  /** How often a journal view wants new lines (ms). */
  journalIntervalMs?: number;
  /** Alert rules, global and per deployment (the settings file); in memory when absent. */
  alerts?: SettingCell<Settings['alerts']>;
  /** Where a request's deployment id is resolved (live or recorded); default the core's registry. */
  deployments?: DeploymentLookup;
}

const MAX_FOLLOWERS = 8;

interface Open {
  deployment: DeploymentConfig;
  isDemo: boolean;
  roles: Role[];
  alertState: AlertState;
  active: ActiveAlert[];
  pendingAlerts: ActiveAlert[];
  gpu: Record<string, GpuStatus>;
  pending: Record<string, number | null>;
  /** By service id. */
  families: Record<string, ScrapeFamilies>;
  snapshot?: DashboardSnapshot;
  /** The newest round's time and latest values, while its snapshot has not been built (nobody listened). */
  round?: { ts: number; values: Record<string, number | null> };
  /** The previous round's snapshot as pushed; unset after a round nobody listened to (the next push is whole). */
  pushed?: DashboardSnapshot;
  /** The verdict over time: outages and recoveries, the links, what this console restarts. */
  verdict: VerdictTracker;
  units: UnitReadings;
}

/** What the dashboard is given: the deployments, the hooks it reads, pushes, the timeline for alerts, the links. */
export type DashboardHost = Pick<ServiceHost, 'deployments' | 'hooks' | 'emit' | 'addEvent'> &
  Pick<EventEmitter<ApiEventMap>, 'listenerCount' | 'on'> &
  Pick<LiveDeploymentAccess, 'deploymentOf' | 'connectionOf' | 'journalTail'> & {
    /** Where a live deployment's readings come from (this service's signal store); set once. */
    provideLiveReadings(fn: (deploymentId: string) => DeploymentReadings): void;
  };

export class DashboardService {
  readonly store: SignalsStore;
  private readonly clock: Clock;
  private readonly open = new Map<string, Open>();
  private readonly alerts: SettingCell<Settings['alerts']>;
  private readonly followers = new Map<string, { deploymentId: string; sub: JournalSubscription }>();
  private demoFaults: DemoFaultSwitch | null = null;
  private restarting: RestartingSource = () => [];
  private readonly census = new FamilyCensusCache();
  private readonly deployments: DeploymentLookup;
  /** What this console is restarting, from the restart and roll progress it pushes. */
  readonly actions = new OperatorActions();

  constructor(
    private readonly core: DashboardHost,
    private readonly opts: DashboardServiceOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.store = opts.store ?? new SignalsStore();
    this.deployments = opts.deployments ?? core.deployments;
    // A live deployment's readings are this store's; a recording brings its own.
    core.provideLiveReadings((id) => this.liveReadings(id));
    this.alerts =
      opts.alerts ??
      memoryCell({ rules: DEFAULT_ALERT_RULES.map((r) => ({ ...r, roles: [...r.roles] })), deployments: {} });
    core.hooks.on('opened', (e) => this.onOpened(e.deploymentId, e.deployment, e.host.kind === 'demo'));
    core.hooks.on('closed', (e) => this.onClosed(e.deploymentId));
    core.hooks.on('scrape', (e) => {
      const o = this.open.get(e.deploymentId);
      if (!o) return;
      const values = this.store.ingest(e.deploymentId, e.ts, e.role, e.exposition, e.id);
      // Gathered for the round's 'signals' push only while a window listens (a fleet's round is 33 scrapes).
      if (this.core.listenerCount('signals') > 0) Object.assign(o.pending, values);
      // Per service: a fleet's workers of one role take turns here, and may run different versions.
      const service = serviceId(e);
      const c = this.census.census(`${e.deploymentId}/${service}`, e.exposition);
      o.families[service] = {
        used: c.used.length,
        knownNotUsed: c.knownNotUsed.length,
        otherExporters: c.otherExporters.length,
        unknown: c.unknown,
      };
    });
    core.hooks.on('observed', (obs) => this.onObserved(obs));
    core.on('restartProgress', (op) => this.actions.restart(op));
    core.on('rollProgress', (p) => this.actions.roll(p.deploymentId, p.operation));
    core.hooks.on('gpu', (e) => this.onGpu(e.deploymentId, e.status, e.hostId));
  }

  /** The composition root hands over what the restart and roll services are restarting (for the alerts). */
  attachRestarts(fn: RestartingSource): void {
    this.restarting = fn;
  }

  /** The composition root hands over the demo host's fault switch when it starts one. */
  attachDemoFaults(fn: DemoFaultSwitch | null): void {
    this.demoFaults = fn;
  }

  handlers(): { [K in keyof DashboardRequests]: DashboardRequests[K] } {
    return {
      // Live or recorded, a request's deployment answers its own readings (recordings from their file).
      getSignalCatalog: async (a) => this.readings(a.deploymentId).catalog(),
      getSeries: async (a) => this.readings(a.deploymentId).series(a),
      getSeriesBatch: async (a) => {
        const { deploymentId, fromMs, toMs } = a;
        const r = this.readings(deploymentId);
        return {
          results: await Promise.all(
            a.groups.map((g) =>
              r.series({ deploymentId, fromMs, toMs, keys: g.keys, maxPoints: g.maxPoints }),
            ),
          ),
        };
      },
      getDashboard: async (a) => this.readings(a.deploymentId).dashboard(),
      getAlertRules: async () => structuredClone(this.alerts.get().rules),
      setAlertRules: async (a) => {
        const ids = new Set<string>();
        for (const r of a.rules) {
          if (ids.has(r.id)) throw new ApiError('bad-arguments', `alert rule id "${r.id}" is used twice`);
          ids.add(r.id);
        }
        await this.alerts.set({ ...this.alerts.get(), rules: structuredClone(a.rules) });
        return structuredClone(this.alerts.get().rules);
      },
      followJournal: async (a) => this.readings(a.deploymentId).followJournal(a),
      unfollowJournal: async (a) => {
        this.followers.get(a.followId)?.sub.dispose();
        this.followers.delete(a.followId);
      },
      journalAround: async (a) => this.readings(a.deploymentId).journalAround(a),
      demoControl: async (a) => {
        const faults = this.demoSwitch(a.deploymentId);
        try {
          const forMs = a.forS === undefined ? undefined : a.forS * 1000;
          faults.set(a.fault, a.on, a.role ?? a.worker ?? a.host, forMs);
          return { faults: faults.states() };
        } catch (err) {
          throw new ApiError('bad-fault', (err as Error).message);
        }
      },
      getDemoFaults: async (a) => ({ faults: this.demoSwitch(a.deploymentId).states() }),
    };
  }

  /** The demo host's fault switch, for a live demo deployment only. */
  private demoSwitch(deploymentId: string): DemoFaultSwitch {
    // The switch acts on the demo host: a recording of the demo has none (the registry says so).
    this.deployments.live(deploymentId, 'the demo fault switch');
    const o = this.need(deploymentId);
    if (!o.isDemo || !this.demoFaults)
      throw new ApiError(
        'not-demo',
        `${o.deployment.name} is not the demo deployment; faults can only be simulated on the demo host`,
      );
    return this.demoFaults;
  }

  private readings(deploymentId: string): DeploymentReadings {
    return this.deployments.resolve(deploymentId).readings;
  }

  /** What a live deployment's screens read: this store's signals and the hosts' journals. */
  private liveReadings(deploymentId: string): DeploymentReadings {
    return {
      catalog: () => this.catalog(deploymentId),
      series: async (q) => {
        this.need(deploymentId);
        return this.store.getSeries(q);
      },
      dashboard: () => this.snapshot(deploymentId),
      followJournal: (a) =>
        a.worker === undefined
          ? this.followJournal(deploymentId, a.role, a.lines ?? 200)
          : this.followWorkerJournal(deploymentId, a.worker, a.lines ?? 200),
      journalAround: (a) => this.journalAround(deploymentId, a.ts, a.spanMs ?? 20_000, a.role, a.worker),
    };
  }

  /** A deployment's own rules where it has them (they replace the global list), else the global list. */
  rulesFor(deploymentId: string): readonly AlertRule[] {
    const a = this.alerts.get();
    return a.deployments[deploymentId] ?? a.rules;
  }

  /** Stops timers and followers (app shutdown). */
  stop(): void {
    for (const id of [...this.open.keys()]) this.onClosed(id);
  }

  private catalog(deploymentId: string): SignalInfo[] {
    const o = this.need(deploymentId);
    const gpus = new Set([
      ...this.store.gpuIndices(deploymentId),
      ...o.deployment.services.flatMap((s) => s.gpus ?? []),
    ]);
    return catalogFor(
      o.roles,
      [...gpus].sort((a, b) => a - b),
      this.store.kvRanks(deploymentId),
    );
  }

  private onOpened(deploymentId: string, deployment: DeploymentConfig, isDemo: boolean): void {
    // A fleet has several services of a role; each role is listed once.
    const roles = [...new Set(deployment.services.map((s) => s.role))];
    this.store.open(deploymentId, roles);
    const o: Open = {
      deployment,
      isDemo,
      roles,
      alertState: initialAlertState(),
      active: [],
      pendingAlerts: [],
      gpu: {},
      pending: {},
      families: {},
      verdict: new VerdictTracker({ windowMs: this.store.rateWindowMs }),
      units: new UnitReadings(),
    };
    this.open.set(deploymentId, o);
  }

  private onClosed(deploymentId: string): void {
    this.open.delete(deploymentId);
    this.actions.forget(deploymentId);
    this.census.drop(`${deploymentId}/`);
    for (const [id, f] of this.followers)
      if (f.deploymentId === deploymentId) {
        f.sub.dispose();
        this.followers.delete(id);
      }
    this.store.close(deploymentId);
  }

  private onObserved(obs: Observation): void {
    const o = this.open.get(obs.deploymentId);
    if (!o) return;
    // The scrapes' values gathered since the last poll, then the poll's own: handed on as they are, not copied
    // (a few hundred keys every second).
    const polled = this.store.ingestObservation(obs);
    const values = this.core.listenerCount('signals') > 0 ? Object.assign(o.pending, polled) : null;
    o.pending = {};
    const latest = this.store.latest(obs.deploymentId);
    const { state, changes, active, pending } = evaluateAlerts(
      this.rulesFor(obs.deploymentId),
      o.alertState,
      {
        ts: obs.ts,
        roles: o.roles,
        values: latest,
        workers: this.workersOf(obs.deploymentId),
        links: this.linksOf(obs.deploymentId, o),
        restarting: this.restarting(obs.deploymentId),
      },
    );
    o.alertState = state;
    o.active = active;
    o.pendingAlerts = pending;
    const links = this.hostLinksOf(obs.deploymentId, o);
    o.verdict.observe({
      ts: obs.ts,
      units: o.units.read(obs, o.deployment.services),
      links,
      actions: this.actions.of(obs.deploymentId),
      workers: this.workersOf(obs.deploymentId),
    });
    for (const c of changes) this.core.addEvent(obs.deploymentId, alertEvent(obs.ts, c));
    if (values) this.core.emit('signals', { deploymentId: obs.deploymentId, ts: obs.ts, values });
    // Built for a window that listens, else only when asked for (getDashboard): a headless core (the CLI, the web
    // server with no tab open) does not build a verdict, KV details and what is not exposed every round for nobody.
    o.snapshot = undefined;
    o.round = { ts: obs.ts, values: latest };
    if (this.core.listenerCount('dashboard') > 0)
      this.core.emit('dashboard', this.push(o, this.snapshot(obs.deploymentId)));
    else o.pushed = undefined;
  }

  /** The round's snapshot as pushed: what changed since the previous round's push, else whole. */
  private push(o: Open, snap: DashboardSnapshot): DashboardPush {
    const before = o.pushed;
    o.pushed = snap;
    return dashboardPush(before, snap);
  }

  private snapshot(deploymentId: string): DashboardSnapshot {
    const o = this.need(deploymentId);
    if (o.snapshot) return o.snapshot;
    // Before the first round: what the store holds now, built afresh on every ask.
    if (!o.round)
      return this.buildSnapshot(deploymentId, o, this.clock.now(), this.store.latest(deploymentId));
    o.snapshot = this.buildSnapshot(deploymentId, o, o.round.ts, o.round.values);
    o.round = undefined;
    return o.snapshot;
  }

  /**
   * Each host's link as it stands now (every host of every unit, a multi-node worker's other nodes too): the
   * verdict does not judge a host it cannot read, and the alerts make a lost one one alert.
   */
  private hostLinksOf(
    deploymentId: string,
    o: Open,
  ): { hostId: string; label: string; status: ConnectionStatus }[] {
    const hosts = new Set<string>();
    for (const s of o.deployment.services) {
      hosts.add(s.hostId);
      for (const u of s.units ?? []) hosts.add(u.hostId);
    }
    return [...hosts].map((hostId) => {
      try {
        const conn = this.core.connectionOf(deploymentId, hostId);
        return { hostId, label: conn.label, status: conn.status };
      } catch (err) {
        // A fleet host that could not be reached when the deployment opened has no link at all.
        const status: ConnectionStatus = { state: 'failed', reason: (err as Error).message, at: 0 };
        return { hostId, label: hostId, status };
      }
    });
  }

  private linksOf(deploymentId: string, o: Open): AlertLink[] {
    return this.hostLinksOf(deploymentId, o).map((l) => linkOf(l.hostId, l.label, l.status));
  }

  /** A fleet's workers with their hosts, so the verdict and alerts name both ("decode-2 on gpu-b"). */
  private workersOf(deploymentId: string): FleetWorker[] | undefined {
    return fleetWorkersOf(this.core.deploymentOf(deploymentId).deployment.services);
  }

  private buildSnapshot(
    deploymentId: string,
    o: Open,
    ts: number,
    values: Record<string, number | null>,
  ): DashboardSnapshot {
    return dashboardSnapshot(
      {
        values,
        growth: (key, ms) => this.store.growth(deploymentId, key, ms),
        kvMeta: (role) => this.store.kvMeta(deploymentId, role),
        routerWorkers: this.store.routerWorkers(deploymentId),
        notExposed: this.store.notExposed(deploymentId),
      },
      {
        deploymentId,
        ts,
        roles: o.roles,
        workers: this.workersOf(deploymentId),
        gpu: o.gpu,
        alerts: o.active,
        pendingAlerts: o.pendingAlerts,
        families: { ...o.families },
      },
      (input) => o.verdict.verdict(input, (since) => this.store.windowedSince(deploymentId, since)),
    );
  }

  /** A reading of the host's GPUs from the monitor: the GPU page's table, and history for its charts. */
  private onGpu(deploymentId: string, status: GpuStatus, hostId: string): void {
    const o = this.open.get(deploymentId);
    if (!o) return;
    // A new object per reading: the push sends the GPUs only when one of them changed.
    o.gpu = { ...o.gpu, [hostId]: status };
    if (status.gpus.length > 0 && status.ts !== null) {
      const values = this.store.ingestGpu(deploymentId, status.ts, status.gpus, hostId);
      this.core.emit('signals', { deploymentId, ts: status.ts, values });
    }
  }

  private async followJournal(deploymentId: string, role: Role, lines: number): Promise<JournalFollowResult> {
    const o = this.need(deploymentId);
    const unit = this.unitOf(o, role);
    const followId = randomUUID();
    const conn = this.core.connectionOf(deploymentId);
    const tail = this.core.journalTail(deploymentId, unit);
    // Bounded: a window closed without unfollowing must not keep the tail reading forever.
    if (this.followers.size >= MAX_FOLLOWERS) {
      const [oldest] = this.followers.keys();
      this.followers.get(oldest)?.sub.dispose();
      this.followers.delete(oldest);
    }
    const sub = tail.subscribe(
      {
        onLines: (l) => this.core.emit('journal', { followId, lines: l }),
        onError: (error, hint) => this.core.emit('journal', { followId, lines: [], error, hint }),
      },
      { intervalMs: this.opts.journalIntervalMs ?? 1000 },
    );
    this.followers.set(followId, { deploymentId, sub });
    try {
      const backlog = await sub.backlog;
      return { followId, unit, command: tail.command, lines: lines > 0 ? backlog.slice(-lines) : [] };
    } catch (err) {
      sub.dispose();
      this.followers.delete(followId);
      throw new ApiError(
        'journal-failed',
        `could not read the journal of ${unit} on ${conn.label}: ${(err as Error).message}`,
        'Check that the SSH user may read the journal (groups systemd-journal or adm).',
      );
    }
  }

  /**
   * Every unit of one fleet worker, each through the journal tail of its own host's monitor (one follow per
   * host, shared with the recorder), merged in time order and labelled with host and node rank.
   */
  private async followWorkerJournal(
    deploymentId: string,
    worker: string,
    lines: number,
  ): Promise<JournalFollowResult> {
    const o = this.need(deploymentId);
    const svc = o.deployment.services.find((s) => (s.id ?? s.role) === worker);
    if (!svc)
      throw new ApiError(
        'unknown-worker',
        `${o.deployment.name} has no worker or router "${worker}"`,
        `Its workers are ${o.deployment.services.map((s) => s.id ?? s.role).join(', ')}.`,
      );
    const units = svc.units ?? [{ hostId: svc.hostId, unit: svc.unit, nodeRank: 0 }];
    if (units.some((u) => u.unit === ''))
      throw new ApiError(
        'journal-failed',
        `${worker}: its unit is not known (its host could not be read when the deployment opened)`,
        'Reconnect once the host is reachable.',
      );
    const followId = randomUUID();
    if (this.followers.size >= MAX_FOLLOWERS) {
      const [oldest] = this.followers.keys();
      this.followers.get(oldest)?.sub.dispose();
      this.followers.delete(oldest);
    }
    const label = (u: (typeof units)[number], l: JournalEntry[]): JournalEntry[] =>
      l.map((x) => ({ ...x, host: u.hostId, ...(units.length > 1 ? { nodeRank: u.nodeRank } : {}) }));
    const parts = units.map((u) => {
      let tail;
      try {
        tail = this.core.journalTail(deploymentId, u.unit, u.hostId);
      } catch (err) {
        throw new ApiError('journal-failed', `${u.unit} on ${u.hostId}: ${(err as Error).message}`);
      }
      const sub = tail.subscribe(
        {
          onLines: (l) => this.core.emit('journal', { followId, lines: label(u, l) }),
          onError: (error, hint) =>
            this.core.emit('journal', { followId, lines: [], error: `${u.hostId}: ${error}`, hint }),
        },
        { intervalMs: this.opts.journalIntervalMs ?? 1000 },
      );
      return { u, tail, sub };
    });
    const sub = { backlog: Promise.resolve([]), dispose: () => parts.forEach((p) => p.sub.dispose()) };
    this.followers.set(followId, { deploymentId, sub });
    try {
      // The last lines of each unit, not of all: a quiet node-rank-1 unit would vanish behind a chatty rank 0.
      const backlogs = await Promise.all(
        parts.map(async (p) => label(p.u, lines > 0 ? (await p.sub.backlog).slice(-lines) : [])),
      );
      const all = backlogs.flat().sort((a, b) => a.ts - b.ts);
      return {
        followId,
        unit: units.map((u) => `${u.hostId}/${u.unit}`).join(' '),
        command: parts.map((p) => `${p.u.hostId}: ${p.tail.command}`).join('\n'),
        lines: all,
      };
    } catch (err) {
      sub.dispose();
      this.followers.delete(followId);
      throw new ApiError(
        'journal-failed',
        `could not read the journal of ${worker}: ${(err as Error).message}`,
        'Check that the SSH user may read the journal (groups systemd-journal or adm).',
      );
    }
  }

  /**
   * The journal of ±span around a moment: each unit on its own host — a worker's units (both nodes of a
   * multi-node one), a role's workers, or every unit — labelled by host (when there are several) and node rank.
   */
  private async journalAround(
    deploymentId: string,
    ts: number,
    spanMs: number,
    role?: Role,
    worker?: string,
  ): Promise<JournalAroundResult> {
    const o = this.need(deploymentId);
    const hosts = this.unitJournals(deploymentId, o, role, worker);
    // Lines are labelled by host only where there is more than one to tell apart.
    const manyHosts =
      new Set(o.deployment.services.flatMap((s) => (s.units ?? [s]).map((u) => u.hostId))).size > 1;
    return journalAround(
      hostsJournal(hosts, journalWindowCommand, (out) => parseJournalJson(out).lines, { label: manyHosts }),
      ts,
      spanMs,
    );
  }

  /** The units to read around a moment, grouped by the host each runs on. */
  private unitJournals(deploymentId: string, o: Open, role?: Role, worker?: string): HostJournal[] {
    const services = o.deployment.services.filter((s) =>
      worker !== undefined ? (s.id ?? s.role) === worker : role === undefined || s.role === role,
    );
    if (services.length === 0)
      throw worker !== undefined
        ? new ApiError(
            'unknown-worker',
            `${o.deployment.name} has no worker or router "${worker}"`,
            `Its workers are ${o.deployment.services.map((s) => s.id ?? s.role).join(', ')}.`,
          )
        : new ApiError('unknown-role', `${o.deployment.name} has no ${role} service`);
    const byHost = new Map<string, Map<string, number | undefined>>();
    for (const s of services) {
      const units = s.units ?? [{ hostId: s.hostId, unit: s.unit, nodeRank: 0 }];
      for (const u of units) {
        if (u.unit === '') continue;
        const m = byHost.get(u.hostId) ?? new Map<string, number | undefined>();
        m.set(u.unit, units.length > 1 ? u.nodeRank : undefined);
        byHost.set(u.hostId, m);
      }
    }
    return [...byHost].map(([hostId, units]) =>
      this.hostJournal(
        deploymentId,
        hostId,
        [...units].map(([unit, nodeRank]) => ({ unit, nodeRank })),
      ),
    );
  }

  private hostJournal(
    deploymentId: string,
    hostId: string | undefined,
    units: HostJournal['units'],
  ): HostJournal {
    return {
      hostId: hostId ?? '',
      units,
      run: async (command) => {
        const conn = this.core.connectionOf(deploymentId, hostId);
        const res = await conn
          .exec(command, { timeoutMs: 15_000, maxBytes: 8 * 1024 * 1024 })
          .catch((err: Error) => {
            throw new ApiError(
              'journal-failed',
              `could not read the journal on ${conn.label}: ${err.message}`,
              'Try again once the connection is back.',
            );
          });
        if (res.exitCode !== 0 && !res.stdout.trim())
          throw new ApiError(
            'journal-failed',
            `journalctl failed on ${conn.label}: ${res.stderr.trim().slice(0, 200) || `exit ${res.exitCode}`}`,
            'Check that the SSH user may read the journal (groups systemd-journal or adm).',
          );
        return res.stdout;
      },
    };
  }

  private unitOf(o: Open, role: Role): string {
    const s = o.deployment.services.find((x) => x.role === role);
    if (!s) throw new ApiError('unknown-role', `${o.deployment.name} has no ${role} service`);
    return s.unit;
  }

  private need(deploymentId: string): Open {
    const o = this.open.get(deploymentId);
    if (!o)
      throw new ApiError(
        'unknown-deployment',
        `no open deployment "${deploymentId}"`,
        'Open it again from the start screen.',
      );
    return o;
  }
}

/** A link as the alerts read it: up only while connected; when and how it is down otherwise. */
function linkOf(hostId: string, label: string, s: ConnectionStatus): AlertLink {
  switch (s.state) {
    case 'connected':
      return { hostId, label, up: true };
    case 'stale':
      return { hostId, label, up: false, since: s.since, detail: `not answering: ${s.reason}` };
    case 'reconnecting':
      return {
        hostId,
        label,
        up: false,
        since: s.since,
        detail: `reconnecting, attempt ${s.attempt} (last error: ${s.lastError})`,
      };
    case 'connecting':
      return { hostId, label, up: false, detail: `connecting, attempt ${s.attempt}` };
    case 'failed':
      return { hostId, label, up: false, since: s.at, detail: `not retrying: ${s.reason}` };
    case 'idle':
      return { hostId, label, up: false, detail: 'not connected' };
  }
}

/**
 * An alert's change as a timeline event. Only what needs someone's attention notifies: a start that is not
 * expected, the end of an alert that was notified. A quiet start says what made it expected.
 */
function alertEvent(ts: number, c: AlertChange): TimelineEntry {
  const a = c.alert;
  const quietStart = c.type === 'fired' && !c.notify;
  return {
    ts,
    kind: 'alert',
    severity: c.type === 'fired' && c.notify ? a.severity : 'info',
    ...(a.role ? { role: a.role } : {}),
    ...(a.host ? { hostId: a.host } : {}),
    title:
      c.type === 'resolved'
        ? `resolved: ${a.title}`
        : c.type === 'ended'
          ? `ended: ${a.title}`
          : c.type === 'updated'
            ? `changed: ${a.title}`
            : a.title,
    detail: [
      quietStart && a.expected ? `expected — ${a.expected} in progress` : null,
      c.reason ?? null,
      a.detail,
    ]
      .filter(Boolean)
      .join('; '),
    alert: {
      key: a.key,
      ruleId: a.ruleId,
      change: c.type,
      notify: c.notify,
      ...(quietStart && a.expected ? { expected: a.expected } : {}),
    },
  };
}
