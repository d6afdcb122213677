// The restart feature as an API service: plans, starts, follows, cancels and lists restarts of prefill,
// decode, router or the whole PD stack. Guard rails live here: read-only mode, one restart per service at a
// time (a second request for the same target joins the running one), no restart while disconnected, and
// every action and step recorded on the deployment's timeline with who, what, result and duration.
import os from 'node:os';
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
import { ROLES, type HostConfig, type Role } from '@shared/domain';
import type { StoredRestartSettings } from '@shared/api/settings';
import type { SettingCell } from '../config/setting-cell';
import type { RestartingUnit } from '../actions/restarting';
import type { ServiceHost, TimelineEntry } from './service-host';
import { ApiError } from '../api-error';
import { systemClock, type Clock } from '../clock';
import type { LatestScrape } from '../actions/impact';
import { probeDrain, type DrainProbe, type RouterRegistration } from '../actions/drain';
import { buildPlan } from '../actions/plan';
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

const PUSH_EVERY_MS = 200;
const HEARTBEAT_MS = 1000;

function osUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    // No passwd entry for this uid (containers): the environment is the next best witness.
    return process.env.USER ?? process.env.USERNAME ?? `uid ${process.getuid?.() ?? '?'}`;
  }
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
  pushTimer: ReturnType<typeof setTimeout> | null;
  /** Pushes a snapshot every second while running, so clients show the elapsed time on the host's clock. */
  heartbeat: ReturnType<typeof setInterval> | null;
  done: Promise<void>;
}

export class RestartService {
  private settings: RestartSettings;
  private readonly scrapes = new Map<string, Map<Role, LatestScrape>>();
  private readonly identities = new Map<string, HostIdentity>();
  private readonly ops = new Map<string, Tracked>();
  /** `${deploymentId}:${role}` → id of the running operation that restarts it. */
  private readonly busy = new Map<string, string>();
  private readonly starting = new Map<string, Promise<StartRestartResult>>();
  private readonly offs: Array<() => void> = [];
  /** Another action on a deployment (a rolling restart) that a restart must not run beside; see guardWith. */
  private otherAction: (deploymentId: string) => string | null = () => null;

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
    const onScrape = (e: Parameters<typeof this.rememberScrape>[0]): void => this.rememberScrape(e);
    const onClosed = ({ deploymentId }: { deploymentId: string }): void => this.forget(deploymentId);
    core.hooks.on('scrape', onScrape);
    core.hooks.on('closed', onClosed);
    this.offs.push(
      () => core.hooks.off('scrape', onScrape),
      () => core.hooks.off('closed', onClosed),
    );
  }

  handlers(): { [K in keyof RestartRequests]: RestartRequests[K] } {
    return {
      // A recording refuses these itself ("… is a recording"); every other id is this service's to answer.
      planRestart: async (a) => {
        this.core.deployments.guard(a.deploymentId, 'planRestart');
        return this.planRestart(a);
      },
      startRestart: async (a) => {
        this.core.deployments.guard(a.deploymentId, 'startRestart');
        return this.startRestart(a);
      },
      getRestart: (a) => this.getRestart(a),
      listRestarts: (a) => this.listRestarts(a),
      cancelRestart: (a) => this.cancelRestart(a),
      getRestartSettings: () => this.getRestartSettings(),
      setRestartSettings: (a) => this.setRestartSettings(a),
    };
  }

  /**
   * Refuses restarts while `busy` names another action on the deployment (the roll service's running roll), so
   * a one-service restart never takes down a worker a roll counts on.
   */
  guardWith(busy: (deploymentId: string) => string | null): void {
    this.otherAction = busy;
  }

  /** The running restart of a deployment, in words, or null: what a roll must not start beside. */
  runningOn(deploymentId: string): string | null {
    for (const t of this.ops.values())
      if (t.run.init.deploymentId === deploymentId && !t.run.finished)
        return `a restart of ${targetText(t.run.init.target)} (operation ${t.run.id})`;
    return null;
  }

  dispose(): void {
    for (const off of this.offs.splice(0)) off();
    for (const t of this.ops.values()) {
      if (t.pushTimer) clearTimeout(t.pushTimer);
      if (t.heartbeat) clearInterval(t.heartbeat);
    }
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
    const d = this.core.deployments.resolve(args.deploymentId);
    const { host, config: deployment, latest } = d;
    const conn = d.connection();
    const connected = conn.isConnected;
    const identity = connected
      ? await this.identity(args.deploymentId)
      : (this.identities.get(args.deploymentId) ?? null);
    const drain = new Map<Role, DrainProbe>();
    const units = new Map<Role, UnitSnapshot>();
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
      scrapes: this.scrapes.get(args.deploymentId) ?? new Map(),
      drain,
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

  /** The units a restart is restarting on the deployment now (every role of a running operation's target). */
  restarting(deploymentId: string): RestartingUnit[] {
    const out: RestartingUnit[] = [];
    for (const role of ROLES) {
      const run = this.ops.get(this.busy.get(`${deploymentId}:${role}`) ?? '')?.run;
      if (run)
        out.push({
          role,
          current: true,
          what: `restart of ${targetText(run.init.target)} by ${run.init.requestedBy} (operation ${run.id})`,
        });
    }
    return out;
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
    const conn = this.core.deployments.resolve(args.deploymentId).connection();
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
    const other = this.otherAction(args.deploymentId);
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
    const heartbeat = setInterval(() => this.push(id, false), HEARTBEAT_MS);
    heartbeat.unref?.();
    const tracked: Tracked = { run, pushTimer: null, heartbeat, done: Promise.resolve() };
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
      journalOf: (unit) => this.core.deployments.resolve(args.deploymentId).journalTail(unit),
      pacer: { clock, pollMs: this.opts.pollMs ?? 1000, minRealGapMs: this.opts.minRealGapMs ?? 100 },
      drain: drainRegs,
    }).finally(() => this.finished(run));
    this.push(id, true);
    return { operation: run.snapshot(), joined: false };
  }

  private finished(run: RestartRun): void {
    const t = this.ops.get(run.id);
    if (t?.heartbeat) clearInterval(t.heartbeat);
    if (t) t.heartbeat = null;
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
    const t = this.ops.get(id);
    if (!t) return;
    const emit = (): void => {
      t.pushTimer = null;
      this.core.emit('restartProgress', t.run.snapshot());
    };
    if (urgent) {
      if (t.pushTimer) clearTimeout(t.pushTimer);
      emit();
    } else if (!t.pushTimer) {
      t.pushTimer = setTimeout(emit, PUSH_EVERY_MS);
      t.pushTimer.unref?.();
    }
  }

  private record(deploymentId: string, e: TimelineEntry): void {
    try {
      // The timeline is on the core's clock. A demo run faster than real time waits on the demo's clock,
      // whose timestamps would land minutes after the recorded data; the event happens now.
      this.core.addEvent(deploymentId, { ...e, ts: this.core.clock.now() });
    } catch (err) {
      // The deployment was closed while its restart ended; the event has no timeline left to go on.
      if ((err as { code?: string }).code !== 'unknown-deployment') throw err;
    }
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
        .resolve(deploymentId)
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

  private rememberScrape(e: {
    deploymentId: string;
    ts: number;
    role: Role;
    exposition: LatestScrape['exposition'];
  }): void {
    let m = this.scrapes.get(e.deploymentId);
    if (!m) this.scrapes.set(e.deploymentId, (m = new Map()));
    m.set(e.role, { ts: e.ts, exposition: e.exposition });
  }

  private forget(deploymentId: string): void {
    this.scrapes.delete(deploymentId);
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
