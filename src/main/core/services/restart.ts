// The restart feature as an API service: plans, starts, follows, cancels and lists restarts of prefill,
// decode, router or the whole PD stack. Guard rails live here: read-only mode, one restart per service at a
// time (a second request for the same target joins the running one), no restart while disconnected, and
// every action and step recorded on the deployment's timeline with who, what, result and duration.
import { randomBytes } from 'node:crypto';
import type {
  RestartOperation,
  RestartPlan,
  RestartRequests,
  RestartSettings,
  RestartSettingsPatch,
  RestartTarget,
  StartRestartResult,
} from '@shared/contract';
import type { HostConfig, Role, ServiceConfig } from '@shared/domain';
import type { StoredRestartSettings } from '@shared/api/settings';
import type { SettingCell } from '../config/setting-cell';
import type { RestartingUnit } from '../actions/restarting';
import type { ServiceHost, TimelineEntry } from './service-host';
import { osUser, ProgressPush, recordOperationEvent, RunningActions } from './operations';
import { ApiError } from '../api-error';
import { systemClock, type Clock } from '../clock';
import type { LatestScrape } from '../actions/impact';
import { MonitorScrapes, scrapeKey, type ScrapeFeed } from '../monitor/scrape-feed';
import { probeDrain, type DrainProbe, type RouterRegistration } from '../actions/drain';
import { buildPlan } from '../actions/plan';
import { judgeGpuOwners, readGpuOwners, type GpuOwners } from '../actions/gpu-owners';
import { isLinkError } from '../actions/wait';
import { applyPatch, defaultSettings, SettingsError } from '../actions/restart-settings';
import { formatDuration, RestartRun, type StepEnd } from '../actions/operation';
import { runRestart } from '../actions/orchestrator';
import {
  followShowCommand,
  IDENTITY_COMMAND,
  parseIdentity,
  parseUnitSnapshot,
  type HostIdentity,
  type UnitSnapshot,
} from '../actions/unit-commands';

/** What the restart service is given: deployments, pushes, the timeline, scrapes and closes, the time. */
export type RestartHost = Pick<ServiceHost, 'deployments' | 'emit' | 'addEvent' | 'hooks' | 'clock'>;

export interface RestartServiceOptions {
  /** The clock a deployment's restarts run on (the demo host's accelerated clock for the demo). */
  clockFor?: (host: HostConfig) => Clock;
  /** Polling interval of `systemctl show` and friends, on that clock. */
  pollMs?: number;
  /** Never poll faster than this in real time, whatever the clock's speed. */
  minRealGapMs?: number;
  /** Start in read-only mode that clients cannot switch off (a shell flag or PD_CONSOLE_READ_ONLY=1). */
  lockReadOnly?: boolean;
  settings?: RestartSettingsPatch;
  /** The saved restart settings (the settings file): read at start, written on every change. */
  store?: SettingCell<StoredRestartSettings>;
  /** Who is acting, for the record; defaults to the OS user running PD Console. */
  userName?: () => string;
  /** Finished operations kept per deployment for getRestart/listRestarts. */
  keepFinished?: number;
}

/** Saved settings as this run applies them: a read-only lock wins over what was saved. */
function effective(stored: StoredRestartSettings | undefined, locked: boolean): RestartSettings {
  const base = { ...defaultSettings(), ...(stored && structuredClone(stored)) };
  return { ...base, readOnly: locked || base.readOnly, readOnlyLocked: locked };
}

function targetText(t: RestartTarget): string {
  return t === 'stack' ? 'the PD stack' : t;
}

interface Tracked {
  run: RestartRun;
  push: ProgressPush;
  done: Promise<void>;
  /** Takes it off the deployment's running actions. */
  ended: () => void;
}

export class RestartService {
  private settings: RestartSettings;
  private readonly scrapes: MonitorScrapes;
  private readonly identities = new Map<string, HostIdentity>();
  private readonly ops = new Map<string, Tracked>();
  /** `${deploymentId}:${role}` → id of the running operation that restarts it. */
  private readonly busy = new Map<string, string>();
  private readonly starting = new Map<string, Promise<StartRestartResult>>();
  private readonly offs: Array<() => void> = [];
  /** What runs on each deployment: this service's restarts and the roll service's rolls. */
  readonly running = new RunningActions();

  constructor(
    private readonly core: RestartHost,
    private readonly opts: RestartServiceOptions = {},
  ) {
    const locked = opts.lockReadOnly ?? process.env.PD_CONSOLE_READ_ONLY === '1';
    this.settings = applyPatch(effective(opts.store?.get(), locked), opts.settings ?? {});
    if (opts.store)
      this.offs.push(
        opts.store.onChange((stored) => {
          this.settings = effective(stored, locked);
          this.core.emit('restartSettings', structuredClone(this.settings));
        }),
      );
    this.scrapes = new MonitorScrapes(core.hooks);
    const onClosed = ({ deploymentId }: { deploymentId: string }): void => this.forget(deploymentId);
    core.hooks.on('closed', onClosed);
    this.offs.push(
      () => this.scrapes.dispose(),
      () => core.hooks.off('closed', onClosed),
    );
  }

  handlers(): { [K in keyof RestartRequests]: RestartRequests[K] } {
    return {
      // A recording refuses these itself ("… is a recording"); every other id is this service's to answer.
      planRestart: async (a) => {
        this.core.deployments.live(a.deploymentId, 'planRestart');
        return this.planRestart(a);
      },
      startRestart: async (a) => {
        this.core.deployments.live(a.deploymentId, 'startRestart');
        return this.startRestart(a);
      },
      getRestart: (a) => this.getRestart(a),
      listRestarts: (a) => this.listRestarts(a),
      cancelRestart: (a) => this.cancelRestart(a),
      getRestartSettings: () => this.getRestartSettings(),
      setRestartSettings: (a) => this.setRestartSettings(a),
    };
  }

  /** The deployment's monitor scrapes, as a restart or a roll reads them. */
  scrapesOf(deploymentId: string): ScrapeFeed {
    return this.scrapes.of(deploymentId);
  }

  dispose(): void {
    for (const off of this.offs.splice(0)) off();
    for (const t of this.ops.values()) t.push.dispose();
  }

  async getRestartSettings(): Promise<RestartSettings> {
    return structuredClone(this.settings);
  }

  async setRestartSettings(patch: RestartSettingsPatch): Promise<RestartSettings> {
    try {
      this.settings = applyPatch(this.settings, patch);
    } catch (err) {
      if (err instanceof SettingsError)
        throw new ApiError('read-only-locked', err.message, 'Restart PD Console without --read-only.');
      throw err;
    }
    const store = this.opts.store;
    if (store) {
      const { readOnlyLocked, readOnly, ...rest } = this.settings;
      // A read-only lock is of this run only: the file keeps what the operator chose.
      await store.set({
        ...rest,
        readOnly: readOnlyLocked ? (patch.readOnly ?? store.get().readOnly) : readOnly,
      });
    }
    this.core.emit('restartSettings', structuredClone(this.settings));
    return structuredClone(this.settings);
  }

  async planRestart(args: {
    deploymentId: string;
    target: RestartTarget;
    drain?: boolean;
  }): Promise<RestartPlan> {
    const d = this.core.deployments.live(args.deploymentId, 'planRestart');
    const { host, config: deployment, latest } = d;
    const conn = d.connection();
    const connected = conn.isConnected;
    const identity = connected
      ? await this.identity(args.deploymentId)
      : (this.identities.get(args.deploymentId) ?? null);
    const drain = new Map<Role, DrainProbe>();
    const units = new Map<Role, UnitSnapshot>();
    const gpuOwners = new Map<Role, GpuOwners>();
    if (connected) {
      const planned = args.target === 'stack' ? deployment.services.map((s) => s.role) : [args.target];
      await Promise.all(
        deployment.services
          .filter((s) => planned.includes(s.role))
          .map(async (s) => {
            try {
              const res = await conn.exec(followShowCommand(s.unit), {
                timeoutMs: 10_000,
                maxBytes: 64 * 1024,
              });
              units.set(s.role, parseUnitSnapshot(res.stdout, s.unit));
            } catch {
              // The plan falls back to the monitor's latest observation of this unit.
              units.delete(s.role);
            }
          }),
      );
      await Promise.all(
        deployment.services
          .filter((s) => planned.includes(s.role) && s.role !== 'router' && s.gpus?.length)
          .map(async (s) => {
            const unit = {
              hostId: s.hostId,
              hostLabel: host.label,
              unit: s.unit,
              nodeRank: 0,
              gpus: s.gpus!,
            };
            try {
              gpuOwners.set(
                s.role,
                judgeGpuOwners(await readGpuOwners(conn, unit, (err) => isLinkError(err, conn))),
              );
            } catch (err) {
              gpuOwners.set(s.role, {
                kind: 'unreadable',
                detail: `the link to ${host.label} dropped while reading who holds GPUs ${s.gpus!.join(',')}: ${(err as Error).message}`,
              });
            }
          }),
      );
      const router = deployment.services.find((s) => s.role === 'router');
      const roles = args.target === 'stack' ? (['prefill', 'decode'] as const) : [args.target];
      await Promise.all(
        roles
          .filter((r): r is 'prefill' | 'decode' => r !== 'router')
          .map(async (role) => {
            const worker = deployment.services.find((s) => s.role === role);
            if (!worker) return;
            try {
              drain.set(role, await probeDrain(conn.httpAgent(), router, worker));
            } catch (err) {
              drain.set(role, {
                supported: false,
                detail: `could not ask the router: ${(err as Error).message}`,
              });
            }
          }),
      );
    }
    const status = conn.status;
    return buildPlan({
      deployment,
      host,
      target: args.target,
      drainRequested: args.drain ?? false,
      settings: this.settings,
      connected,
      connectionText: status.state === 'reconnecting' ? `reconnecting: ${status.lastError}` : status.state,
      identity,
      latest,
      units,
      scrapes: this.latestScrapes(args.deploymentId, deployment.services),
      drain,
      gpuOwners,
      running: this.runningFor(args.deploymentId, args.target),
      now: this.clockOf(host).now(),
    });
  }

  startRestart(args: {
    deploymentId: string;
    target: RestartTarget;
    drain?: boolean;
    requestedBy?: string;
  }): Promise<StartRestartResult> {
    if (this.settings.readOnly)
      return Promise.reject(
        new ApiError(
          'read-only',
          'PD Console is in read-only mode: restarts are switched off',
          this.settings.readOnlyLocked
            ? 'It was started with --read-only.'
            : 'Switch read-only off in the settings.',
        ),
      );
    const key = `${args.deploymentId}:${args.target}`;
    const joinable = this.runningFor(args.deploymentId, args.target);
    if (joinable && joinable.target === args.target)
      return Promise.resolve({ operation: this.ops.get(joinable.operationId)!.run.snapshot(), joined: true });
    // Two clicks racing each other: the second waits for the first and joins it.
    const pending = this.starting.get(key);
    if (pending) return pending.then((r) => ({ operation: r.operation, joined: true }));
    const p = this.start(args).finally(() => this.starting.delete(key));
    this.starting.set(key, p);
    return p;
  }

  async getRestart(args: { operationId: string }): Promise<RestartOperation> {
    const t = this.ops.get(args.operationId);
    if (!t)
      throw new ApiError(
        'unknown-restart',
        `no restart operation "${args.operationId}"`,
        'It finished long ago or belonged to a deployment that was closed; see the event log.',
      );
    return t.run.snapshot();
  }

  async listRestarts(args: { deploymentId: string }): Promise<RestartOperation[]> {
    const runs = [...this.ops.values()]
      .map((t) => t.run)
      .filter((r) => r.init.deploymentId === args.deploymentId);
    return runs
      .sort((a, b) => Number(a.finished) - Number(b.finished) || b.startedAt - a.startedAt)
      .map((r) => r.snapshot());
  }

  async cancelRestart(args: { operationId: string }): Promise<RestartOperation> {
    const t = this.ops.get(args.operationId);
    if (!t) return this.getRestart(args);
    const run = t.run;
    if (!run.finished && !run.cancelRequested) {
      run.cancelRequested = true;
      this.record(run.init.deploymentId, {
        ts: run.now(),
        kind: 'action',
        severity: 'warning',
        title: `${this.who()} asked to cancel the restart of ${targetText(run.init.target)}`,
        detail: `operation ${run.id}; takes effect before the next step that acts on the host`,
      });
      run.changed(true);
    }
    return run.snapshot();
  }

  /** Resolves when the operation has ended (tests and the CLI wait on this). */
  whenDone(operationId: string): Promise<RestartOperation> {
    const t = this.ops.get(operationId);
    if (!t) return Promise.reject(new ApiError('unknown-restart', `no restart operation "${operationId}"`));
    return t.done.then(() => t.run.snapshot());
  }

  private async start(args: {
    deploymentId: string;
    target: RestartTarget;
    drain?: boolean;
    requestedBy?: string;
  }): Promise<StartRestartResult> {
    const conn = this.core.deployments.live(args.deploymentId, 'startRestart').connection();
    if (!conn.isConnected)
      throw new ApiError(
        'not-connected',
        `not connected to ${conn.label}: a restart could not be followed, so none is started`,
        'Wait for the connection to come back (see the connection indicator), then try again.',
      );
    const plan = await this.planRestart(args);
    if (plan.blockedReason) throw new ApiError('restart-refused', plan.blockedReason);
    // From here on, synchronous until the operation is registered: no other request can slip in between.
    const roles = plan.stages.flat();
    const same = this.runningFor(args.deploymentId, args.target);
    if (same && same.target === args.target)
      return { operation: this.ops.get(same.operationId)!.run.snapshot(), joined: true };
    const other = this.running.other(args.deploymentId, (id) => this.ops.has(id));
    if (other)
      throw new ApiError(
        'restart-running',
        `${other} is running on this deployment`,
        'Wait for it to finish or cancel it, then try again.',
      );
    const clash = roles.map((r) => this.busy.get(`${args.deploymentId}:${r}`)).find(Boolean);
    if (clash) {
      const other = this.ops.get(clash)!.run;
      throw new ApiError(
        'restart-running',
        `a restart of ${targetText(other.init.target)} (operation ${other.id}) is already running on ${plan.hostLabel}`,
        'Wait for it to finish or cancel it, then try again.',
      );
    }
    const { host, config: deployment } = this.core.deployments.resolve(args.deploymentId);
    const clock = this.clockOf(host);
    const requestedBy = args.requestedBy ?? this.who();
    const drainRegs = new Map<Role, RouterRegistration>();
    if (args.drain && plan.drainAvailable) {
      for (const role of roles) {
        if (role === 'router') continue;
        const probe = await probeDrain(
          conn.httpAgent(),
          deployment.services.find((s) => s.role === 'router'),
          deployment.services.find((s) => s.role === role)!,
        );
        if (probe.registration) drainRegs.set(role, probe.registration);
      }
      // The router may have changed since the plan: check the clash again after these awaits.
      const late = roles.map((r) => this.busy.get(`${args.deploymentId}:${r}`)).find(Boolean);
      if (late) return { operation: this.ops.get(late)!.run.snapshot(), joined: true };
    }
    const id = `r-${clock.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    const run: RestartRun = new RestartRun(
      {
        id,
        deploymentId: args.deploymentId,
        hostLabel: plan.hostLabel,
        target: args.target,
        requestedBy,
        drain: drainRegs.size > 0,
        stages: plan.stages,
        services: plan.services.map((s) => {
          const lastLoadMs = this.core.deployments
            .resolve(args.deploymentId)
            .latest?.services.find((o) => o.unit === s.unit)?.evidence?.loadsMs[0];
          return {
            role: s.role,
            unit: s.unit,
            steps: s.steps.filter(
              (st) => drainRegs.has(s.role) || (st.kind !== 'drain' && st.kind !== 'readd'),
            ),
            ...(lastLoadMs !== undefined ? { lastLoadMs } : {}),
          };
        }),
      },
      clock,
      (urgent) => this.push(id, urgent),
      (e) => this.onStepEnd(run, e),
    );
    const tracked: Tracked = {
      run,
      push: new ProgressPush(() => this.core.emit('restartProgress', run.snapshot())),
      done: Promise.resolve(),
      ended: this.running.begin(
        args.deploymentId,
        id,
        `a restart of ${targetText(args.target)} (operation ${id})`,
        // Every unit of the operation's target, for as long as it runs.
        (): RestartingUnit[] =>
          roles.map((role) => ({
            role,
            current: true,
            what: `restart of ${targetText(args.target)} by ${requestedBy} (operation ${id})`,
          })),
      ),
    };
    this.ops.set(id, tracked);
    for (const r of roles) this.busy.set(`${args.deploymentId}:${r}`, id);
    this.record(args.deploymentId, {
      ts: run.startedAt,
      kind: 'action',
      severity: 'info',
      title: `${requestedBy} started a restart of ${targetText(args.target)} on ${plan.hostLabel}`,
      detail: `operation ${id}: ${plan.services.map((s) => s.command).join(' ; ')}${drainRegs.size ? ' (with drain)' : ''}`,
    });
    tracked.done = runRestart({
      run,
      plan,
      deployment,
      conn,
      journalOf: (unit) => this.core.deployments.live(args.deploymentId, 'startRestart').journalTail(unit),
      pacer: { clock, pollMs: this.opts.pollMs ?? 1000, minRealGapMs: this.opts.minRealGapMs ?? 100 },
      scrapes: this.scrapes.of(args.deploymentId),
      drain: drainRegs,
    }).finally(() => this.finished(run));
    this.push(id, true);
    return { operation: run.snapshot(), joined: false };
  }

  private finished(run: RestartRun): void {
    const t = this.ops.get(run.id);
    t?.push.ended();
    t?.ended();
    for (const [k, v] of this.busy) if (v === run.id) this.busy.delete(k);
    const took = formatDuration(run.elapsedMs());
    const f = run.failure;
    this.record(run.init.deploymentId, {
      ts: run.now(),
      kind: 'action',
      severity: run.state === 'succeeded' ? 'info' : run.state === 'cancelled' ? 'warning' : 'error',
      title: `restart of ${targetText(run.init.target)} ${run.state === 'unknown' ? 'ended with unknown outcome' : run.state} after ${took}`,
      detail: [f?.message, f?.hint, `requested by ${run.init.requestedBy}`, `operation ${run.id}`]
        .filter(Boolean)
        .join(' · '),
    });
    this.push(run.id, true);
    this.trimHistory(run.init.deploymentId);
  }

  private onStepEnd(run: RestartRun, e: StepEnd): void {
    const { step } = e;
    if (step.state === 'skipped' && !step.detail) return;
    this.record(run.init.deploymentId, {
      ts: run.now(),
      kind: 'restart-step',
      severity:
        step.state === 'failed'
          ? 'error'
          : step.state === 'unknown' || step.state === 'cancelled'
            ? 'warning'
            : 'info',
      role: e.role,
      title: `${e.role} restart: ${step.label} — ${step.state}${step.state === 'skipped' ? '' : ` (${formatDuration(e.durationMs)})`}`,
      detail: [step.detail, `${e.unit}`, `by ${run.init.requestedBy}`, `operation ${run.id}`]
        .filter(Boolean)
        .join(' · '),
    });
  }

  private push(id: string, urgent: boolean): void {
    this.ops.get(id)?.push.changed(urgent);
  }

  private record(deploymentId: string, e: TimelineEntry): void {
    recordOperationEvent(this.core, deploymentId, e);
  }

  private runningFor(
    deploymentId: string,
    target: RestartTarget,
  ): { operationId: string; target: RestartTarget } | undefined {
    const roles: Role[] = target === 'stack' ? ['prefill', 'decode', 'router'] : [target];
    for (const r of roles) {
      const id = this.busy.get(`${deploymentId}:${r}`);
      if (id) return { operationId: id, target: this.ops.get(id)!.run.init.target };
    }
    return undefined;
  }

  private async identity(deploymentId: string): Promise<HostIdentity | null> {
    const known = this.identities.get(deploymentId);
    if (known) return known;
    try {
      const res = await this.core.deployments
        .live(deploymentId, 'a restart')
        .connection()
        .exec(IDENTITY_COMMAND, { timeoutMs: 10_000, maxBytes: 16 * 1024 });
      const id = parseIdentity(res.stdout);
      if (id) this.identities.set(deploymentId, id);
      return id;
    } catch {
      // Not knowing the uid only means assuming a non-root user with sudo; the plan then says "sudo".
      return null;
    }
  }

  /** The monitor's latest scrape of each service of the deployment, by role: what the impact preview reads. */
  private latestScrapes(deploymentId: string, services: readonly ServiceConfig[]): Map<Role, LatestScrape> {
    const feed = this.scrapes.of(deploymentId);
    const out = new Map<Role, LatestScrape>();
    for (const s of services) {
      const r = feed.latest(scrapeKey(s));
      if (r) out.set(s.role, r);
    }
    return out;
  }

  private forget(deploymentId: string): void {
    this.identities.delete(deploymentId);
    for (const t of this.ops.values())
      if (t.run.init.deploymentId === deploymentId && !t.run.finished) t.run.cancelRequested = true;
  }

  private trimHistory(deploymentId: string): void {
    const keep = this.opts.keepFinished ?? 20;
    const done = [...this.ops.values()]
      .filter((t) => t.run.init.deploymentId === deploymentId && t.run.finished)
      .sort((a, b) => b.run.startedAt - a.run.startedAt);
    for (const t of done.slice(keep)) this.ops.delete(t.run.id);
  }

  private clockOf(host: HostConfig): Clock {
    return this.opts.clockFor?.(host) ?? systemClock;
  }

  private who(): string {
    return (this.opts.userName ?? osUser)();
  }
}
