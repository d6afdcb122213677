// What the fleet screens show, read from what the core pushed: one row per worker (state, health, requests, KV,
// host and that host's link), per role an aggregate, and the order the rows are listed in. Pure functions over
// the summary, the latest observation and the dashboard snapshot, so the overview, the worker pages and the
// KV page agree, and the grouping and sorting are tested without a browser.
import type { DashboardSnapshot } from '@shared/contract';
import type {
  ConnectionStatus,
  DeploymentSummary,
  Role,
  Observation,
  ServiceConfig,
  ServiceObservation,
} from '@shared/domain';
import { serviceId } from '@shared/domain';
import type { FleetUnit } from '@shared/fleet';
import { routerCounts, routerViewOf, type RouterView } from '@shared/router-health';
import type { ServerRole } from '@shared/signals/spec';
import { stageQueues, type StageQueue } from '../components/stage-queues';
import { unknownNow, type ReadingClock, type UnknownNow } from '../components/staleness';
import { conditionOfObservation } from '../components/condition';

export type Tone = 'ok' | 'warn' | 'bad' | 'idle';

/**
 * A role's services, and how the pages show them: one service of one unit is that service's card and page, as
 * a 1P1D operator knows them; several (or a worker spanning nodes, or none) are the role's group.
 */
export function roleServices(
  summary: DeploymentSummary,
  role: Role,
): { services: ServiceConfig[]; one: ServiceConfig | undefined } {
  const services = summary.deployment.services.filter((s) => s.role === role);
  const one = services.length === 1 && (services[0].units?.length ?? 1) <= 1 ? services[0] : undefined;
  return { services, one };
}

/** The deployment runs on more than one host: places are named by host, and each host's link is shown. */
export function spansHosts(summary: DeploymentSummary): boolean {
  return hostOrder(summary).length > 1;
}

export interface WorkerRow {
  id: string;
  role: ServerRole;
  url?: string;
  /** Host of node rank 0. */
  host: string;
  /** Every unit, node rank 0 first, with the host it runs on. */
  units: { host: string; unit: string; nodeRank: number; activeState?: string; gpus?: number[] }[];
  activeState?: string;
  subState?: string;
  /** "unreachable: reason" when the worker's host cannot be read; the row says it instead of stale figures. */
  unreachable?: string;
  /** Its state cannot be known now (its host silent or unreachable): what was last seen of it, and when. */
  unknown?: UnknownNow;
  health?: { ok: boolean; detail: string };
  running: number | null;
  queued: number | null;
  /** The role's PD stage queues at this worker (a prefill worker's bootstrap queue, …), null where unknown. */
  stage: StageCount[];
  kv: { usedTokens: number; capacityTokens: number; ratio: number } | null;
  /** Serving: systemd active and /health answered ok since it started (the card's condition "serving"). */
  healthy: boolean;
  /** Not known yet: systemd not read, or running with /health not asked since it started. */
  checking: boolean;
  /** How the (first) router sees it, from its newest scrape; undefined when it does not report on it. */
  atRouter?: RouterView;
  tone: Tone;
}

export interface RoleAggregate {
  role: ServerRole;
  workers: number;
  healthy: number;
  /** Workers not known yet (systemd not read, or /health not asked since they started): neither healthy nor down. */
  pending: number;
  /**
   * Workers the router reports healthy (its per-worker gauges, as the verdict reads them); null when the router
   * reports on none of the role's workers.
   */
  healthyAtRouter: number | null;
  /** Workers whose state cannot be known now (their host silent): neither healthy nor down either. */
  unknown: number;
  /** The oldest last reading among those: the role is known only up to then. */
  unknownSince: number | null;
  usedTokens: number | null;
  capacityTokens: number | null;
  ratio: number | null;
  /** The worker with the highest KV ratio: it refuses requests first. */
  fullest?: { id: string; host: string; ratio: number };
  running: number | null;
  queued: number | null;
  /** Each PD stage queue summed over the workers that report it. */
  stage: StageCount[];
}

export interface StageCount {
  queue: StageQueue;
  n: number | null;
}

/** Why a link is not usable, in words, or undefined while it is connected (or still connecting). */
export function linkProblem(s: ConnectionStatus | undefined): string | undefined {
  if (!s) return undefined;
  switch (s.state) {
    case 'failed':
      return s.reason;
    case 'reconnecting':
      return s.lastError;
    case 'stale':
      return s.reason;
    default:
      return undefined;
  }
}

export function hostLinks(summary: DeploymentSummary): Map<string, ConnectionStatus> {
  const m = new Map<string, ConnectionStatus>();
  for (const h of summary.hosts ?? []) m.set(h.host.id, h.connection);
  if (!m.has(summary.host.id)) m.set(summary.host.id, summary.connection);
  return m;
}

export function observationOf(
  latest: Observation | undefined,
  svc: Pick<ServiceConfig, 'id' | 'role'>,
): ServiceObservation | undefined {
  const id = serviceId(svc);
  return latest?.services.find((o) => serviceId(o) === id);
}

function num(x: number | null | undefined): number | null {
  return x === undefined || x === null || !Number.isFinite(x) ? null : x;
}

/** Each unit's own systemd state as the merged observation reports it (rank ≥ 1 is read on its own host). */
function withStates(units: WorkerRow['units'], obs: ServiceObservation | undefined): WorkerRow['units'] {
  if (!obs?.units) return units;
  return units.map((u) => {
    const o = obs.units!.find((x) => x.hostId === u.host && x.unit === u.unit && x.nodeRank === u.nodeRank);
    return o ? { ...u, activeState: o.systemd?.activeState ?? o.systemdError ?? u.activeState } : u;
  });
}

function unitsOf(summary: DeploymentSummary, svc: ServiceConfig): WorkerRow['units'] {
  const fw = summary.fleet?.workers.find(
    (w) => (svc.workerUrl !== undefined && w.url === svc.workerUrl) || w.apiUrl === svc.apiUrl,
  );
  if (fw && fw.units.length > 0)
    return fw.units.map((u: FleetUnit) => ({
      host: u.host,
      unit: u.unit,
      nodeRank: u.nodeRank,
      activeState: u.activeState,
      gpus: u.gpus,
    }));
  if (svc.units && svc.units.length > 0)
    return svc.units.map((u) => ({
      host: u.hostId,
      unit: u.unit,
      nodeRank: u.nodeRank,
      gpus: u.nodeRank === 0 ? svc.gpus : undefined,
    }));
  return [{ host: svc.hostId, unit: svc.unit, nodeRank: 0, gpus: svc.gpus }];
}

/** Every prefill and decode worker of a fleet, in the deployment's order. */
/**
 * A unit's tone on the fleet screens: idle while unknown or not read yet, bad when its host is unreachable or
 * systemd says failed, ok when it serves, warn otherwise (starting, stopping, failing /health, not routed).
 */
function unitTone(
  unknown: boolean,
  unreachable: boolean,
  sd: ServiceObservation['systemd'],
  serving: boolean | 'checking',
): Tone {
  if (unknown) return 'idle';
  if (unreachable) return 'bad';
  if (!sd) return 'idle';
  if (sd.activeState === 'failed') return 'bad';
  if (serving === 'checking') return 'idle';
  return serving ? 'ok' : 'warn';
}

export function workerRows(
  summary: DeploymentSummary,
  latest: Observation | undefined,
  dashboard: DashboardSnapshot | undefined,
  /** The screen's clock: with it, a worker that cannot be read now is said to be unknown (staleness.ts). */
  clock?: ReadingClock,
): WorkerRow[] {
  const links = hostLinks(summary);
  const rows: WorkerRow[] = [];
  for (const svc of summary.deployment.services) {
    if (svc.role === 'router') continue;
    const role = svc.role;
    const id = serviceId(svc);
    const obs = observationOf(latest, svc);
    const sd = obs?.systemd;
    const fw = summary.fleet?.workers.find((w) => svc.workerUrl !== undefined && w.url === svc.workerUrl);
    const host = obs?.hostId ?? svc.hostId;
    const problem =
      linkProblem(links.get(host)) ?? summary.fleet?.hosts.find((h) => h.id === host)?.unreachable;
    const unreachable =
      fw?.unreachable ??
      (problem !== undefined ? `unreachable: ${problem}` : undefined) ??
      (obs?.systemdError?.startsWith('unreachable') ? obs.systemdError : undefined);
    const unknown = clock === undefined ? null : unknownNow({ role, obs, latest, clock });
    // Figures of a worker that cannot be read now are not its figures now, whatever the last push held.
    const blind = unreachable !== undefined || unknown !== null || (!sd && obs?.lastSeen !== undefined);
    const v = (k: string): number | null => (blind ? null : num(dashboard?.values[`${role}.${k}@${id}`]));
    const kv =
      !blind && obs?.kv
        ? { usedTokens: obs.kv.usedTokens, capacityTokens: obs.kv.capacityTokens, ratio: obs.kv.ratio }
        : null;
    const health = obs?.health ? { ok: obs.health.ok, detail: obs.health.detail } : undefined;
    // Serving as its card would say it (shared/unit-condition.ts): active and answering /health since it
    // started — a worker loading its model after a restart is not healthy yet, one not asked yet is checking.
    const condition = sd ? conditionOfObservation(role, obs, latest, clock?.now ?? Date.now()) : undefined;
    const healthy = !unknown && !unreachable && condition?.kind === 'serving';
    const checking = !unknown && !unreachable && (!sd || condition?.kind === 'unknown');
    const atRouter = routerViewOf(svc.workerUrl, dashboard?.routerWorkers);
    // Healthy itself but taking no traffic: the router has marked it unhealthy or removed it.
    const notRouted = atRouter !== undefined && atRouter.state !== 'healthy';
    const tone = unitTone(!!unknown, !!unreachable, sd, checking ? 'checking' : healthy && !notRouted);
    rows.push({
      id,
      role,
      url: svc.workerUrl,
      host,
      units: withStates(unitsOf(summary, svc), obs),
      activeState: unreachable || unknown ? undefined : sd?.activeState,
      subState: unreachable || unknown ? undefined : sd?.subState,
      unreachable,
      ...(unknown ? { unknown } : {}),
      health: unreachable || unknown ? undefined : health,
      running: v('running'),
      queued: v('queued'),
      stage: stageQueues(role).map((queue) => ({ queue, n: v(queue) })),
      kv,
      healthy,
      checking,
      ...(atRouter ? { atRouter } : {}),
      tone,
    });
  }
  return rows;
}

/**
 * The order a role's rows are listed in: workers with a problem first (unreachable, down, unhealthy: the
 * operator must see them without scrolling), then the fullest KV first, then by id so the list stays put.
 */
export function sortByFullest(rows: readonly WorkerRow[]): WorkerRow[] {
  const rank = (r: WorkerRow): number =>
    r.unreachable ? 0 : r.tone === 'bad' ? 1 : r.tone === 'warn' ? 2 : 3;
  return [...rows].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (b.kv?.ratio ?? -1) - (a.kv?.ratio ?? -1) ||
      a.id.localeCompare(b.id, undefined, { numeric: true }),
  );
}

/** A role's aggregate: tokens summed over the workers that report them, the ratio of those sums. */
export function roleAggregate(rows: readonly WorkerRow[], role: ServerRole): RoleAggregate {
  const mine = rows.filter((r) => r.role === role);
  const withKv = mine.filter((r) => r.kv !== null);
  const used = withKv.reduce((t, r) => t + r.kv!.usedTokens, 0);
  const cap = withKv.reduce((t, r) => t + r.kv!.capacityTokens, 0);
  const fullestRow = withKv.reduce<WorkerRow | undefined>(
    (best, r) => (best === undefined || r.kv!.ratio > best.kv!.ratio ? r : best),
    undefined,
  );
  const total = (xs: readonly (number | null)[]): number | null => {
    const known = xs.filter((x): x is number => x !== null);
    return known.length === 0 ? null : known.reduce((t, x) => t + x, 0);
  };
  const sum = (k: 'running' | 'queued'): number | null => total(mine.map((r) => r[k]));
  return {
    role,
    workers: mine.length,
    healthy: mine.filter((r) => r.healthy).length,
    pending: mine.filter((r) => r.checking).length,
    healthyAtRouter: mine.some((r) => r.atRouter)
      ? mine.filter((r) => r.atRouter?.state === 'healthy').length
      : null,
    unknown: mine.filter((r) => r.unknown).length,
    unknownSince: oldest(mine.map((r) => r.unknown?.seenAt ?? null)),
    usedTokens: withKv.length ? used : null,
    capacityTokens: withKv.length ? cap : null,
    ratio: withKv.length && cap > 0 ? used / cap : null,
    fullest: fullestRow
      ? { id: fullestRow.id, host: fullestRow.host, ratio: fullestRow.kv!.ratio }
      : undefined,
    running: sum('running'),
    queued: sum('queued'),
    stage: stageQueues(role).map((queue) => ({
      queue,
      n: total(mine.map((r) => r.stage.find((c) => c.queue === queue)?.n ?? null)),
    })),
  };
}

function oldest(ts: readonly (number | null)[]): number | null {
  const known = ts.filter((t): t is number => t !== null);
  return known.length ? Math.min(...known) : null;
}

/**
 * Which of a role's sorted rows are on screen: all of them up to `max`; beyond it the first `max - 1` and a
 * "n more" line — but never hiding a worker with a problem.
 */
export function visibleRows(
  sorted: readonly WorkerRow[],
  max: number,
  expanded: boolean,
): { shown: WorkerRow[]; hidden: WorkerRow[] } {
  if (expanded || sorted.length <= max) return { shown: [...sorted], hidden: [] };
  const keep = Math.max(max - 1, sorted.filter((r) => r.tone !== 'ok').length);
  return { shown: sorted.slice(0, keep), hidden: sorted.slice(keep) };
}

export interface RouterRow {
  id: string;
  host: string;
  unit: string;
  activeState?: string;
  unreachable?: string;
  /** Its state cannot be known now: what was last seen of it, and when. */
  unknown?: UnknownNow;
  health?: { ok: boolean; detail: string };
  /** This router's own worker list, when discovery read it. */
  lists: { prefill: number; decode: number; regular: number } | null;
  /**
   * How many of the workers it lists its own gauges call healthy (the first router's, whose newest scrape the
   * dashboard carries); null until that scrape.
   */
  healthyAtRouter: ReturnType<typeof routerCounts> | null;
  tone: Tone;
}

export function routerRows(
  summary: DeploymentSummary,
  latest: Observation | undefined,
  dashboard?: Pick<DashboardSnapshot, 'routerWorkers'>,
  /** The screen's clock: with it, a router that cannot be read now is said to be unknown. */
  clock?: ReadingClock,
): RouterRow[] {
  const links = hostLinks(summary);
  return summary.deployment.services
    .filter((s) => s.role === 'router')
    .map((svc, i) => {
      const obs = observationOf(latest, svc);
      const host = obs?.hostId ?? svc.hostId;
      const problem = linkProblem(links.get(host));
      const unreachable =
        problem !== undefined
          ? `unreachable: ${problem}`
          : obs?.systemdError?.startsWith('unreachable')
            ? obs.systemdError
            : undefined;
      const fr = summary.fleet?.routers.find((r) => r.host === host && r.unit === svc.unit);
      const lists = fr
        ? {
            prefill: fr.workers.filter((w) => w.role === 'prefill').length,
            decode: fr.workers.filter((w) => w.role === 'decode').length,
            regular: fr.workers.filter((w) => w.role === 'regular').length,
          }
        : null;
      const sd = obs?.systemd;
      const health = obs?.health ? { ok: obs.health.ok, detail: obs.health.detail } : undefined;
      const unknown = clock === undefined ? null : unknownNow({ role: 'router', obs, latest, clock });
      // Serving as its card would say it: active and answering /health since it started.
      const serving = sd
        ? conditionOfObservation('router', obs, latest, clock?.now ?? Date.now())
        : undefined;
      const tone = unitTone(
        !!unknown,
        !!unreachable,
        sd,
        serving?.kind === 'unknown' ? 'checking' : serving?.kind === 'serving',
      );
      return {
        id: serviceId(svc),
        host,
        unit: svc.unit,
        activeState: unreachable || unknown ? undefined : sd?.activeState,
        unreachable,
        ...(unknown ? { unknown } : {}),
        health: unreachable || unknown ? undefined : health,
        lists,
        healthyAtRouter:
          i === 0 && !unreachable && dashboard?.routerWorkers ? routerCounts(dashboard.routerWorkers) : null,
        tone,
      };
    });
}

/** GPUs grouped by host, and within a host by the worker whose unit runs on them. */
export interface HostGpus {
  host: string;
  workers: { id: string; role: ServerRole; unit: string; nodeRank: number; gpus: number[] }[];
}

export function gpusByHost(rows: readonly WorkerRow[], hostOrder: readonly string[]): HostGpus[] {
  const by = new Map<string, HostGpus>();
  for (const h of hostOrder) by.set(h, { host: h, workers: [] });
  for (const r of rows)
    for (const u of r.units) {
      let g = by.get(u.host);
      if (!g) by.set(u.host, (g = { host: u.host, workers: [] }));
      g.workers.push({ id: r.id, role: r.role, unit: u.unit, nodeRank: u.nodeRank, gpus: u.gpus ?? [] });
    }
  return [...by.values()];
}

/** The hosts of a fleet in the order to show them: origin first, as the summary lists them. */
export function hostOrder(summary: DeploymentSummary): string[] {
  const ids = (summary.hosts ?? []).map((h) => h.host.id);
  for (const h of summary.fleet?.hosts ?? []) if (!ids.includes(h.id)) ids.push(h.id);
  if (!ids.includes(summary.host.id)) ids.unshift(summary.host.id);
  return ids;
}
