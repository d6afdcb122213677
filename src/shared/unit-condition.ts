// What a unit is doing, named as systemd means it, with the evidence that says why: the one reading of systemd's
// state, /health and the unit's journal that the cards, `pd-console status` (text and --json) and the verdict all
// say. systemd's ActiveState alone misleads: a Type=simple server is active/running for the minutes its model
// loads, and a crash loop with a short RestartSec is active/running most of the time with NRestarts rising.
import type { HealthResult, Role, ServiceObservation, UnitJournalEvidence, UnitState } from './domain';

export type ConditionKind =
  | 'serving'
  | 'loading'
  | 'not-answering'
  | 'crash-looping'
  | 'failed'
  | 'stopped'
  | 'exited'
  | 'starting'
  | 'stopping'
  | 'not-found'
  | 'unknown';

export interface UnitCondition {
  kind: ConditionKind;
  tone: 'ok' | 'warn' | 'bad' | 'muted';
  /** One line, e.g. "crash-looping: restart 4, exit status 1 (ImportError: …)". */
  text: string;
  /** When the unit entered this state, when known. */
  since: number | null;
  restarts: number;
  /** "1", "SIGKILL": how the last process ended, when known. */
  exitStatus?: string;
  lastError?: string;
  /** What the operator can do next. */
  nextStep?: string;
}

export interface ConditionInput {
  role: Role;
  systemd?: UnitState;
  health?: HealthResult;
  evidence?: UnitJournalEvidence;
  now: number;
  /**
   * A router's: the server roles it routes to that have no service serving now. A router answers its readiness
   * 503 until one of each serves again; that is theirs to fix, not the router's.
   */
  waitingFor?: readonly Role[];
}

/** A restart loop: this many automatic restarts, the last crash within the window. */
const LOOP_RESTARTS = 2;
const LOOP_WINDOW_MS = 15 * 60_000;
/** Without a previous load to compare with, a server loading longer than this is said to be not answering. */
const LOAD_GRACE_MS = 20 * 60_000;

const SIGNALS: Record<string, string> = {
  '1': 'SIGHUP',
  '2': 'SIGINT',
  '6': 'SIGABRT',
  '9': 'SIGKILL',
  '11': 'SIGSEGV',
  '15': 'SIGTERM',
};

/** Minutes and hours as an operator reads them: "45 s", "3 min", "1 h 5 min". */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}

/** systemd's ExecMainCode and ExecMainStatus (or the journal's exit line) as one word. */
function exitStatusOf(s: UnitState | undefined, e: UnitJournalEvidence | undefined): string | undefined {
  // systemd words it "status=1/FAILURE" for an exit and "status=9/KILL" for a signal.
  if (e?.lastExit) {
    const [num, name] = e.lastExit.status.split('/');
    return e.lastExit.code === 'exited' ? num : name ? `SIG${name}` : (SIGNALS[num] ?? `signal ${num}`);
  }
  if (!s || s.execMainCode === undefined || s.execMainCode === 0) return undefined;
  const status = String(s.execMainStatus ?? '');
  return s.execMainCode === 1 ? status : (SIGNALS[status] ?? `signal ${status}`);
}

function withError(text: string, e: UnitJournalEvidence | undefined, after: number | null): string {
  const err = e?.lastError;
  if (!err || (after !== null && err.ts < after - LOOP_WINDOW_MS)) return text;
  return `${text} (${err.text})`;
}

export function unitCondition(i: ConditionInput): UnitCondition {
  const s = i.systemd;
  const e = i.evidence;
  if (!s)
    return { kind: 'unknown', tone: 'muted', text: 'systemd state not read yet', since: null, restarts: 0 };
  const restarts = s.nRestarts;
  const exitStatus = exitStatusOf(s, e);
  const base = {
    restarts,
    ...(exitStatus !== undefined ? { exitStatus } : {}),
    ...(e?.lastError ? { lastError: e.lastError.text } : {}),
  };
  const since = s.stateChangeTimestamp ?? s.activeEnterTimestamp ?? null;
  if (s.loadState === 'not-found')
    return {
      kind: 'not-found',
      tone: 'bad',
      text: `${s.unit} does not exist on the host`,
      since: null,
      restarts,
    };

  const crashedLately = e?.lastExit !== undefined && i.now - e.lastExit.ts < LOOP_WINDOW_MS;
  // A loop is over once the process that runs now has answered /health: it restarted, and it serves.
  const started = e?.startedAt ?? s.execMainStartTimestamp ?? s.activeEnterTimestamp ?? null;
  // By the process's pid where the monitor knows it: the host's clock and this console's need not agree.
  const servesSinceStart =
    s.activeState === 'active' &&
    i.health?.ok === true &&
    (i.health.mainPid !== undefined
      ? i.health.mainPid === s.mainPid
      : started !== null && i.health.checkedAt >= started);
  const looping =
    (s.activeState === 'activating' && s.subState === 'auto-restart') ||
    (restarts >= LOOP_RESTARTS &&
      !servesSinceStart &&
      (crashedLately || (s.inactiveEnterTimestamp ?? 0) > i.now - LOOP_WINDOW_MS));
  if (looping && s.activeState !== 'failed' && s.activeState !== 'inactive') {
    const pending = s.subState === 'auto-restart' ? restarts + 1 : restarts;
    return {
      ...base,
      kind: 'crash-looping',
      tone: 'bad',
      text: withError(
        `crash-looping: restart ${pending}${exitStatus !== undefined ? `, exit status ${exitStatus}` : ''}`,
        e,
        e?.lastExit?.ts ?? null,
      ),
      since: e?.lastExit?.ts ?? since,
      nextStep: `open the journal at the crash; \`systemctl stop ${s.unit}\` ends the loop`,
    };
  }

  switch (s.activeState) {
    case 'failed': {
      // systemd 252 keeps the last run's Result when it refuses a start for the start limit: its journal line says.
      const gaveUp =
        s.result === 'start-limit-hit' ||
        (e?.startLimitAt !== undefined && e.startLimitAt >= (e.lastExit?.ts ?? 0));
      const why = gaveUp
        ? `systemd gave up after ${restarts} restarts (start limit)`
        : s.result === 'timeout'
          ? 'start or stop timed out'
          : exitStatus !== undefined
            ? `exit status ${exitStatus}`
            : s.result || 'failed';
      const policy = s.restartPolicy && s.restartPolicy !== 'no' ? '' : ', Restart=no';
      return {
        ...base,
        kind: 'failed',
        tone: 'bad',
        text: withError(`failed (${why}${policy})`, e, null),
        since,
        nextStep: gaveUp
          ? `read the error in the journal and fix it, then \`sudo systemctl reset-failed ${s.unit}\` (systemd refuses new starts until then, or until StartLimitIntervalSec has passed) and restart the unit`
          : 'read the error in the journal, fix it, then restart the unit',
      };
    }
    case 'inactive': {
      const stoppedBySignal = s.execMainCode === 2 && (s.execMainStatus === 15 || s.execMainStatus === 2);
      if (s.result === 'success' && s.execMainCode === 1 && s.execMainStatus === 0)
        return { ...base, kind: 'exited', tone: 'muted', text: 'exited on its own (status 0)', since };
      return {
        ...base,
        kind: 'stopped',
        tone: 'muted',
        text:
          stoppedBySignal || s.execMainCode === 0 || s.execMainCode === undefined
            ? 'stopped by an operator'
            : 'stopped',
        since,
        nextStep: `\`systemctl start ${s.unit}\` to start it`,
      };
    }
    case 'activating':
      return { ...base, kind: 'starting', tone: 'warn', text: `starting (${s.subState})`, since };
    case 'deactivating':
      return { ...base, kind: 'stopping', tone: 'warn', text: 'stopping', since };
    case 'reloading':
      return { ...base, kind: 'starting', tone: 'warn', text: 'reloading', since };
    case 'active':
      break;
    default:
      return { ...base, kind: 'unknown', tone: 'muted', text: `${s.activeState}/${s.subState}`, since };
  }

  const restartedNote =
    restarts > 0 ? `; restarted automatically ${restarts === 1 ? 'once' : `${restarts} times`}` : '';
  if (i.health?.ok)
    return { ...base, kind: 'serving', tone: 'ok', text: `running, healthy${restartedNote}`, since };
  // Active but not answering: a server loads its model for minutes after systemd says active.
  const elapsed = started !== null ? i.now - started : null;
  const last = e?.loadsMs[0];
  const lastText = last !== undefined ? `, last load took ${durationText(last)}` : '';
  const ready = e?.readyAt !== undefined && started !== null && e.readyAt >= started;
  const limit = last !== undefined ? Math.max(2 * last, last + 5 * 60_000) : LOAD_GRACE_MS;
  if (i.role !== 'router' && !ready && (elapsed === null || elapsed < limit))
    return {
      ...base,
      kind: 'loading',
      tone: 'warn',
      text: `running, model loading${elapsed !== null ? ` (${durationText(elapsed)}${lastText})` : ''}`,
      since: started,
    };
  if (i.role === 'router' && i.waitingFor && i.waitingFor.length > 0 && i.health) {
    const roles = i.waitingFor.join(' and ');
    return {
      ...base,
      kind: 'not-answering',
      tone: 'warn',
      text: `running, not ready while no ${roles} service serves (${i.health.detail})`,
      since: started,
      nextStep: `see ${i.waitingFor[0]}: the router is ready again once it serves`,
    };
  }
  // Ready by its journal and /health not asked since this process started (the monitor drops a reading from an
  // older MainPID): not known yet, not failing — the next round asks.
  if (!i.health)
    return {
      ...base,
      kind: 'unknown',
      tone: 'muted',
      text: 'running, /health not checked yet',
      since: started,
    };
  const detail = i.health.detail;
  return {
    ...base,
    kind: 'not-answering',
    tone: 'bad',
    text: `running but /health fails: ${detail}${elapsed !== null && i.role !== 'router' ? ` — ${durationText(elapsed)} since start${lastText}` : ''}`,
    since: started,
    nextStep: 'open the journal: the server may be stuck loading or wedged',
  };
}

/**
 * The condition of one service of a reading, from its observation; a router's is read against the services of
 * the same reading (its readiness waits for a serving service of each role it routes to).
 */
export function serviceCondition(
  s: ServiceObservation,
  all: readonly ServiceObservation[],
  now: number,
): UnitCondition {
  const of = (o: ServiceObservation, waitingFor?: readonly Role[]): UnitCondition =>
    unitCondition({
      role: o.role,
      ...(o.systemd ? { systemd: o.systemd } : {}),
      ...(o.health ? { health: o.health } : {}),
      ...(o.evidence ? { evidence: o.evidence } : {}),
      now,
      ...(waitingFor ? { waitingFor } : {}),
    });
  if (s.role !== 'router') return of(s);
  const servers = [...new Set(all.filter((o) => o.role !== 'router').map((o) => o.role))];
  const waitingFor = servers.filter((r) =>
    all.filter((o) => o.role === r).every((o) => of(o).kind !== 'serving'),
  );
  return of(s, waitingFor);
}
