// Rolling restarts as an API service: plans and runs rolls of one worker, a role one worker at a time, or the
// whole deployment, for the UI's restart dialog (the CLI runs the same prepareRoll). Guard rails here: read-only
// mode, one roll per deployment and none beside a one-service restart, no start over a dropped link, and
// the start, each worker and the end on the deployment's timeline.
import type { RollOperation, RollPlan, RollRequests, RollTarget, StartRollArgs } from '@shared/contract';
import type { AppEvent } from '@shared/domain';
import type { ServiceHost } from './service-host';
import { ApiError } from '../api-error';
import { formatDuration } from '../actions/operation';
import type { RollRun } from '../actions/roll-run';
import { prepareRoll } from '../actions/roll-session';
import { startRefusal } from '../actions/roll-plan';
import type { RestartService } from './restart';
import type { RestartingUnit } from '../actions/restarting';
import type { RollDeployments } from './roll-deployments';
import { osUser, ProgressPush, recordOperationEvent } from './operations';

/** What the roll service is given: the guard of recorded deployments, progress pushes, the timeline, the time. */
export type RollHost = Pick<ServiceHost, 'deployments' | 'emit' | 'addEvent' | 'clock'>;

export interface RollServiceOptions {
  /** Polling interval of the roll's checks, on the deployment's clock. */
  pollMs?: number;
  /** Never poll faster than this in real time, whatever the clock's speed. */
  minRealGapMs?: number;
  /** Who is acting, for the record; defaults to the OS user running PD Console. */
  userName?: () => string;
  /** Finished rolls kept per deployment for getRoll/listRolls. */
  keepFinished?: number;
}

interface TrackedRoll {
  deploymentId: string;
  run: RollRun;
  last: RollOperation;
  requestedBy: string;
  /** What its start, pause and end events are about: a role's roll marks that role's charts only. */
  scope: EventScope;
  push: ProgressPush;
  /** Takes it off the deployment's running actions. */
  ended: () => void;
}

// A roll's own events are about a role (or the whole deployment); a worker's end names the worker as well, by
// its service id, which is the roll's short name for it in a fleet (rollWorkersOfFleet).
type EventScope = Pick<AppEvent, 'role' | 'worker'>;

/** A role's or one worker's roll is about that role; a whole deployment's about every chart. */
function scopeOf(plan: RollPlan): EventScope {
  const first = plan.workers[0];
  if (plan.target.kind === 'role') return { role: plan.target.role };
  if (plan.target.kind === 'worker' && first) return { role: first.role };
  return {};
}

export class RollService {
  private readonly rolls = new Map<string, TrackedRoll>();
  /** Deployments with a roll being planned to start: a second start must not slip in during the awaits. */
  private readonly starting = new Set<string>();

  constructor(
    private readonly core: RollHost,
    private readonly restart: RestartService,
    private readonly deployments: RollDeployments,
    private readonly opts: RollServiceOptions = {},
  ) {}

  handlers(): { [K in keyof RollRequests]: RollRequests[K] } {
    return {
      // A recording refuses these itself ("… is a recording"); every other id is this service's to answer.
      planRoll: async (a) => this.guard(a.deploymentId, 'planRoll') ?? this.planRoll(a),
      startRoll: async (a) => this.guard(a.deploymentId, 'startRoll') ?? this.startRoll(a),
      getRoll: async (a) => this.guard(a.deploymentId, 'getRoll') ?? this.getRoll(a),
      listRolls: async (a) => this.guard(a.deploymentId, 'listRolls') ?? this.listRolls(a),
      cancelRoll: async (a) => this.guard(a.deploymentId, 'cancelRoll') ?? this.cancelRoll(a),
    };
  }

  private guard(deploymentId: string, action: string): undefined {
    this.core.deployments.live(deploymentId, action);
    return undefined;
  }

  async planRoll(args: { deploymentId: string; target: RollTarget }): Promise<RollPlan> {
    const prepared = await this.prepare(args.deploymentId, args.target);
    prepared.dispose();
    return prepared.plan;
  }

  async startRoll(args: StartRollArgs): Promise<RollOperation> {
    const { deploymentId } = args;
    const settings = await this.restart.getRestartSettings();
    if (settings.readOnly)
      throw new ApiError(
        'read-only',
        'read-only mode is on: nothing is restarted',
        'Switch read-only off in the restart settings (if this run allows it).',
      );
    this.refuseBusy(deploymentId);
    const down = this.deployments.linksDown(deploymentId);
    if (down.length)
      throw new ApiError(
        'not-connected',
        `not connected to ${down.join(', ')}: a roll could not be followed there, so none is started`,
        'Wait for the connection to come back (see the connection indicator), then try again.',
      );
    this.starting.add(deploymentId);
    try {
      const prepared = await this.prepare(deploymentId, args.target);
      const refusal = startRefusal(prepared.plan, args.withoutGpuCheck);
      if (refusal) {
        prepared.dispose();
        throw new ApiError(
          'restart-refused',
          refusal,
          prepared.plan.refused
            ? prepared.plan.refusedHint
            : 'Tick “Roll without the GPU check” only if you know nothing else runs on those GPUs.',
        );
      }
      const requestedBy = args.requestedBy ?? (this.opts.userName ?? osUser)();
      let tracked: TrackedRoll | null = null;
      const run = prepared.start(
        (op) => {
          if (tracked) this.changed(tracked, op);
        },
        { withoutGpuCheck: args.withoutGpuCheck === true },
      );
      const last = run.snapshot();
      tracked = {
        deploymentId,
        run,
        last,
        requestedBy,
        scope: scopeOf(prepared.plan),
        push: new ProgressPush(() => this.emitProgress(tracked!)),
        ended: this.restart.running.begin(
          deploymentId,
          prepared.id,
          `a rolling restart of ${last.targetText} (roll ${last.id})`,
          () => this.unitsOf(tracked!),
        ),
      };
      this.rolls.set(prepared.id, tracked);
      const t = tracked;
      this.record(deploymentId, {
        ...t.scope,
        severity: 'info',
        title: `${requestedBy} started a rolling restart of ${prepared.plan.targetText}`,
        detail: `roll ${prepared.id}: ${prepared.plan.workers.map((w) => w.name).join(' → ')}${
          args.withoutGpuCheck && prepared.plan.checks.some((c) => c.unreadable)
            ? ' · chosen: roll without the GPU check where it cannot be read'
            : ''
        }`,
      });
      void run.done.then((end) => this.finished(t, end)).finally(() => prepared.dispose());
      t.push.changed(true);
      return t.last;
    } finally {
      this.starting.delete(deploymentId);
    }
  }

  /** The workers of a running roll: the one it restarts now, and the others it takes in turn. */
  private unitsOf(t: TrackedRoll): RestartingUnit[] {
    const { deploymentId } = t;
    const op = t.last;
    const now = op.workers.find((w) => w.state === 'running');
    return op.workers.map((w) => ({
      role: w.role,
      ...this.workerScope(deploymentId, w.name),
      current: w === now,
      what: `rolling restart of ${op.targetText} by ${t.requestedBy}${now ? `: ${now.name}, ${op.workers.indexOf(now) + 1} of ${op.workers.length}` : ''} (roll ${op.id})`,
    }));
  }

  async getRoll(args: { deploymentId: string; rollId: string }): Promise<RollOperation> {
    return this.tracked(args).run.snapshot();
  }

  async listRolls(args: { deploymentId: string }): Promise<RollOperation[]> {
    return [...this.rolls.values()]
      .filter((t) => t.deploymentId === args.deploymentId)
      .map((t) => t.run.snapshot())
      .sort(
        (a, b) =>
          Number(b.state === 'running' || b.state === 'paused') -
            Number(a.state === 'running' || a.state === 'paused') || b.startedAt - a.startedAt,
      );
  }

  async cancelRoll(args: { deploymentId: string; rollId: string }): Promise<RollOperation> {
    const t = this.tracked(args);
    const op = t.run.cancel();
    t.push.changed(true);
    return op;
  }

  dispose(): void {
    for (const t of this.rolls.values()) t.push.dispose();
  }

  private async prepare(deploymentId: string, target: RollTarget) {
    const ctx = await this.deployments.contextOf(deploymentId);
    const settings = await this.restart.getRestartSettings();
    return prepareRoll(target, {
      ...ctx,
      settings,
      pollMs: this.opts.pollMs ?? 1000,
      minRealGapMs: this.opts.minRealGapMs ?? 100,
    });
  }

  private refuseBusy(deploymentId: string): void {
    const r = this.running(deploymentId);
    if (r || this.starting.has(deploymentId))
      throw new ApiError(
        'restart-running',
        r
          ? `a rolling restart of ${r.last.targetText} (roll ${r.last.id}) is already running on this deployment`
          : 'a rolling restart of this deployment is being started',
        'Wait for it to finish or cancel it, then try again.',
      );
    const restart = this.restart.running.other(deploymentId);
    if (restart)
      throw new ApiError(
        'restart-running',
        `${restart} is running on this deployment`,
        'Wait for it to finish or cancel it, then try again.',
      );
  }

  private running(deploymentId: string): TrackedRoll | undefined {
    for (const t of this.rolls.values())
      if (t.deploymentId === deploymentId && (t.last.state === 'running' || t.last.state === 'paused'))
        return t;
    return undefined;
  }

  private tracked(args: { deploymentId: string; rollId: string }): TrackedRoll {
    const t = this.rolls.get(args.rollId);
    if (!t || t.deploymentId !== args.deploymentId)
      throw new ApiError('unknown-roll', `no rolling restart "${args.rollId}" on this deployment`);
    return t;
  }

  /** Every change is kept; pushes go out at most every 200 ms, a worker's end or a pause at once. */
  private changed(t: TrackedRoll, op: RollOperation): void {
    const before = t.last;
    t.last = op;
    const urgent =
      op.state !== before.state ||
      op.current !== before.current ||
      Boolean(op.paused) !== Boolean(before.paused);
    for (const w of op.workers) {
      const was = before.workers.find((x) => x.workerId === w.workerId);
      if (was && was.state !== w.state && (w.state === 'succeeded' || w.state === 'failed'))
        this.record(t.deploymentId, {
          role: w.role,
          ...this.workerScope(t.deploymentId, w.name),
          severity: w.state === 'succeeded' ? 'info' : 'error',
          title: `rolling restart: ${w.name} ${w.state === 'succeeded' ? 'restarted and healthy' : 'failed'}`,
          detail: `roll ${op.id}`,
        });
    }
    if (op.paused && !before.paused)
      this.record(t.deploymentId, {
        ...t.scope,
        severity: 'warning',
        title: `rolling restart paused: ${op.paused.reason}`,
        detail: `roll ${op.id}`,
      });
    t.push.changed(urgent);
  }

  /**
   * `worker` for a fleet worker's event, so it marks that worker's charts; none for a one-host pair, whose
   * services carry no id (a roll names its workers by role there) and whose events are the role's.
   */
  private workerScope(deploymentId: string, name: string): Pick<AppEvent, 'worker'> {
    const services = this.deployments.servicesOf(deploymentId);
    return services?.some((s) => s.id === name) ? { worker: name } : {};
  }

  private emitProgress(t: TrackedRoll): void {
    t.last = t.run.snapshot();
    this.core.emit('rollProgress', { deploymentId: t.deploymentId, operation: t.last });
  }

  private finished(t: TrackedRoll, end: RollOperation): void {
    t.push.ended();
    t.ended();
    t.last = end;
    const f = end.failure;
    this.record(t.deploymentId, {
      ...t.scope,
      severity: end.state === 'succeeded' ? 'info' : end.state === 'cancelled' ? 'warning' : 'error',
      title: `rolling restart of ${end.targetText} ${end.state === 'unknown' ? 'ended with unknown outcome' : end.state} after ${formatDuration(end.elapsedMs)}`,
      detail: [
        f && `${f.worker}, step ${f.step}: ${f.message}`,
        f?.hint,
        f && `still serving: ${f.stillServing.join(', ') || 'none seen'}`,
        `requested by ${t.requestedBy}`,
        `roll ${end.id}`,
      ]
        .filter(Boolean)
        .join(' · '),
    });
    t.push.changed(true);
    const keep = this.opts.keepFinished ?? 10;
    const done = [...this.rolls.entries()]
      .filter(
        ([, x]) =>
          x.deploymentId === t.deploymentId && x.last.state !== 'running' && x.last.state !== 'paused',
      )
      .sort((a, b) => b[1].last.startedAt - a[1].last.startedAt);
    for (const [id] of done.slice(keep)) this.rolls.delete(id);
  }

  private record(
    deploymentId: string,
    e: EventScope & { severity: 'info' | 'warning' | 'error'; title: string; detail?: string },
  ): void {
    recordOperationEvent(this.core, deploymentId, { ...e, ts: 0, kind: 'action' });
  }
}
