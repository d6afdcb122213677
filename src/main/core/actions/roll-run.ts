// Runs a restart plan of workers, stage by stage (a roll: one worker a stage; a plan may put several in one,
// restarted together). Per worker: where the router can, drain it (out of the router's pool, its running
// requests finish); see that its GPUs hold only its own processes (on the running worker: otherwise stopping it
// frees nothing), stop its units (node rank ≥ 1 first), see its GPUs and ports free, start its units (rank 0
// last, followed to /health 200 by the one-service restart), register a drained worker again, and only when the
// router reports it healthy go on, after checking the router still has another healthy worker of that role.
// A failure stops the run once the worker's stage siblings finished, and names the worker, the step and what
// still serves. A host link that drops pauses the run (the commands here are idempotent and re-sent once it is
// back); if it stays down past the link timeout the outcome is unknown, never a success that was not seen.
// Cancel takes effect between stages, or while draining (the worker goes back, nothing stopped): a worker
// whose units were stopped is always started again.
import type {
  RestartFailure,
  RestartOperation,
  RollFailure,
  RollHealth,
  RollOperation,
  RollPlan,
  RollStepView,
  RollUnit,
  RollWorker,
  RollWorkerView,
} from '@shared/contract';
import type { ExecOptions, ExecResult } from '../ssh/connection';
import { formatDuration } from './operation';
import { classifyCommandError, describeUnit, followShowCommand, parseUnitSnapshot } from './unit-commands';
import { gpuAppsCommand, LISTENING_COMMAND, parseGpuApps, parseListeningPorts } from './roll-commands';
import { judgeGpuOwners, readGpuOwners } from './gpu-owners';
import { keepsServingCheck, rankZero, startRefusal } from './roll-plan';
import { isLinkError, pace, type Pacer } from './wait';
import { outputExcerpt } from '../ssh/output-excerpt';
import { drainReading, drainRemoveFailed, putBack, readdFailed, type WorkerDrain } from './drain';

/** What a roll needs of one host's SSH link (an SshConnection satisfies it). */
export interface RollLink {
  readonly label: string;
  readonly isConnected: boolean;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
}

export interface FollowResult {
  state: 'succeeded' | 'failed' | 'unknown' | 'cancelled';
  failure?: RestartFailure;
}

export interface RollIo {
  link(hostId: string): RollLink;
  /** The drain of a worker whose plan has drain and re-add steps (the router supports it). */
  drainOf?(worker: RollWorker): WorkerDrain | undefined;
  /**
   * The router's view of every worker, by worker id: with `fresh`, from the monitor's next scrape of the router
   * (a wait for a change); otherwise its latest. Throws when the router cannot be read.
   */
  readHealth(fresh?: boolean): Promise<Map<string, RollHealth>>;
  /**
   * Sends `command` (the start of the worker's rank-0 unit) and follows the unit to active, /health 200 and the
   * router's health: the one-service restart. `onProgress` gets its snapshots (journal, load progress, link).
   */
  followStart(args: {
    worker: RollWorker;
    unit: RollUnit;
    command: string;
    onProgress: (op: RestartOperation) => void;
  }): Promise<FollowResult>;
  pacer: Pacer;
}

export interface RollTimeouts {
  /** How long a drain waits for the worker's running requests to reach 0; past it the restart goes ahead. */
  drainMs: number;
  /** From the stop command until systemd reports the unit inactive. */
  stopMs: number;
  /** Until the stopped worker's GPUs run no process and its ports are free. */
  freeMs: number;
  /** From the start of a node rank ≥ 1 unit until systemd reports it running. */
  startMs: number;
  /** Until the router reports the restarted worker healthy. */
  routerMs: number;
  /** How long the roll stays paused for a host link that dropped before the outcome counts as unknown. */
  linkMs: number;
}

export const DEFAULT_ROLL_TIMEOUTS: RollTimeouts = {
  drainMs: 5 * 60_000,
  stopMs: 3 * 60_000,
  freeMs: 2 * 60_000,
  startMs: 3 * 60_000,
  routerMs: 5 * 60_000,
  linkMs: 10 * 60_000,
};

const COMMAND_TIMEOUT_MS = 30_000;
const HEALTHY_IN_A_ROW = 2;

type Probe =
  | { kind: 'done'; detail: string }
  | { kind: 'pending'; detail: string }
  | { kind: 'failed'; message: string; hint?: string };

/** How a worker that did not come back ended; a cancelled one has no failure to tell. */
type WorkerEnd =
  { state: 'failed' | 'unknown'; failure: Omit<RollFailure, 'stillServing'> } | { state: 'cancelled' };

const RANK: Record<WorkerEnd['state'], number> = { failed: 3, unknown: 2, cancelled: 1 };

class StepFailed extends Error {
  constructor(
    readonly state: 'failed' | 'unknown' | 'cancelled',
    readonly failure: Omit<RollFailure, 'stillServing' | 'workerId' | 'worker'>,
  ) {
    super(failure.message);
  }
}

export interface RollRunOptions {
  id: string;
  plan: RollPlan;
  workers: RollWorker[];
  io: RollIo;
  timeouts?: Partial<RollTimeouts>;
  /** Every change: the caller decides how often to push. */
  onChange?: (op: RollOperation) => void;
  /**
   * The operator chose to roll where the GPU check cannot be read: such a check is skipped (and said so)
   * instead of stopping the roll. A check that was read and failed stops it regardless.
   */
  withoutGpuCheck?: boolean;
}

export class RollRun {
  private readonly op: RollOperation;
  private readonly io: RollIo;
  private readonly t: RollTimeouts;
  /** Workers this roll took out of the router: only these are registered again. */
  private readonly drained = new Set<string>();
  readonly done: Promise<RollOperation>;

  constructor(private readonly o: RollRunOptions) {
    this.io = o.io;
    this.t = { ...DEFAULT_ROLL_TIMEOUTS, ...o.timeouts };
    this.op = {
      id: o.id,
      target: o.plan.target,
      targetText: o.plan.targetText,
      state: 'running',
      startedAt: this.now(),
      workers: o.plan.workers.map((w) => ({
        workerId: w.workerId,
        name: w.name,
        role: w.role,
        state: 'pending',
        steps: w.steps.map((s) => ({ ...s, state: 'pending' })),
      })),
      cancelRequested: false,
      elapsedMs: 0,
      summary: '',
    };
    this.op.summary = this.summary();
    const refusal = startRefusal(o.plan, o.withoutGpuCheck);
    this.done = refusal
      ? Promise.resolve(
          this.refuse(
            refusal,
            o.plan.refused
              ? o.plan.refusedHint
              : 'Roll without the GPU check only if you know nothing else runs on those GPUs.',
          ),
        )
      : this.run();
  }

  snapshot(): RollOperation {
    const elapsedMs = (this.op.endedAt ?? this.now()) - this.op.startedAt;
    return structuredClone({ ...this.op, elapsedMs, summary: this.summary() });
  }

  /** Stops before the next worker; the worker being restarted is finished first. */
  cancel(): RollOperation {
    if (this.op.state === 'running' || this.op.state === 'paused') {
      this.op.cancelRequested = true;
      this.changed();
    }
    return this.snapshot();
  }

  private now(): number {
    return this.io.pacer.clock.now();
  }

  private changed(): void {
    this.o.onChange?.(this.snapshot());
  }

  private refuse(reason: string, hint?: string): RollOperation {
    this.end('failed', {
      workerId: '',
      worker: '',
      step: 'preflight',
      message: `refused: ${reason}`,
      hint: hint ? `Nothing was stopped. ${hint}` : 'Nothing was stopped.',
      stillServing: [],
    });
    return this.snapshot();
  }

  private end(state: Exclude<RollOperation['state'], 'running' | 'paused'>, failure?: RollFailure): void {
    this.op.state = state;
    this.op.endedAt = this.now();
    delete this.op.current;
    delete this.op.paused;
    if (failure) this.op.failure = failure;
    for (const w of this.op.workers) {
      if (w.state === 'pending') w.state = state === 'cancelled' ? 'cancelled' : 'skipped';
      for (const s of w.steps)
        if (s.state === 'pending') s.state = w.state === 'cancelled' ? 'cancelled' : 'skipped';
    }
    this.changed();
  }

  /** The plan's stages as worker views; without stages, one worker at a time in plan order. */
  private stages(): RollWorkerView[][] {
    const byId = new Map(this.op.workers.map((v) => [v.workerId, v]));
    return (
      this.o.plan.stages?.map((ids) => ids.map((id) => byId.get(id)!)) ?? this.op.workers.map((v) => [v])
    );
  }

  private async run(): Promise<RollOperation> {
    try {
      for (const stage of this.stages()) {
        if (this.op.cancelRequested) {
          this.end('cancelled');
          return this.snapshot();
        }
        // A worker that fails does not abandon a sibling mid-restart: that one is followed to its end first.
        const settled = await Promise.allSettled(stage.map((view) => this.runWorker(view, stage.length > 1)));
        const bug = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (bug) throw bug.reason;
        const ends = settled.map((r) => (r as PromiseFulfilledResult<WorkerEnd | null>).value);
        const worst = ends.reduce<WorkerEnd | null>(
          (a, b) => (b && (!a || RANK[b.state] > RANK[a.state]) ? b : a),
          null,
        );
        if (worst?.state === 'cancelled') {
          this.end('cancelled');
          return this.snapshot();
        }
        if (worst) {
          this.end(worst.state, { ...worst.failure, stillServing: await this.stillServing() });
          return this.snapshot();
        }
      }
      this.end('succeeded');
    } catch (err) {
      // A bug, not a host answer: say so rather than leave the roll "running" forever.
      for (const v of this.op.workers) if (v.state === 'running') v.state = 'failed';
      this.end('failed', {
        workerId: this.op.current ?? '',
        worker: this.o.workers.find((w) => w.id === this.op.current)?.name ?? '',
        step: 'internal',
        message: `the roll stopped on an internal error: ${(err as Error).message}`,
        hint: 'Check the units on the hosts before acting again; please report this error.',
        stillServing: await this.stillServing(),
      });
    }
    return this.snapshot();
  }

  /** Gate, then every step of one worker; null when it came back. `parallel`: siblings run in its stage. */
  private async runWorker(view: RollWorkerView, parallel: boolean): Promise<WorkerEnd | null> {
    const worker = this.o.workers.find((w) => w.id === view.workerId)!;
    this.op.current = worker.id;
    const gate = await this.gate(worker);
    if (gate) {
      view.state = 'skipped';
      this.changed();
      return { state: 'failed', failure: gate };
    }
    view.state = 'running';
    this.changed();
    try {
      for (const step of view.steps) await this.runStep(worker, view, step);
      view.state = 'succeeded';
      this.changed();
      return null;
    } catch (err) {
      if (!(err instanceof StepFailed)) throw err;
      view.state = err.state;
      this.changed();
      if (err.state === 'cancelled') return { state: 'cancelled' };
      const down = view.steps.some((s) => s.kind === 'stop' && s.state !== 'pending');
      const f = err.failure;
      const after = parallel ? 'the workers of the stages after it' : 'the workers after it';
      return {
        state: err.state,
        failure: {
          workerId: worker.id,
          worker: worker.name,
          ...f,
          message: `${worker.name}: ${f.message}`,
          hint: [
            f.hint,
            down && err.state === 'failed'
              ? `${worker.name} was stopped by this roll and may still be down; ${after} were not touched.`
              : undefined,
          ]
            .filter(Boolean)
            .join(' '),
        },
      };
    }
  }

  /** Before stopping `w`: the router must have another healthy worker of its role (live view, not the plan's). */
  private async gate(w: RollWorker): Promise<Omit<RollFailure, 'stillServing'> | null> {
    const others = this.o.workers.filter((x) => x.role === w.role && x.id !== w.id);
    if (w.role === 'router' || !others.length) return null;
    let health: Map<string, RollHealth>;
    try {
      health = await this.io.readHealth();
    } catch (err) {
      return {
        workerId: w.id,
        worker: w.name,
        step: 'preflight',
        message: `not stopping ${w.name}: the router's view of its workers could not be read (${(err as Error).message}), so it is not known that another ${w.role} worker serves`,
        hint: `Check the router, then start the roll again; ${w.name} was not touched.`,
      };
    }
    const check = keepsServingCheck(w, this.o.workers, health);
    if (!check || check.ok) return null;
    return {
      workerId: w.id,
      worker: w.name,
      step: 'preflight',
      message: `not stopping ${w.name}: it would leave the router no healthy ${w.role} worker — ${check.detail}`,
      hint: `${w.name} was not touched. Find out why the others are unhealthy (their journals, GET /workers on the router) before restarting more.`,
    };
  }

  private async stillServing(): Promise<string[]> {
    try {
      const health = await this.io.readHealth();
      return this.o.workers.filter((w) => health.get(w.id)?.state === 'healthy').map((w) => w.name);
    } catch {
      // The failure message stands without the list; an empty list never claims anything serves.
      return [];
    }
  }

  private async runStep(w: RollWorker, view: RollWorkerView, step: RollStepView): Promise<void> {
    step.state = 'running';
    step.startedAt = this.now();
    this.changed();
    const detail = await this.stepBody(w, view, step);
    step.state = detail.skipped ? 'skipped' : 'succeeded';
    step.detail = detail.text;
    step.endedAt = this.now();
    this.changed();
  }

  private async stepBody(
    w: RollWorker,
    view: RollWorkerView,
    step: RollStepView,
  ): Promise<{ text: string; skipped?: boolean }> {
    const unit = w.units.find((u) => u.unit === step.unit && u.hostId === step.hostId);
    switch (step.kind) {
      case 'drain':
        return { text: await this.drain(w, step) };
      case 'readd':
        return this.readd(w);
      case 'gpu-owners':
        return this.gpuOwners(w, step, unit!);
      case 'stop':
        return { text: await this.stop(step, unit!) };
      case 'gpus-free':
        return this.gpusFree(step, unit!);
      case 'port-free':
        return this.portFree(step);
      case 'start':
        return {
          text:
            unit === rankZero(w)
              ? await this.startFollowed(w, view, step, unit)
              : await this.startRank(step, unit!),
        };
      case 'router':
        return { text: await this.routerHealthy(w, view, step) };
    }
  }

  // ---- the steps -----------------------------------------------------------------------------------------

  /**
   * Takes the worker out of the router, then waits until it runs no request or the drain timeout passes (the
   * restart goes ahead then). A cancel here puts it back: nothing was restarted.
   */
  private async drain(w: RollWorker, step: RollStepView): Promise<string> {
    const d = this.io.drainOf?.(w);
    if (!d) throw new Error(`${w.name} has a drain step but no drain`);
    if (this.op.cancelRequested) this.cancelStep(step, 'cancelled before anything was changed');
    step.detail = `removing ${d.url} from the router`;
    this.changed();
    try {
      await d.remove();
      this.drained.add(w.id);
    } catch (err) {
      throw new StepFailed('failed', { step: 'drain', ...drainRemoveFailed(d, err) });
    }
    const deadline = this.now() + this.t.drainMs;
    for (;;) {
      if (this.op.cancelRequested) {
        const text = await putBack(d);
        this.drained.delete(w.id);
        this.cancelStep(step, text);
      }
      let reading: { done: boolean; detail: string };
      try {
        reading = drainReading(await d.running());
      } catch (err) {
        return `removed from the router; could not check its running requests (${(err as Error).message}); restarting anyway`;
      }
      if (reading.done) return reading.detail;
      if (this.now() >= deadline)
        // The policy is "until running requests reach 0 or the timeout": past it, the restart goes ahead.
        return `${reading.detail} after ${formatDuration(this.t.drainMs)}; restarting anyway`;
      if (step.detail !== reading.detail) {
        step.detail = reading.detail;
        this.changed();
      }
      await pace(this.io.pacer);
    }
  }

  /** Ends `step` as cancelled, saying what was left as it was; the worker stops there. */
  private cancelStep(step: RollStepView, text: string): never {
    step.state = 'cancelled';
    step.detail = text;
    step.endedAt = this.now();
    throw new StepFailed('cancelled', { step: step.kind, message: text });
  }

  /** Registers a drained worker with the router again, as it was. */
  private async readd(w: RollWorker): Promise<{ text: string; skipped?: boolean }> {
    const d = this.io.drainOf?.(w);
    if (!d || !this.drained.has(w.id))
      return { text: 'not drained: nothing to register again', skipped: true };
    try {
      await d.add();
      this.drained.delete(w.id);
    } catch (err) {
      throw new StepFailed('failed', { step: 'readd', ...readdFailed(d, err) });
    }
    return { text: `the router accepted ${d.url}` };
  }

  private async stop(step: RollStepView, u: RollUnit): Promise<string> {
    await this.send(step, u, step.command!);
    return this.poll(
      step,
      u.hostId,
      this.t.stopMs,
      async (link) => {
        const s = parseUnitSnapshot((await link.exec(followShowCommand(u.unit), EXEC)).stdout, u.unit);
        if (s.loadState === 'not-found')
          return {
            kind: 'failed',
            message: `${u.unit} not found on ${u.hostLabel}: systemd has no unit by that name`,
          };
        if (s.activeState === 'inactive' || s.activeState === 'failed')
          return { kind: 'done', detail: `${u.unit} stopped (${describeUnit(s)})` };
        return { kind: 'pending', detail: `${u.unit} ${describeUnit(s)}` };
      },
      () => ({
        message: `${u.unit} on ${u.hostLabel} did not stop within ${formatDuration(this.t.stopMs)}`,
        hint: `See \`systemctl status ${u.unit}\` on ${u.hostLabel}; systemd kills it after the unit's TimeoutStopSec.`,
      }),
    );
  }

  /**
   * On the running worker, before its first unit stops: the compute processes on this unit's GPUs are all
   * its own. Read once (a dropped link pauses and reads again); what it finds is final for this worker.
   */
  private async gpuOwners(
    w: RollWorker,
    step: RollStepView,
    u: RollUnit,
  ): Promise<{ text: string; skipped?: boolean }> {
    let skipped = false;
    const text = await this.poll(
      step,
      u.hostId,
      this.t.freeMs,
      async (link) => {
        const verdict = judgeGpuOwners(
          await readGpuOwners(link, { ...u, gpus: step.gpus ?? u.gpus }, (err) => isLinkError(err, link)),
        );
        switch (verdict.kind) {
          case 'own':
            return { kind: 'done', detail: verdict.detail };
          case 'unreadable':
            if (this.o.withoutGpuCheck) {
              skipped = true;
              return {
                kind: 'done',
                detail: `not checked, as chosen (roll without the GPU check): ${verdict.detail}`,
              };
            }
            return {
              kind: 'failed',
              message: `the GPU check could not be read, so ${w.name} was not stopped: ${verdict.detail}`,
              hint: `Roll without the GPU check only if you know nothing else runs on those GPUs. ${UNTOUCHED}`,
            };
          case 'foreign':
            return {
              kind: 'failed',
              message: `${verdict.detail}: stopping ${w.name} would free nothing, so it was not stopped`,
              hint: `${verdict.hint} ${UNTOUCHED}`,
            };
          case 'garbage':
            return {
              kind: 'failed',
              message: `the GPU check failed, so ${w.name} was not stopped: ${verdict.detail}`,
              hint: `Run the command by hand on ${u.hostLabel} to see what answers instead. ${UNTOUCHED}`,
            };
        }
      },
      (last) => ({
        message: `the GPU check on ${u.hostLabel} could not be made within ${formatDuration(this.t.freeMs)}, so ${w.name} was not stopped (${last})`,
        hint: UNTOUCHED,
      }),
    );
    return skipped ? { text, skipped } : { text };
  }

  private async gpusFree(step: RollStepView, u: RollUnit): Promise<{ text: string; skipped?: boolean }> {
    const gpus = step.gpus ?? u.gpus;
    const list = gpus.join(',');
    let skipped = false;
    const text = await this.poll(
      step,
      u.hostId,
      this.t.freeMs,
      async (link) => {
        const res = await link.exec(gpuAppsCommand(gpus), EXEC);
        const apps = res.exitCode === 0 ? parseGpuApps(res.stdout) : null;
        if (res.exitCode === 0 && !apps)
          return {
            kind: 'failed',
            message: `nvidia-smi --query-compute-apps on ${u.hostLabel} answered something that is not its CSV table: ${outputExcerpt(res.stdout)}`,
            hint: `Whether GPUs ${list} are free cannot be read: \`nvidia-smi\` on ${u.hostLabel} by hand, then start ${u.unit} once they are.`,
          };
        if (!apps) {
          const said = (res.stderr || res.stdout).trim().split('\n')[0] ?? '';
          const detail = `nvidia-smi on ${u.hostLabel} did not list the compute processes (exit ${res.exitCode}${said ? `: ${said}` : ''})`;
          if (this.o.withoutGpuCheck) {
            skipped = true;
            return { kind: 'done', detail: `not checked, as chosen (roll without the GPU check): ${detail}` };
          }
          return { kind: 'pending', detail };
        }
        if (!apps.length)
          return { kind: 'done', detail: `no compute process on GPUs ${list} of ${u.hostLabel}` };
        return {
          kind: 'pending',
          detail: `GPUs ${list} of ${u.hostLabel} still run ${apps.map((a) => `pid ${a.pid}${a.usedMiB !== null ? ` (${a.usedMiB} MiB)` : ''}`).join(', ')}`,
        };
      },
      (last) => ({
        message: `GPUs ${list} on ${u.hostLabel} were not free within ${formatDuration(this.t.freeMs)} after ${u.unit} stopped (${last})`,
        hint: `A process of the old worker (or another one) still holds the GPUs: \`nvidia-smi\` on ${u.hostLabel}, end it, then start ${u.unit}.`,
      }),
    );
    return skipped ? { text, skipped } : { text };
  }

  private async portFree(step: RollStepView): Promise<{ text: string; skipped?: boolean }> {
    const port = step.port!;
    let missing: string | null = null;
    const text = await this.poll(
      step,
      step.hostId!,
      this.t.freeMs,
      async (link) => {
        const res = await link.exec(LISTENING_COMMAND, EXEC);
        if (res.exitCode === 127) {
          missing = `ss is not installed on ${step.hostLabel}: port ${port} could not be checked (install iproute2)`;
          return { kind: 'done', detail: missing };
        }
        const ports = res.exitCode === 0 ? parseListeningPorts(res.stdout) : null;
        if (!ports)
          return {
            kind: 'pending',
            detail: `ss -ltn on ${step.hostLabel} answered exit ${res.exitCode}: ${res.stderr.trim().slice(0, 120)}`,
          };
        if (!ports.has(port))
          return { kind: 'done', detail: `nothing listens on port ${port} of ${step.hostLabel}` };
        return { kind: 'pending', detail: `port ${port} of ${step.hostLabel} is still in use` };
      },
      (last) => ({
        message: `port ${port} on ${step.hostLabel} was still in use ${formatDuration(this.t.freeMs)} after the worker stopped (${last})`,
        hint: `\`ss -ltnp 'sport = :${port}'\` on ${step.hostLabel} shows who holds it; the new server could not bind it.`,
      }),
    );
    // Without ss the start goes ahead: a port still held makes the new server fail, and that is reported.
    return missing ? { text, skipped: true } : { text };
  }

  private async startRank(step: RollStepView, u: RollUnit): Promise<string> {
    await this.send(step, u, step.command!);
    return this.poll(
      step,
      u.hostId,
      this.t.startMs,
      async (link) => {
        const s = parseUnitSnapshot((await link.exec(followShowCommand(u.unit), EXEC)).stdout, u.unit);
        if (s.activeState === 'failed' || s.subState === 'auto-restart')
          return {
            kind: 'failed',
            message: `${u.unit} on ${u.hostLabel} failed to start (${describeUnit(s)})`,
            hint: `journalctl -u ${u.unit} -n 200 on ${u.hostLabel}`,
          };
        // A node rank ≥ 1 serves nothing itself: running is all it can show until rank 0 is up.
        if (s.activeState === 'active' || s.activeState === 'activating')
          return { kind: 'done', detail: `${u.unit} ${describeUnit(s)}` };
        return { kind: 'pending', detail: `${u.unit} ${describeUnit(s)}` };
      },
      () => ({
        message: `${u.unit} on ${u.hostLabel} did not start within ${formatDuration(this.t.startMs)}`,
        hint: `See \`systemctl status ${u.unit}\` on ${u.hostLabel}.`,
      }),
    );
  }

  private async startFollowed(
    w: RollWorker,
    view: RollWorkerView,
    step: RollStepView,
    u: RollUnit,
  ): Promise<string> {
    await this.whenLinkUp(step, u.hostId);
    const res = await this.io.followStart({
      worker: w,
      unit: u,
      command: step.command!,
      onProgress: (op) => {
        view.follow = op;
        const running = op.services[0]?.steps.find((s) => s.state === 'running');
        if (running?.detail) step.detail = running.detail;
        if (op.link === 'down') this.pause(u.hostLabel, `the link dropped while ${u.unit} starts`);
        else this.resume();
        this.changed();
      },
    });
    this.resume();
    if (res.state === 'succeeded') {
      const steps = view.follow?.services[0]?.steps ?? [];
      return (
        steps
          .filter((s) => s.state === 'succeeded')
          .map((s) => s.detail ?? s.label)
          .join('; ') || `${u.unit} started`
      );
    }
    const f = res.failure;
    throw new StepFailed(res.state === 'unknown' ? 'unknown' : 'failed', {
      step: 'start',
      message: f?.message ?? `${u.unit} did not come back (${res.state})`,
      ...(f?.hint ? { hint: f.hint } : {}),
      ...(f?.journalTail ? { journalTail: f.journalTail } : {}),
    });
  }

  private async routerHealthy(w: RollWorker, view: RollWorkerView, step: RollStepView): Promise<string> {
    if (w.role === 'router') {
      const ready = view.follow?.services[0]?.steps.find((s) => s.kind === 'router');
      return ready?.detail ?? 'router ready';
    }
    let inARow = 0;
    // Read through the router's host: a link that drops there pauses the roll, and past the link timeout the
    // worker's return is unknown, not a router that "did not report it healthy".
    const router = this.o.workers.find((x) => x.role === 'router');
    return this.poll(
      step,
      router ? rankZero(router).hostId : null,
      this.t.routerMs,
      async () => {
        let h: RollHealth | undefined;
        try {
          h = (await this.io.readHealth(true)).get(w.id);
        } catch (err) {
          inARow = 0;
          return { kind: 'pending', detail: `could not read the router: ${(err as Error).message}` };
        }
        // Twice in a row: one reading may be the router's state from before it noticed the restart.
        inARow = h?.state === 'healthy' ? inARow + 1 : 0;
        if (inARow >= HEALTHY_IN_A_ROW) return { kind: 'done', detail: h!.detail };
        return { kind: 'pending', detail: h?.detail ?? `the router reports nothing about ${w.id}` };
      },
      (last) => ({
        message: `the router did not report ${w.name} healthy within ${formatDuration(this.t.routerMs)} (${last})`,
        hint: `${w.name} answers /health but the router does not route to it: GET /workers on the router, and its journal.`,
      }),
    );
  }

  // ---- links, pauses and polling -------------------------------------------------------------------------

  private pause(hostLabel: string, reason: string): void {
    if (this.op.paused) return;
    this.op.state = 'paused';
    this.op.paused = { hostLabel, since: this.now(), reason };
    this.changed();
  }

  private resume(): void {
    if (!this.op.paused) return;
    this.op.state = 'running';
    delete this.op.paused;
    this.changed();
  }

  private lostContact(step: RollStepView, hostLabel: string, downSince: number): StepFailed {
    return new StepFailed('unknown', {
      step: step.kind,
      message: `lost contact with ${hostLabel} during "${step.label}" for ${formatDuration(this.now() - downSince)}; the outcome is unknown${step.detail ? ` — last seen: ${step.detail}` : ''}`,
      hint: `Nothing was observed after the link dropped. Once ${hostLabel} is reachable, check the worker's units (systemctl status) before acting again.`,
    });
  }

  /** Waits (paused) until the host's link is up; past the link timeout the step's outcome is unknown. */
  private async whenLinkUp(step: RollStepView, hostId: string): Promise<void> {
    const link = this.io.link(hostId);
    if (link.isConnected) return;
    const since = this.now();
    while (!link.isConnected) {
      this.pause(link.label, `lost contact with ${link.label}; waiting for the link to come back`);
      if (this.now() - since >= this.t.linkMs) throw this.lostContact(step, link.label, since);
      await pace(this.io.pacer);
    }
    this.resume();
  }

  /** Sends a stop/start command; one cut off by a dropped link is sent again once the link is back. */
  private async send(step: RollStepView, u: RollUnit, command: string): Promise<void> {
    for (;;) {
      await this.whenLinkUp(step, u.hostId);
      const link = this.io.link(u.hostId);
      let res: ExecResult;
      try {
        res = await link.exec(command, { timeoutMs: COMMAND_TIMEOUT_MS, maxBytes: 64 * 1024 });
      } catch (err) {
        // stop and start are idempotent: sending again after a reconnect cannot do anything twice.
        if (isLinkError(err, link)) continue;
        throw new StepFailed('failed', {
          step: step.kind,
          message: `could not run \`${command}\` on ${u.hostLabel}: ${(err as Error).message}`,
        });
      }
      if (res.exitCode === 0) return;
      const stderr = res.stderr.trim();
      const kind = classifyCommandError(stderr, res.exitCode);
      const said = stderr ? `: ${stderr.split('\n').slice(0, 3).join(' ')}` : '';
      const why =
        kind === 'sudo-password'
          ? `sudo on ${u.hostLabel} asks for a password${said}`
          : kind === 'sudo-denied'
            ? `sudo on ${u.hostLabel} does not allow it${said}`
            : kind === 'unit-not-found'
              ? `${u.unit} not found on ${u.hostLabel}${said}`
              : `exit ${res.exitCode}${said}`;
      throw new StepFailed('failed', {
        step: step.kind,
        message: `\`${command}\` failed: ${why}`,
        hint:
          kind === 'sudo-password' || kind === 'sudo-denied'
            ? `Allow stop and start of the worker units without a password (sudoers, see docs/restart.md), or enable "polkit".`
            : `See \`systemctl status ${u.unit}\` on ${u.hostLabel}.`,
      });
    }
  }

  /**
   * Polls `probe` until done or the deadline. While the host's link is down the roll pauses and the
   * deadline waits too: the state after reconnecting decides. `hostId` null: the probe reads the router.
   */
  private async poll(
    step: RollStepView,
    hostId: string | null,
    timeoutMs: number,
    probe: (link: RollLink) => Promise<Probe>,
    onTimeout: (last: string) => { message: string; hint?: string },
  ): Promise<string> {
    let deadline = this.now() + timeoutMs;
    let downSince: number | null = null;
    for (;;) {
      const link = hostId === null ? null : this.io.link(hostId);
      let result: Probe | null = null;
      if (!link || link.isConnected) {
        try {
          result = await probe(link!);
        } catch (err) {
          if (!link || !isLinkError(err, link))
            result = { kind: 'pending', detail: `could not check: ${(err as Error).message}` };
        }
      }
      if (result && (!link || link.isConnected)) {
        if (downSince !== null) {
          // The time spent paused does not count against the step.
          deadline += this.now() - downSince;
          downSince = null;
          this.resume();
        }
        if (result.kind === 'done') return result.detail;
        if (result.kind === 'failed')
          throw new StepFailed('failed', {
            step: step.kind,
            message: result.message,
            ...(result.hint ? { hint: result.hint } : {}),
          });
        const last = result.detail;
        if (step.detail !== last) {
          step.detail = last;
          this.changed();
        }
        if (this.now() >= deadline) {
          const t = onTimeout(last);
          throw new StepFailed('failed', { step: step.kind, ...t });
        }
      } else {
        downSince ??= this.now();
        this.pause(
          link!.label,
          `lost contact with ${link!.label} during "${step.label}"; waiting for the link to come back`,
        );
        if (this.now() - downSince >= this.t.linkMs) throw this.lostContact(step, link!.label, downSince);
      }
      await pace(this.io.pacer);
    }
  }

  private summary(): string {
    const op = this.op;
    const took = formatDuration((op.endedAt ?? this.now()) - op.startedAt);
    const done = op.workers.filter((w) => w.state === 'succeeded').map((w) => w.name);
    switch (op.state) {
      case 'succeeded':
        return `restarted ${op.targetText} in ${took}: ${done.join(', ')}`;
      case 'cancelled':
        return `roll cancelled after ${took}${done.length ? `; restarted: ${done.join(', ')}` : '; nothing was restarted'}`;
      case 'failed':
      case 'unknown': {
        const f = op.failure;
        const serving = f?.stillServing.length ? `; still serving: ${f.stillServing.join(', ')}` : '';
        const what = op.state === 'unknown' ? 'outcome unknown' : 'stopped';
        return `roll ${what} after ${took}${f?.worker ? ` at ${f.worker}, step ${f.step}` : ''}: ${f?.message ?? ''}${serving}`;
      }
      default: {
        const paused = op.paused ? ` — paused: ${op.paused.reason}` : '';
        const running = op.workers.filter((w) => w.state === 'running');
        const doing = (w: RollWorkerView): string => {
          const step = w.steps.find((s) => s.state === 'running');
          return step ? (step.detail ?? step.label) : 'checking';
        };
        if (running.length > 1) {
          const cancel = op.cancelRequested ? ' — cancelling after these workers' : '';
          return `${running.map((w) => `${w.name}: ${doing(w)}`).join('; ')}${paused}${cancel} (${took})`;
        }
        const i = op.workers.findIndex((w) => w.workerId === op.current);
        const cur = op.workers[i];
        const cancel = op.cancelRequested ? ' — cancelling after this worker' : '';
        return cur
          ? `${cur.name} (${i + 1}/${op.workers.length}): ${doing(cur)}${paused}${cancel} (${took})`
          : `starting (${took})`;
      }
    }
  }
}

const EXEC = { timeoutMs: 15_000, maxBytes: 256 * 1024 };
const UNTOUCHED = 'Neither this worker nor the ones after it were touched.';
