// Restarting one service, step by step: (drain) → command → active → health → (re-add) → router.
// Each step starts only when the previous one was observed to succeed; each has a deadline; each ends with
// what was seen. The journal is followed alongside so the operator sees the model load as it happens.
import { START_LIMIT_HIT } from '../journal/unit-evidence';
import type { RestartFailure, RestartStepKind, RestartTimeouts } from '@shared/contract';
import type { Role, ServiceConfig } from '@shared/domain';
import type { SshConnection } from '../ssh/connection';
import type { UnitJournalTail } from '../journal/unit-tail';
import { checkHealth } from '../probes/health';
import { scrapeKey, type ScrapeFeed } from '../monitor/scrape-feed';
import {
  classifyCommandError,
  describeUnit,
  followShowCommand,
  isNewInvocation,
  parseUnitSnapshot,
  type Privilege,
  type UnitSnapshot,
} from './unit-commands';
import { RestartJournal } from './journal-follow';
import { describeProgress } from './load-progress';
import {
  drainReading,
  drainRemoveFailed,
  putBack,
  readdFailed,
  routerDrain,
  type RouterRegistration,
  type WorkerDrain,
} from './drain';
import { judgeWorker, readRouter } from './router-watch';
import { formatDuration, type RestartRun, type StepHandle } from './operation';
import {
  isLinkError,
  pace,
  realPaceMs,
  waitUntil,
  type Pacer,
  type ProbeResult,
  type WaitOutcome,
} from './wait';

export interface ServiceRestartContext {
  run: RestartRun;
  conn: SshConnection;
  /** The monitor's journal tail of the service's unit: the restart listens to it while it runs. */
  journal: UnitJournalTail;
  pacer: Pacer;
  /** The deployment's monitor scrapes: the drain and router steps wait on these, never scrape themselves. */
  scrapes: ScrapeFeed;
  hostLabel: string;
  service: ServiceConfig;
  /** The deployment's router, if any. */
  router?: ServiceConfig;
  /** prefill and decode of the deployment, for the router's own readiness step. */
  workers: ServiceConfig[];
  privilege: Privilege;
  command: string;
  timeouts: RestartTimeouts;
  sudoersLine: string;
  /** Set when this worker is to be drained first (the router supports it). */
  drain?: RouterRegistration;
  /** In a stack restart the router restarts next and checks both workers: this worker's router step is skipped. */
  routerRestartsNext: boolean;
}

export interface ServiceResult {
  state: 'succeeded' | 'failed' | 'unknown' | 'cancelled';
  failure?: RestartFailure;
}

const COMMAND_TIMEOUT_MS = 30_000;
const LINK_WAIT_MS = 60_000;
const FAILURE_JOURNAL_LINES = 25;

export const STEP_LABELS: Record<RestartStepKind, (role: Role) => string> = {
  drain: () => 'Drain: stop new work, let running requests finish',
  command: () => 'Send the restart command',
  active: () => 'systemd reports the unit active',
  health: (role) => (role === 'router' ? 'Router answers /health' : 'Server answers /health with 200'),
  readd: () => 'Register the worker with the router again',
  router: (role) =>
    role === 'router'
      ? 'Router ready: healthy prefill and decode workers'
      : 'Router reports the worker healthy',
};

export function stepsFor(role: Role, drain: boolean): RestartStepKind[] {
  return [
    ...(drain ? (['drain'] as const) : []),
    'command',
    'active',
    'health',
    ...(drain ? (['readd'] as const) : []),
    'router',
  ];
}

function isStopOrStart(u: UnitSnapshot): boolean {
  return (
    u.activeState === 'deactivating' ||
    u.activeState === 'inactive' ||
    (u.activeState === 'activating' && u.subState !== 'auto-restart')
  );
}

function isStartFailure(u: UnitSnapshot): boolean {
  return u.activeState === 'failed' || u.subState === 'auto-restart';
}

export function healthUrlOf(s: ServiceConfig): string {
  // The router's configured health URL is /readiness (all of PD); its own liveness is /health.
  if (s.role === 'router') return `${s.apiUrl.replace(/\/+$/, '')}/health`;
  return s.healthUrl ?? `${s.apiUrl.replace(/\/+$/, '')}/health`;
}

export async function restartService(ctx: ServiceRestartContext): Promise<ServiceResult> {
  const r = new ServiceRestart(ctx);
  let res: ServiceResult;
  try {
    res = await r.run();
  } finally {
    r.stopJournal();
  }
  try {
    await r.lastJournalLines();
  } finally {
    r.disposeJournal();
  }
  ctx.run.endService(ctx.service.role, res.state, res.state === 'cancelled' ? 'cancelled' : 'skipped');
  return res;
}

class ServiceRestart {
  private readonly role: Role;
  private readonly unit: string;
  private readonly journal: RestartJournal;
  private journalStopped = false;
  /** The last read was made: the journal's story of this restart is told. */
  private journalRead = false;
  private journalLoop: Promise<void> | null = null;
  private before: UnitSnapshot | null = null;
  /** The link dropped while the command was in flight: whether it arrived is for the unit state to tell. */
  private commandUncertain = false;
  /**
   * systemd refused this restart's start for the unit's start limit: nothing about the unit changes then (a
   * `--no-block` restart even exits 0), only the journal since the command says so.
   */
  private startRefused = false;
  private drained = false;
  /** Set when this worker is drained first. */
  private readonly drain?: WorkerDrain;
  /** The unit as seen when the new invocation became active. */
  private activeSeen: UnitSnapshot | null = null;

  constructor(private readonly ctx: ServiceRestartContext) {
    this.role = ctx.service.role;
    this.unit = ctx.service.unit;
    this.journal = new RestartJournal(ctx.journal, this.unit);
    const { router, drain: registration } = ctx;
    if (router && registration)
      this.drain = routerDrain({
        agent: () => ctx.conn.httpAgent(),
        router,
        worker: ctx.service,
        registration,
        scrapes: ctx.scrapes,
      });
  }

  private step(kind: RestartStepKind): StepHandle {
    return this.ctx.run.step(this.role, kind);
  }

  async run(): Promise<ServiceResult> {
    const { run } = this.ctx;
    if (this.drain) {
      const res = await this.drainStep(this.drain);
      if (res) return res;
    }
    if (run.cancelRequested) return { state: 'cancelled' };
    const sent = await this.commandStep();
    if (sent) return sent;
    const active = await this.activeStep();
    if (active) return active;
    const healthy = await this.healthStep();
    if (healthy) return healthy;
    // It serves: its journal has told the load, up to its ready line. What it logs next are its requests, which
    // would push that story out of the panel while the router takes it back.
    this.stopJournal();
    await this.lastJournalLines();
    if (this.drain && this.drained) {
      const back = await this.readdStep(this.drain);
      if (back) return back;
    }
    const routed = await this.routerStep();
    if (routed) return routed;
    return { state: 'succeeded' };
  }

  // ---- drain -------------------------------------------------------------------------------------------

  private async drainStep(d: WorkerDrain): Promise<ServiceResult | null> {
    const { run, timeouts } = this.ctx;
    const step = this.step('drain');
    if (run.cancelRequested) {
      step.finish('cancelled', 'cancelled before anything was changed');
      return { state: 'cancelled' };
    }
    step.begin(timeouts.drainMs, `removing ${d.url} from the router`);
    try {
      await d.remove();
      this.drained = true;
    } catch (err) {
      const f = drainRemoveFailed(d, err);
      step.finish('failed', f.message);
      return this.failed('drain', f);
    }
    const outcome = await this.waitStep(step, { ms: timeouts.drainMs }, async () => {
      const reading = drainReading(await d.running());
      return reading.done
        ? { kind: 'done', value: true, detail: reading.detail }
        : { kind: 'pending', detail: reading.detail };
    });
    if (outcome.kind === 'cancelled') {
      // Nothing was restarted: put the worker back so cancelling leaves the deployment as it was.
      step.finish('cancelled', await putBack(d));
      return { state: 'cancelled' };
    }
    if (outcome.kind === 'done') step.finish('succeeded', outcome.detail);
    else if (outcome.kind === 'failed')
      step.finish('succeeded', `${outcome.failure.message}; restarting anyway`);
    else
      // The policy is "until running requests reach 0 or the timeout": past it, the restart goes ahead.
      step.finish(
        'succeeded',
        `${outcome.lastDetail || 'requests still running'} after ${formatDuration(timeouts.drainMs)}; restarting anyway`,
      );
    return null;
  }

  // ---- command -----------------------------------------------------------------------------------------

  private async commandStep(): Promise<ServiceResult | null> {
    const { run, conn, command } = this.ctx;
    const step = this.step('command');
    if (run.cancelRequested) {
      step.finish('cancelled', 'cancelled before the restart command was sent');
      return { state: 'cancelled' };
    }
    step.begin(LINK_WAIT_MS + COMMAND_TIMEOUT_MS, command);
    if (!conn.isConnected) {
      step.note(
        `not connected to ${conn.label}; waiting up to ${formatDuration(LINK_WAIT_MS)} before sending`,
      );
      try {
        await conn.waitConnected(LINK_WAIT_MS);
      } catch (err) {
        const message = `not connected to ${conn.label}: the restart command was not sent (${(err as Error).message})`;
        step.finish('failed', message);
        return this.failed('command', {
          message,
          hint: 'Nothing was restarted. Try again once the host is reachable.',
        });
      }
    }
    try {
      this.before = await this.show();
    } catch (err) {
      const message = `could not read the state of ${this.unit} before restarting it: ${(err as Error).message}`;
      step.finish('failed', message);
      return this.failed('command', {
        message,
        hint: 'Nothing was restarted. Check the connection and try again.',
      });
    }
    this.ctx.run.setUnitState(this.role, describeUnit(this.before));
    if (this.before.loadState === 'not-found') return this.unitNotFound(step, '');
    try {
      // As often as the restart looks at the unit, so load progress is seen phase by phase.
      await this.journal.prime(realPaceMs(this.ctx.pacer, Math.max(this.ctx.pacer.pollMs, 1000)));
    } catch (err) {
      run.addJournal(this.role, [
        {
          ts: run.now(),
          text: `[PD Console] cannot read the journal of ${this.unit}: ${(err as Error).message}`,
        },
      ]);
    }
    this.startJournal();
    let res;
    try {
      res = await conn.exec(command, { timeoutMs: COMMAND_TIMEOUT_MS, maxBytes: 64 * 1024 });
    } catch (err) {
      if (!isLinkError(err, conn)) {
        const message = `could not run the restart command: ${(err as Error).message}`;
        step.finish('failed', message);
        return this.failed('command', { message });
      }
      this.commandUncertain = true;
      step.finish(
        'unknown',
        `the link dropped while the command was in flight (${(err as Error).message}); the unit's state will tell whether it arrived`,
      );
      return null;
    }
    if (res.exitCode === 0) {
      step.finish('succeeded', `${command} → exit 0: systemd queued the restart`);
      return null;
    }
    const stderr = res.stderr.trim();
    const kind = classifyCommandError(stderr, res.exitCode);
    if (kind === 'unit-not-found') return this.unitNotFound(step, stderr);
    const shown = stderr ? `: ${stderr.split('\n').slice(0, 3).join(' ')}` : '';
    const host = this.ctx.hostLabel;
    switch (kind) {
      case 'sudo-password':
      case 'sudo-denied': {
        const message =
          kind === 'sudo-password'
            ? `sudo on ${host} asks for a password, so ${this.unit} cannot be restarted from here${shown}`
            : `sudo on ${host} does not allow this restart${shown}`;
        step.finish('failed', message);
        return this.failed('command', {
          message,
          hint: `Nothing was restarted. Allow exactly these restarts without a password: run \`sudo visudo -f /etc/sudoers.d/pd-console\` on ${host} and add the line below. (Or, if polkit lets this user manage the units, enable "polkit" in the restart settings.)`,
          sudoersLine: this.ctx.sudoersLine,
        });
      }
      case 'no-sudo': {
        const message = `${host} has no sudo${shown}`;
        step.finish('failed', message);
        return this.failed('command', {
          message,
          hint: 'Connect as root, or install sudo and allow the restart (sudoers line below), or enable "polkit" if polkit allows this user.',
          sudoersLine: this.ctx.sudoersLine,
        });
      }
      case 'access-denied': {
        const message = `systemd on ${host} refused the restart${shown}`;
        step.finish('failed', message);
        return this.failed('command', {
          message,
          hint:
            this.ctx.privilege === 'polkit'
              ? 'polkit does not allow this user to restart the unit: turn "polkit" off in the restart settings to use sudo, or add a polkit rule.'
              : 'Check the user PD Console connects as.',
          sudoersLine: this.ctx.sudoersLine,
        });
      }
      default: {
        const message = `${command} failed with exit ${res.exitCode}${shown}`;
        step.finish('failed', message);
        return this.failed('command', { message, hint: `See \`systemctl status ${this.unit}\` on ${host}.` });
      }
    }
  }

  private unitNotFound(step: StepHandle, stderr: string): Promise<ServiceResult> {
    const message = `${this.unit} not found on ${this.ctx.hostLabel}: systemd has no unit by that name${stderr ? ` (${stderr.split('\n')[0]})` : ''}`;
    step.finish('failed', message);
    return this.failed('command', {
      message,
      hint: `Nothing was restarted. Check the unit name in the deployment: \`systemctl list-units --all 'sglang*'\` on ${this.ctx.hostLabel} lists the units that exist.`,
    });
  }

  // ---- active ------------------------------------------------------------------------------------------

  private async activeStep(): Promise<ServiceResult | null> {
    const { timeouts } = this.ctx;
    const step = this.step('active');
    step.begin(timeouts.activeMs, 'waiting for systemd to stop and start the unit');
    const before = this.before!;
    let transition = false;
    const outcome = await this.waitStep<UnitSnapshot>(step, { ms: timeouts.activeMs }, async () => {
      const now = await this.show();
      this.ctx.run.setUnitState(this.role, describeUnit(now));
      // Stopping or starting proves the restart began; "auto-restart" does not (a crash loop shows it too).
      if (isStopOrStart(now)) transition = true;
      const fresh = transition || isNewInvocation(before, now);
      if (now.activeState === 'active' && fresh)
        return { kind: 'done', value: now, detail: `${describeUnit(now)}, main PID ${now.mainPid || '?'}` };
      // With Restart=on-failure a failed start shows as activating/auto-restart, often without ever
      // showing "failed" between two polls: either way this start failed.
      if (isStartFailure(now) && (fresh || before.activeState === 'active'))
        return { kind: 'failed', failure: await this.startFailure(now) };
      if (this.startRefused && now.activeState !== 'active')
        return {
          kind: 'failed',
          failure: {
            message: `systemd refused to start ${this.unit}: it was started too often (“Start request repeated too quickly”: StartLimitBurst starts within StartLimitIntervalSec); it is still ${describeUnit(now)}`,
            hint: `Fix what made it fail (see the journal below), then on the host: sudo systemctl reset-failed ${this.unit} — that clears systemd's count — and restart again, or wait until StartLimitIntervalSec has passed.`,
          },
        };
      // NRestarts counts only systemd's automatic restarts after a failure: if it grew, a start failed
      // and was retried between two polls, even though neither "failed" nor "auto-restart" was seen.
      if (now.nRestarts > before.nRestarts)
        return { kind: 'failed', failure: await this.startFailure(now, now.nRestarts - before.nRestarts) };
      const progress = this.progressText();
      return { kind: 'pending', detail: `${describeUnit(now)}${progress ? ` — ${progress}` : ''}` };
    });
    if (outcome.kind === 'done') {
      this.activeSeen = outcome.value;
      step.finish('succeeded', outcome.detail);
      return null;
    }
    return this.waitEnded(step, 'active', outcome, () => {
      const noSign = !transition && this.commandUncertain;
      return {
        message: noSign
          ? `no sign of a restart of ${this.unit} within ${formatDuration(timeouts.activeMs)}: the restart command may not have reached the host`
          : `${this.unit} did not become active within ${formatDuration(timeouts.activeMs)} (last seen: ${outcome.kind === 'timeout' ? outcome.lastDetail : '?'})`,
        hint: noSign
          ? 'Check `systemctl status` on the host, then restart again if needed.'
          : 'It may still be loading (raise the "active" timeout in the restart settings if loads take longer), or it is stuck: see the journal below; systemd itself gives up after the unit’s TimeoutStartSec.',
      };
    });
  }

  private async startFailure(now: UnitSnapshot, retried = 0): Promise<Omit<RestartFailure, 'step' | 'role'>> {
    // After an automatic restart systemd shows the new run's Result; the failed one is in the journal.
    const result = retried ? ((await this.resultFromJournal()) ?? now.result) : now.result;
    const status = now.execMainStatus && !retried ? `, exit status ${now.execMainStatus}` : '';
    const why =
      result === 'timeout'
        ? 'systemd gave up: the start took longer than the unit’s TimeoutStartSec'
        : result === 'exit-code'
          ? `the main process exited with an error${status}`
          : result === 'signal' || result === 'core-dump'
            ? 'the main process was killed by a signal'
            : `Result=${result || 'unknown'}${status}`;
    const retry = retried
      ? `; systemd already started it again by itself (${retried} automatic restart${retried === 1 ? '' : 's'}, now ${describeUnit(now)})`
      : now.subState === 'auto-restart'
        ? '; systemd will start it again by itself (Restart=on-failure)'
        : '';
    return {
      message: `${this.unit} failed to start: ${why}${retry}`,
      result: result || undefined,
      hint:
        result === 'timeout'
          ? 'Loading took longer than TimeoutStartSec, or hung: see the journal below; raise TimeoutStartSec in the unit if the model needs longer.'
          : `See the journal below for the error (out of GPU memory, a bad flag, a missing model path), fix it, then restart again. On the host: journalctl -u ${this.unit} -n 200`,
    };
  }

  /** The Result of the last failed run as systemd logged it ("…: Failed with result 'timeout'."). */
  private async resultFromJournal(): Promise<string | undefined> {
    // A fresh tail rather than the followed lines: the follower may not have read that far yet.
    const lines = await this.journal.tailLines(200);
    for (let i = lines.length - 1; i >= 0; i--) {
      const m = /Failed with result '([a-z-]+)'/.exec(lines[i].text);
      if (m) return m[1];
    }
    return undefined;
  }

  // ---- health ------------------------------------------------------------------------------------------

  private async healthStep(): Promise<ServiceResult | null> {
    const { run, conn, timeouts } = this.ctx;
    const step = this.step('health');
    const url = healthUrlOf(this.ctx.service);
    step.begin(timeouts.healthMs, `GET ${url}`);
    const outcome = await this.waitStep(step, { ms: timeouts.healthMs, slow: true }, async () => {
      const [unit, health] = await Promise.all([
        this.show(),
        checkHealth(conn.httpAgent(), url, () => run.now()),
      ]);
      this.ctx.run.setUnitState(this.role, describeUnit(unit));
      // The new invocation was seen active in the previous step: failed now means it crashed while loading.
      if (isStartFailure(unit)) return { kind: 'failed', failure: await this.startFailure(unit) };
      const seen = this.activeSeen;
      if (seen && unit.nRestarts > seen.nRestarts)
        return { kind: 'failed', failure: await this.startFailure(unit, unit.nRestarts - seen.nRestarts) };
      if (health.ok) return { kind: 'done', value: health, detail: `GET ${url} → ${health.detail}` };
      const progress = this.progressText();
      const state = unit.activeState === 'active' ? '' : ` — unit ${describeUnit(unit)}`;
      return {
        kind: 'pending',
        detail: `GET ${url} → ${health.detail}${state}${progress ? ` — ${progress}` : ''}`,
      };
    });
    if (outcome.kind === 'done') {
      step.finish('succeeded', outcome.detail);
      return null;
    }
    return this.waitEnded(step, 'health', outcome, () => ({
      message: `${this.role} never answered ${url} with 200 within ${formatDuration(timeouts.healthMs)} (last: ${outcome.kind === 'timeout' ? outcome.lastDetail : '?'})`,
      hint: 'systemd says the unit is running, but the server does not serve. Look for errors in the journal below (CUDA out of memory, NCCL, a hung warmup); check the GPUs with nvidia-smi; then restart again.',
    }));
  }

  // ---- re-add ------------------------------------------------------------------------------------------

  private async readdStep(d: WorkerDrain): Promise<ServiceResult | null> {
    const step = this.step('readd');
    step.begin(COMMAND_TIMEOUT_MS, `POST ${d.routerUrl}/workers ${d.url}`);
    try {
      await d.add();
    } catch (err) {
      const f = readdFailed(d, err);
      step.finish('failed', f.message);
      return this.failed('readd', f);
    }
    step.finish('succeeded', `the router accepted ${d.url}`);
    return null;
  }

  // ---- router ------------------------------------------------------------------------------------------

  private async routerStep(): Promise<ServiceResult | null> {
    const { router, timeouts } = this.ctx;
    const step = this.step('router');
    if (this.role === 'router') return this.routerReadyStep(step);
    if (!router) {
      step.finish('skipped', 'no router in this deployment');
      return null;
    }
    if (this.ctx.routerRestartsNext) {
      step.finish('skipped', 'the router restarts next; its readiness check covers this worker');
      return null;
    }
    step.begin(timeouts.routerMs, `asking the router about ${this.ctx.service.apiUrl}`);
    let healthyInARow = 0;
    const outcome = await this.waitStep(step, { ms: timeouts.routerMs, slow: true }, async () => {
      const verdict = judgeWorker(await this.readRouterNow(router), this.ctx.service);
      // Two healthy readings in a row: one could be the router's state from before it noticed the restart.
      healthyInARow = verdict.state === 'healthy' ? healthyInARow + 1 : 0;
      if (healthyInARow >= 2) return { kind: 'done', value: verdict, detail: verdict.detail };
      return { kind: 'pending', detail: verdict.detail };
    });
    if (outcome.kind === 'done') {
      step.finish('succeeded', outcome.detail);
      return null;
    }
    return this.waitEnded(step, 'router', outcome, () => ({
      message: `the router never re-added ${this.role} within ${formatDuration(timeouts.routerMs)}: ${outcome.kind === 'timeout' ? outcome.lastDetail : '?'}`,
      hint: `The worker itself is healthy. Check the router's journal (journalctl -u ${router.unit}) and GET ${router.apiUrl}/workers; restarting the router makes it read its --prefill/--decode workers again.`,
    }));
  }

  private async routerReadyStep(step: StepHandle): Promise<ServiceResult | null> {
    const { timeouts } = this.ctx;
    const router = this.ctx.service;
    step.begin(timeouts.routerMs, `GET ${router.apiUrl}/readiness`);
    const outcome = await this.waitStep(step, { ms: timeouts.routerMs, slow: true }, async () => {
      const reading = await this.readRouterNow(router);
      const verdicts = this.ctx.workers.map((w) => ({ w, v: judgeWorker(reading, w) }));
      const workers = verdicts.map(({ w, v }) => `${w.role} ${v.state}`).join(', ');
      if (reading.readiness?.ready === true)
        return { kind: 'done', value: true, detail: `/readiness 200${workers ? ` (${workers})` : ''}` };
      if (reading.readiness?.ready === false)
        return { kind: 'pending', detail: `/readiness 503${workers ? ` (${workers})` : ''}` };
      // No /readiness on this router: every configured worker healthy is the same statement.
      if (verdicts.length && verdicts.every(({ v }) => v.state === 'healthy'))
        return {
          kind: 'done',
          value: true,
          detail: `all workers healthy (${workers}); ${reading.readiness?.detail ?? 'no /readiness'}`,
        };
      return {
        kind: 'pending',
        detail: `${reading.readiness?.detail ?? 'router not answering /readiness yet'}${workers ? ` (${workers})` : ''}`,
      };
    });
    if (outcome.kind === 'done') {
      step.finish('succeeded', outcome.detail);
      return null;
    }
    return this.waitEnded(step, 'router', outcome, () => ({
      message: `the router did not become ready within ${formatDuration(timeouts.routerMs)}: ${outcome.kind === 'timeout' ? outcome.lastDetail : '?'}`,
      hint: `The router runs but does not see a healthy prefill and decode worker. Check that both servers are healthy, then the router's journal (journalctl -u ${router.unit}).`,
    }));
  }

  // ---- shared ------------------------------------------------------------------------------------------

  /**
   * Waits on `probe` for this step until done or `ms` from now on the run's clock; `slow`: HTTP reads, at most
   * every 2 s.
   */
  private waitStep<T>(
    step: StepHandle,
    limit: { ms: number; slow?: boolean },
    probe: () => Promise<ProbeResult<T>>,
  ): Promise<WaitOutcome<T>> {
    const { run, conn, pacer } = this.ctx;
    return waitUntil({
      run,
      step,
      conn,
      pacer,
      ...(limit.slow ? { intervalMs: Math.max(pacer.pollMs, 2000) } : {}),
      deadlineAt: run.now() + limit.ms,
      probe,
    });
  }

  /** The router's view now: its control plane asked, its metrics from the monitor's next scrape of it. */
  private async readRouterNow(router: ServiceConfig) {
    const scrape = router.metricsUrl ? await this.ctx.scrapes.next(scrapeKey(router)) : undefined;
    return readRouter(this.ctx.conn.httpAgent(), router, scrape?.exposition);
  }

  /** Turns a wait that did not succeed into the step's and the service's end. */
  private async waitEnded(
    step: StepHandle,
    kind: RestartStepKind,
    outcome: Exclude<WaitOutcome<unknown>, { kind: 'done' }>,
    onTimeout: () => { message: string; hint?: string },
  ): Promise<ServiceResult> {
    switch (outcome.kind) {
      case 'cancelled':
        step.finish(
          'cancelled',
          `stopped following (cancelled)${outcome.lastDetail ? ` — last seen: ${outcome.lastDetail}` : ''}; ${kind === 'drain' ? '' : 'the unit continues its restart on its own'}`,
        );
        return { state: 'cancelled' };
      case 'lost-contact': {
        const message = `lost contact with ${this.ctx.conn.label} at the ${kind} step's deadline (link down for ${formatDuration(this.ctx.run.now() - outcome.downSince)}); the outcome is unknown${outcome.lastDetail ? ` — last seen: ${outcome.lastDetail}` : ''}`;
        step.finish('unknown', message);
        return {
          state: 'unknown',
          failure: {
            role: this.role,
            step: kind,
            message,
            hint: `Nothing was observed after the link dropped. Once reconnected, check the ${this.role} card (or \`systemctl status ${this.unit}\`) before acting again.`,
            journalTail: this.collectedTail(),
          },
        };
      }
      case 'failed': {
        step.finish('failed', outcome.failure.message);
        return this.failed(kind, outcome.failure);
      }
      case 'timeout': {
        const { message, hint } = onTimeout();
        step.finish('failed', message);
        return this.failed(kind, { message, hint });
      }
    }
  }

  private async failed(
    step: RestartStepKind,
    f: Omit<RestartFailure, 'step' | 'role'>,
  ): Promise<ServiceResult> {
    // The journal explains failures of the restarted process, not refusals before anything ran.
    const afterStart = step !== 'drain' && step !== 'command';
    let tail = afterStart ? this.collectedTail() : [];
    if (afterStart && this.ctx.conn.isConnected) {
      try {
        tail = (await this.journal.tailLines(FAILURE_JOURNAL_LINES)).map((l) => l.text);
      } catch {
        // The lines followed so far stand in for the tail; the failure message does not depend on them.
        tail = this.collectedTail();
      }
    }
    let result = f.result;
    if (!result && afterStart && this.ctx.conn.isConnected) {
      try {
        const s = await this.show();
        if (s.result && s.result !== 'success') result = s.result;
      } catch {
        // Result= is extra detail for the report; the failure stands without it.
        result = undefined;
      }
    }
    return {
      state: 'failed',
      failure: {
        role: this.role,
        step,
        ...f,
        ...(result ? { result } : {}),
        ...(tail.length ? { journalTail: tail } : {}),
      },
    };
  }

  private collectedTail(): string[] {
    return this.ctx.run
      .serviceView(this.role)
      .journal.slice(-FAILURE_JOURNAL_LINES)
      .map((l) => l.text);
  }

  private progressText(): string {
    const view = this.ctx.run.serviceView(this.role);
    return view.progress ? describeProgress(view.progress, this.ctx.run.loadClock(view)) : '';
  }

  private async show(): Promise<UnitSnapshot> {
    const res = await this.ctx.conn.exec(followShowCommand(this.unit), {
      timeoutMs: 15_000,
      maxBytes: 64 * 1024,
    });
    return parseUnitSnapshot(res.stdout, this.unit);
  }

  private startJournal(): void {
    if (this.journalLoop) return;
    const { run, pacer } = this.ctx;
    let reported = false;
    this.journalLoop = (async () => {
      while (!this.journalStopped) {
        await pace(pacer, Math.max(pacer.pollMs, 1000));
        if (this.journalStopped || !this.ctx.conn.isConnected) continue;
        try {
          const lines = this.journal.poll();
          if (lines.some((l) => START_LIMIT_HIT.test(l.text))) this.startRefused = true;
          run.addJournal(this.role, lines);
          reported = false;
        } catch (err) {
          if (isLinkError(err, this.ctx.conn) || reported) continue;
          reported = true;
          run.addJournal(this.role, [
            { ts: run.now(), text: `[PD Console] reading the journal failed: ${(err as Error).message}` },
          ]);
        }
      }
    })();
  }

  stopJournal(): void {
    this.journalStopped = true;
  }

  disposeJournal(): void {
    this.journal.dispose();
  }

  /** One last read, so the lines logged just before the end (the "ready" line, a traceback) are shown. */
  async lastJournalLines(): Promise<void> {
    if (!this.journalLoop || this.journalRead || !this.ctx.conn.isConnected) return;
    this.journalRead = true;
    await this.journalLoop;
    try {
      this.ctx.run.addJournal(this.role, await this.journal.pollNow());
    } catch (err) {
      this.ctx.run.addJournal(this.role, [
        { ts: this.ctx.run.now(), text: `[PD Console] last journal read failed: ${(err as Error).message}` },
      ]);
    }
  }
}
