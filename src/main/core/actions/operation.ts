// The state of one restart operation as it runs: per service, its steps (with start, end, deadline and
// what was seen), its journal lines and load progress. Every change calls `onChange` (which decides when to
// push a snapshot); step ends are reported through `onStepEnd` so they land on the timeline.
import type {
  JournalLine,
  LoadProgress,
  RestartFailure,
  RestartOperation,
  RestartState,
  RestartStepKind,
  RestartStepState,
  RestartStepView,
  RestartTarget,
  ServiceRestartView,
} from '@shared/contract';
import type { Role } from '@shared/domain';
import type { Clock } from '../clock';
import { advanceProgress, describeProgress, type LoadClock } from './load-progress';

/** Journal lines kept per service for the UI; the full journal stays on the host. */
const JOURNAL_KEEP = 120;

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export interface StepEnd {
  role: Role;
  unit: string;
  step: RestartStepView;
  durationMs: number;
}

export interface RunInit {
  id: string;
  deploymentId: string;
  hostLabel: string;
  target: RestartTarget;
  requestedBy: string;
  drain: boolean;
  stages: Role[][];
  services: Array<{
    role: Role;
    unit: string;
    steps: Array<{ kind: RestartStepKind; label: string }>;
    /** The unit's last complete load, from its journal (the monitor's evidence), when known. */
    lastLoadMs?: number;
  }>;
}

export class StepHandle {
  constructor(
    private readonly run: RestartRun,
    readonly role: Role,
    readonly view: RestartStepView,
  ) {}

  begin(timeoutMs?: number, detail?: string): void {
    const now = this.run.now();
    this.view.state = 'running';
    this.view.startedAt = now;
    if (timeoutMs !== undefined) this.view.deadlineAt = now + timeoutMs;
    if (detail) this.view.detail = detail;
    this.run.serviceView(this.role).state = 'running';
    this.run.serviceView(this.role).startedAt ??= now;
    this.run.changed(true);
  }

  note(detail: string): void {
    if (this.view.detail === detail) return;
    this.view.detail = detail;
    this.run.changed(false);
  }

  finish(state: Exclude<RestartStepState, 'pending' | 'running'>, detail?: string): void {
    const now = this.run.now();
    if (this.view.state === 'pending' && state !== 'skipped' && state !== 'cancelled')
      this.view.startedAt = now;
    this.view.state = state;
    this.view.endedAt = now;
    if (detail !== undefined) this.view.detail = detail;
    this.run.stepEnded(this.role, this.view);
  }
}

export class RestartRun {
  state: RestartState = 'running';
  readonly startedAt: number;
  endedAt?: number;
  cancelRequested = false;
  link: 'up' | 'down' = 'up';
  failure?: RestartFailure;
  private readonly services: ServiceRestartView[];

  constructor(
    readonly init: RunInit,
    private readonly clock: Clock,
    private readonly onChange: (urgent: boolean) => void,
    private readonly onStepEnd: (e: StepEnd) => void,
  ) {
    this.startedAt = clock.now();
    this.services = init.services.map((s) => ({
      role: s.role,
      unit: s.unit,
      state: 'pending',
      steps: s.steps.map((st) => ({ kind: st.kind, label: st.label, state: 'pending' })),
      journal: [],
      ...(s.lastLoadMs !== undefined ? { lastLoadMs: s.lastLoadMs } : {}),
    }));
  }

  get id(): string {
    return this.init.id;
  }

  now(): number {
    return this.clock.now();
  }

  get finished(): boolean {
    return this.state !== 'running';
  }

  roles(): Role[] {
    return this.services.map((s) => s.role);
  }

  serviceView(role: Role): ServiceRestartView {
    const s = this.services.find((x) => x.role === role);
    if (!s) throw new Error(`restart ${this.id} has no ${role} service`);
    return s;
  }

  step(role: Role, kind: RestartStepKind): StepHandle {
    const view = this.serviceView(role).steps.find((s) => s.kind === kind);
    if (!view) throw new Error(`restart ${this.id}: ${role} has no ${kind} step`);
    return new StepHandle(this, role, view);
  }

  hasStep(role: Role, kind: RestartStepKind): boolean {
    return this.serviceView(role).steps.some((s) => s.kind === kind);
  }

  addJournal(role: Role, lines: JournalLine[]): void {
    if (!lines.length) return;
    const s = this.serviceView(role);
    s.journal.push(...lines);
    if (s.journal.length > JOURNAL_KEEP) s.journal.splice(0, s.journal.length - JOURNAL_KEEP);
    const next = advanceProgress(
      s.progress,
      lines.map((l) => l.text),
    );
    if (next) s.progress = next;
    this.changed(false);
  }

  /** The time a service's load has taken so far (since its restart's first step began) and its last load. */
  loadClock(s: ServiceRestartView): LoadClock | undefined {
    if (s.startedAt === undefined) return undefined;
    return {
      elapsedMs: this.now() - s.startedAt,
      ...(s.lastLoadMs !== undefined ? { lastLoadMs: s.lastLoadMs } : {}),
    };
  }

  setProgress(role: Role, p: LoadProgress): void {
    this.serviceView(role).progress = p;
    this.changed(false);
  }

  setUnitState(role: Role, text: string): void {
    const s = this.serviceView(role);
    if (s.unitState === text) return;
    s.unitState = text;
    this.changed(false);
  }

  setLink(up: boolean): void {
    const next = up ? 'up' : 'down';
    if (this.link === next) return;
    this.link = next;
    this.changed(true);
  }

  /** Marks a service finished; steps never reached take `rest` (skipped after a failure, cancelled…). */
  endService(role: Role, state: RestartStepState, rest: 'skipped' | 'cancelled' = 'skipped'): void {
    const s = this.serviceView(role);
    s.state = state;
    s.endedAt = this.now();
    for (const st of s.steps) if (st.state === 'pending') st.state = rest;
    this.changed(true);
  }

  end(state: Exclude<RestartState, 'running'>, failure?: RestartFailure): void {
    if (this.finished) return;
    this.state = state;
    this.endedAt = this.now();
    if (failure) this.failure = failure;
    for (const s of this.services) {
      if (s.state === 'pending') {
        s.state = state === 'cancelled' ? 'cancelled' : 'skipped';
        for (const st of s.steps) if (st.state === 'pending') st.state = s.state;
      }
    }
    this.changed(true);
  }

  /** @internal called by StepHandle */
  stepEnded(role: Role, view: RestartStepView): void {
    const s = this.serviceView(role);
    this.onStepEnd({
      role,
      unit: s.unit,
      step: { ...view },
      durationMs:
        view.startedAt !== undefined && view.endedAt !== undefined ? view.endedAt - view.startedAt : 0,
    });
    this.changed(true);
  }

  /** @internal */
  changed(urgent: boolean): void {
    this.onChange(urgent);
  }

  elapsedMs(): number {
    return (this.endedAt ?? this.now()) - this.startedAt;
  }

  summary(): string {
    const took = formatDuration(this.elapsedMs());
    const what = this.init.target === 'stack' ? 'PD stack' : this.init.target;
    switch (this.state) {
      case 'succeeded':
        return `${what} restarted in ${took}`;
      case 'failed':
        return `${what} restart failed after ${took}: ${this.failure?.message ?? 'see the failed step'}`;
      case 'unknown':
        return `${what} restart outcome unknown after ${took}: ${this.failure?.message ?? 'lost contact with the host'}`;
      case 'cancelled':
        return `${what} restart cancelled after ${took}`;
      case 'running':
        break;
    }
    const parts: string[] = [];
    for (const s of this.services) {
      const st = s.steps.find((x) => x.state === 'running');
      if (!st) continue;
      const detail =
        (st.kind === 'active' || st.kind === 'health') && s.progress
          ? describeProgress(s.progress, this.loadClock(s))
          : st.label;
      parts.push(`${s.role}: ${detail}`);
    }
    const link = this.link === 'down' ? ' — lost contact with the host, reconnecting' : '';
    if (this.cancelRequested) parts.push('cancelling before the next step');
    return `${parts.join(' · ') || `${what}: starting`} (${took})${link}`;
  }

  snapshot(): RestartOperation {
    const { id, deploymentId, hostLabel, target, requestedBy, drain, stages } = this.init;
    return {
      id,
      deploymentId,
      hostLabel,
      target,
      requestedBy,
      drain,
      state: this.state,
      startedAt: this.startedAt,
      ...(this.endedAt !== undefined ? { endedAt: this.endedAt } : {}),
      elapsedMs: this.elapsedMs(),
      stages: stages.map((s) => [...s]),
      services: this.services.map((s) => ({
        ...s,
        steps: s.steps.map((st) => ({ ...st })),
        journal: [...s.journal],
        ...(s.progress ? { progress: { ...s.progress } } : {}),
      })),
      cancelRequested: this.cancelRequested,
      link: this.link,
      summary: this.summary(),
      ...(this.failure ? { failure: { ...this.failure } } : {}),
    };
  }
}
