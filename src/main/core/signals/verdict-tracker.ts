// The verdict over time: one round after another, it remembers what the latest values alone cannot say — when a
// unit or a host link went down and when it came back, whether this console was restarting it, the last stuck
// verdict and the last one before the link dropped — and hands that to the pure pipelineVerdict. After a
// recovery, the windowed signals are asked for again over the window since then (`windowedSince`), so a 5xx share
// that still holds a worker's outage is not read as the router failing once the worker is back.
import type { Verdict, VerdictKind } from '@shared/contract';
import type { ConnectionStatus, Role } from '@shared/domain';
import type { RouterWorkerState } from '@shared/contract';
import type { OperatorAction } from '../actions/in-progress';
import {
  DEFAULT_VERDICT_THRESHOLDS,
  pipelineVerdict,
  type LinkReading,
  type Recovery,
  type UnitReading,
  type VerdictThresholds,
} from './verdict';
import { workerName, type FleetWorker } from '@shared/worker-names';

/** One round's facts: the signals, each unit's condition, the links and what this console is restarting. */
export interface VerdictRound {
  ts: number;
  values: Record<string, number | null | undefined>;
  growth?: Record<string, number | null | undefined>;
  roles: readonly Role[];
  workers?: readonly FleetWorker[];
  routerWorkers?: readonly RouterWorkerState[];
  units?: readonly UnitReading[];
  links?: readonly { hostId: string; label: string; status: ConnectionStatus }[];
  actions?: readonly OperatorAction[];
}

/** The windowed signals (rates, shares, quantiles) over [since, newest]; undefined when they cannot be read. */
export type WindowedSince = (since: number) => Record<string, number | null> | undefined;

export interface VerdictTrackerOptions {
  /** The window of rates and shares (ms): a recovery is "recent" while that window still holds the outage. */
  windowMs?: number;
  /** How long after a stuck or down verdict ends the healthy one still names it (ms). */
  transitionMs?: number;
  thresholds?: VerdictThresholds;
}

/** Kinds that say something is wrong; the verdict after them names the transition. */
const PROBLEMS = new Set<VerdictKind>([
  'prefill-bound',
  'decode-bound',
  'transfer-bound',
  'router-bound',
  'service-down',
]);

/** Condition kinds by how much they say about an outage: the worst one seen names it. */
const SEVERITY: Record<string, number> = {
  'crash-looping': 5,
  failed: 5,
  'not-found': 5,
  'not-answering': 4,
  stopped: 3,
  exited: 3,
  stopping: 2,
  starting: 1,
  loading: 1,
};

/** Bounded: a handful of recoveries can fall in one window. */
const MAX_RECOVERIES = 16;

interface Outage {
  downSince: number;
  why: string;
  severity: number;
  byYou: boolean;
}

export class VerdictTracker {
  private readonly windowMs: number;
  private readonly transitionMs: number;
  private readonly th: VerdictThresholds;
  private readonly outages = new Map<string, Outage>();
  private readonly links = new Map<string, { downSince: number | null; lastDataAt: number | null }>();
  private recovered: Recovery[] = [];
  private problem: { kind: VerdictKind; text: string } | null = null;
  private lastProblem: { kind: VerdictKind; text: string; until: number } | null = null;
  private lastGood: string | undefined;
  /** The last observed round's. */
  private ts: number | null = null;
  private units: readonly UnitReading[] | undefined;
  private actions: readonly OperatorAction[] | undefined;
  private linkReadings: LinkReading[] = [];

  constructor(opts: VerdictTrackerOptions = {}) {
    this.windowMs = opts.windowMs ?? 60_000;
    this.transitionMs = opts.transitionMs ?? 5 * 60_000;
    this.th = opts.thresholds ?? DEFAULT_VERDICT_THRESHOLDS;
  }

  /** One round, observed and judged (what the dashboard does in two steps; tests and replays in one). */
  next(round: VerdictRound, windowedSince?: WindowedSince): Verdict {
    this.observe(round);
    return this.verdict(round, windowedSince);
  }

  /**
   * A round's units, links and actions: every round, so no outage or recovery is missed while nobody looks at the
   * verdict (it is built only for a window that shows it).
   */
  observe(round: Pick<VerdictRound, 'ts' | 'units' | 'links' | 'actions' | 'workers'>): void {
    this.ts = round.ts;
    this.units = round.units;
    this.actions = round.actions;
    this.linkReadings = this.trackLinks(round);
    const downHosts = new Set(this.linkReadings.filter((l) => l.downSince !== null).map((l) => l.hostId));
    this.trackUnits(round, downHosts, this.linkReadings.length === 1 && downHosts.size === 1);
    this.recovered = recentOutages(this.recovered, round.ts, this.windowMs);
    if (this.lastProblem && round.ts - this.lastProblem.until >= this.transitionMs) this.lastProblem = null;
  }

  /** The verdict of the last observed round over its signals. */
  verdict(
    signals: Pick<VerdictRound, 'values' | 'growth' | 'roles' | 'workers' | 'routerWorkers'>,
    windowedSince?: WindowedSince,
  ): Verdict {
    const since = this.recovered.length > 0 ? Math.max(...this.recovered.map((r) => r.until)) : null;
    const freshValues = since !== null ? windowedSince?.(since) : undefined;
    const linkDown = this.linkReadings.some((l) => l.downSince !== null);
    const verdict = pipelineVerdict(
      {
        values: signals.values,
        ...(signals.growth ? { growth: signals.growth } : {}),
        roles: signals.roles,
        ...(signals.workers ? { workers: signals.workers } : {}),
        ...(signals.routerWorkers ? { routerWorkers: signals.routerWorkers } : {}),
        ...(this.ts !== null ? { now: this.ts } : {}),
        ...(this.units ? { units: this.units.map((u) => this.withDownSince(u)) } : {}),
        links: this.linkReadings,
        ...(this.actions ? { actions: this.actions } : {}),
        recovered: [...this.recovered].sort((a, b) => b.until - a.until),
        ...(since !== null && freshValues ? { fresh: { since, values: freshValues } } : {}),
        // A stuck verdict that ends this very round is already the transition it names.
        ...(this.lastProblem
          ? { lastProblem: this.lastProblem }
          : this.problem && this.ts !== null
            ? { lastProblem: { ...this.problem, until: this.ts } }
            : {}),
        ...(linkDown && this.lastGood ? { beforeLinkLoss: this.lastGood } : {}),
      },
      this.th,
    );
    if (this.ts !== null) this.remember(verdict, this.ts, linkDown);
    return verdict;
  }

  private trackLinks(round: Pick<VerdictRound, 'ts' | 'links'>): LinkReading[] {
    return (round.links ?? []).map((l) => {
      const m = this.links.get(l.hostId) ?? { downSince: null, lastDataAt: null };
      const up = l.status.state === 'connected';
      if (up) {
        if (m.downSince !== null) {
          this.recover({
            key: `link:${l.hostId}`,
            what: `the link to ${l.label}`,
            from: m.downSince,
            until: round.ts,
            why: 'unreachable',
            byYou: false,
          });
          // The units on it were not read meanwhile: what they were before is no outage of theirs to name.
          m.downSince = null;
        }
        m.lastDataAt = round.ts;
      } else if (m.downSince === null)
        // A stale or reconnecting link says when it stopped answering; a new connection attempt only when it began.
        m.downSince =
          l.status.state === 'stale' || l.status.state === 'reconnecting'
            ? Math.min(l.status.since, round.ts)
            : round.ts;
      this.links.set(l.hostId, m);
      return { hostId: l.hostId, label: l.label, status: l.status, ...m };
    });
  }

  private trackUnits(
    round: Pick<VerdictRound, 'ts' | 'units' | 'actions' | 'workers'>,
    downHosts: ReadonlySet<string>,
    allDown: boolean,
  ): void {
    for (const u of round.units ?? []) {
      // A unit on a host that cannot be read is neither down nor back: its state is unknown.
      if (allDown || (u.hostId !== undefined && downHosts.has(u.hostId))) continue;
      const c = u.condition;
      if (c.kind === 'unknown') continue;
      // A restart names the role it restarts (only where the role is one worker), a roll the worker.
      const byYou = (round.actions ?? []).some(
        (a) => a.current.includes(u.key) || (a.kind === 'restart' && a.current.includes(u.role)),
      );
      const out = this.outages.get(u.key);
      if (c.kind === 'serving') {
        if (out)
          this.recover({
            key: u.key,
            what: this.nameOf(round, u),
            role: u.role,
            from: out.downSince,
            until: round.ts,
            why: out.byYou ? 'restarted by you' : out.why,
            byYou: out.byYou,
          });
        this.outages.delete(u.key);
        continue;
      }
      const severity = SEVERITY[c.kind] ?? 0;
      if (!out) this.outages.set(u.key, { downSince: round.ts, why: c.text, severity, byYou });
      else {
        out.byYou ||= byYou;
        if (severity >= out.severity) {
          out.why = c.text;
          out.severity = severity;
        }
      }
    }
  }

  private withDownSince(u: UnitReading): UnitReading {
    const out = this.outages.get(u.key);
    return out ? { ...u, downSince: out.downSince } : u;
  }

  private nameOf(round: Pick<VerdictRound, 'workers'>, u: UnitReading): string {
    const w = round.workers?.find((x) => x.id === u.key);
    return w ? workerName(w) : u.key;
  }

  private recover(r: Recovery): void {
    this.recovered = [r, ...this.recovered.filter((x) => x.key !== r.key)].slice(0, MAX_RECOVERIES);
  }

  private remember(v: Verdict, ts: number, linkDown: boolean): void {
    if (!linkDown && v.kind !== 'unreachable') this.lastGood = v.headline;
    if (PROBLEMS.has(v.kind)) {
      this.problem = { kind: v.kind, text: v.evidence[0] ?? v.headline };
      this.lastProblem = null;
    } else if (this.problem && v.kind !== 'unreachable' && v.kind !== 'unknown') {
      this.lastProblem = { ...this.problem, until: ts };
      this.problem = null;
    }
  }
}

/**
 * The recoveries still worth naming: outages that overlapped form one episode (a router not ready while decode
 * was down), kept whole while its last recovery is within the window, so the episode is named by its cause until
 * the figures no longer hold any of it.
 */
function recentOutages(list: readonly Recovery[], now: number, windowMs: number): Recovery[] {
  const sorted = [...list].sort((a, b) => a.from - b.from);
  const keep: Recovery[] = [];
  let episode: Recovery[] = [];
  let end = -Infinity;
  const close = (): void => {
    if (episode.length > 0 && now - Math.max(...episode.map((r) => r.until)) < windowMs)
      keep.push(...episode);
    episode = [];
  };
  for (const r of sorted) {
    if (r.from >= end) close();
    episode.push(r);
    end = Math.max(end, r.until);
  }
  close();
  return keep;
}
