// What `pd-console status` reports of a deployment, one document for every deployment (one router, one prefill
// and one decode on one host is a fleet of one): an entry per router and worker from the app's own observation
// (fleet-reading.ts) with each service's condition and headline figures, the per-role totals, and every worker
// discovery could not place or no router lists, with the line to change. --json prints it; status-text.ts reads it.
import type { Verdict } from '@shared/contract';
import type { KvUsage } from '@shared/domain';
import type { UnitCondition } from '@shared/unit-condition';
import type { Fleet, FleetWorker, WorkerRole } from '@shared/fleet';
import { routerListFindings } from '../core/discovery/router-workers';
import { fleetWorkerGroups, routerServiceId } from '../core/deployment/fleet-config';
import { serverKey, unitKey, type FleetReading, type ServerReading } from './fleet-reading';
import type { LinkReport } from './link-status';

/** What the app's monitor and signal store say of one service, beyond its systemd state, health and KV. */
export interface ServiceFigures {
  condition: UnitCondition;
  /** The headline figures (headline.ts): null where missing, with why in signalsWhy. */
  signals: Record<string, number | null>;
  signalsWhy?: Record<string, string>;
  /** The scrapes the figures span (rates are the counters' change between the first and last), and why the
   * last one failed, in the monitor's words. */
  scrapes: { count: number; firstMs: number | null; lastMs: number | null; error?: string };
  /** Why a server's scrape has no KV figure (it served no KV gauge). */
  kvMissing?: string;
}

export interface ServiceEntry extends Partial<ServiceFigures> {
  /**
   * The name the app gives it (`router`, `prefill-0`, `decode-1`; one rank of a DP-aware server `decode-0 dp rank
   * 1`; a regular worker, which the app does not show, its URL): the deployment's one numbering (fleetWorkerGroups).
   */
  name: string;
  role: WorkerRole | 'router';
  host: string;
  unit: string | null;
  units?: { host: string; unit: string; nodeRank: number; activeState: string | null }[];
  url: string;
  activeState: string | null;
  subState: string | null;
  health: string | null;
  kv?: {
    usedTokens: number;
    capacityTokens: number;
    ratio: number | null;
    source: string;
    /** Where the server has several DP ranks: the fullest, as the core names it. */
    fullestRank?: NonNullable<KvUsage['fullestRank']>;
  };
  error: string | null;
  notes?: string[];
}

export interface RoleTotal {
  workers: number;
  healthy: number;
  kv: { usedTokens: number; capacityTokens: number; ratio: number | null };
  /** The fullest worker of the role, by KV ratio. */
  fullest?: { name: string; url: string; ratio: number };
}

export interface ReportOptions {
  /** The deployment's service ids in its order: the entries follow it (a worker no service watches comes last). */
  order?: readonly string[];
  /** The figures of the service with this id. */
  figures?: (serviceId: string) => ServiceFigures | undefined;
}

/** The entries, totals and discovery findings of a fleet and one reading of it. */
export function fleetReport(fleet: Fleet, reading: FleetReading, opts: ReportOptions = {}) {
  const listed: { id: string; entry: ServiceEntry }[] = [];
  const nameOf = workerNames(fleet);
  fleet.routers.forEach((r, i) => {
    const u = reading.units.get(unitKey(r.host, r.unit));
    const s = reading.servers.get(serverKey(r.host, r.apiUrl));
    const id = routerServiceId(i);
    listed.push({
      id,
      entry: {
        name: id,
        role: 'router',
        host: r.host,
        unit: r.unit,
        url: r.apiUrl,
        activeState: u?.state?.activeState ?? null,
        subState: u?.state?.subState ?? null,
        health: healthText(s),
        error: s?.unreachable ?? u?.error ?? s?.kvError ?? null,
        ...opts.figures?.(id),
        ...(routerListFindings(r).length > 0 ? { notes: routerListFindings(r) } : {}),
      },
    });
  });
  for (const w of fleet.workers) {
    const { id, name } = nameOf(w);
    listed.push({ id, entry: workerEntry(w, name, reading, opts.figures?.(id)) });
  }
  const order = opts.order ?? [];
  const rank = (id: string): number => (order.includes(id) ? order.indexOf(id) : order.length);
  const services = listed.sort((a, b) => rank(a.id) - rank(b.id)).map((x) => x.entry);

  const roles: Partial<Record<WorkerRole, RoleTotal>> = {};
  const counted = new Set<string>();
  for (const w of fleet.workers) {
    const t = (roles[w.role] ??= {
      workers: 0,
      healthy: 0,
      kv: { usedTokens: 0, capacityTokens: 0, ratio: null },
    });
    t.workers++;
    const s = reading.servers.get(serverKey(w.host, w.apiUrl));
    if (s?.health?.ok) t.healthy++;
    const kv = s?.kv && workerKv(w, s.kv);
    if (kv && kv.ratio !== null && (!t.fullest || kv.ratio > t.fullest.ratio))
      t.fullest = { name: nameOf(w).name, url: w.url, ratio: kv.ratio };
    // DP-aware workers of one server share its pool: the server's total counts once.
    const k = serverKey(w.host, w.apiUrl);
    if (s?.kv && !counted.has(k)) {
      counted.add(k);
      t.kv.usedTokens += s.kv.usedTokens;
      t.kv.capacityTokens += s.kv.capacityTokens;
    }
  }
  for (const t of Object.values(roles))
    t.kv.ratio = t.kv.capacityTokens > 0 ? t.kv.usedTokens / t.kv.capacityTokens : null;

  return {
    host: fleet.origin,
    hosts: fleet.hosts,
    routers: fleet.routers,
    services,
    roles,
    unplaced: fleet.unplaced,
    unrouted: fleet.unrouted,
  };
}

/** The whole `status` document: the deployment and its link, then its fleet report, then the verdict. */
export interface StatusReport extends ReturnType<typeof fleetReport> {
  simulated: boolean;
  /** The origin's link state, as `link.state`. */
  connection: LinkReport['state'];
  /** The origin host as the app labels it ("demo GPU host (simulated)", the ssh alias, user@host:port). */
  hostLabel: string;
  deployment: string;
  link: LinkReport;
  verdict: Verdict;
}

/** Each worker's service id and its name as the app gives it (see ServiceEntry.name). */
function workerNames(fleet: Fleet): (w: FleetWorker) => { id: string; name: string } {
  const names = new Map<FleetWorker, { id: string; name: string }>();
  for (const g of fleetWorkerGroups(fleet))
    for (const w of g.entries)
      names.set(w, {
        id: g.id,
        name: g.entries.length > 1 && w.dpRank !== undefined ? `${g.id} dp rank ${w.dpRank}` : g.id,
      });
  return (w) => names.get(w) ?? { id: w.url, name: w.url };
}

function workerEntry(
  w: FleetWorker,
  name: string,
  reading: FleetReading,
  figures: ServiceFigures | undefined,
): ServiceEntry {
  const first = w.units[0];
  const u = first ? reading.units.get(unitKey(first.host, first.unit)) : undefined;
  const s = reading.servers.get(serverKey(w.host, w.apiUrl));
  const kv = s?.kv && workerKv(w, s.kv);
  const error = w.unreachable ?? s?.unreachable ?? u?.error ?? s?.kvError ?? null;
  const notes = [...w.notes];
  return {
    name,
    role: w.role,
    host: w.host,
    unit: first?.unit ?? null,
    ...(w.units.length > 1 || (first && first.nnodes > 1)
      ? {
          units: w.units.map((x) => ({
            host: x.host,
            unit: x.unit,
            nodeRank: x.nodeRank,
            activeState: reading.units.get(unitKey(x.host, x.unit))?.state?.activeState ?? null,
          })),
        }
      : {}),
    url: w.url,
    activeState: u?.state?.activeState ?? null,
    subState: u?.state?.subState ?? null,
    health: w.unreachable ?? healthText(s),
    ...(kv ? { kv } : {}),
    error,
    ...figures,
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/** A DP-aware worker (`…@rank`) is one rank of its server's pool; others the whole server, its fullest rank named. */
function workerKv(w: FleetWorker, kv: KvUsage): NonNullable<ServiceEntry['kv']> {
  const rank = w.dpRank !== undefined ? kv.ranks?.find((r) => r.rank === String(w.dpRank)) : undefined;
  if (rank)
    return { usedTokens: rank.used, capacityTokens: rank.capacity, ratio: rank.ratio, source: kv.source };
  return {
    usedTokens: kv.usedTokens,
    capacityTokens: kv.capacityTokens,
    ratio: kv.capacityTokens > 0 ? kv.usedTokens / kv.capacityTokens : null,
    source: kv.source,
    // The core names the fullest rank (kv.ts) only when there are several; the CLI does not recompute it.
    ...(kv.ranks && kv.ranks.length > 1 && kv.fullestRank ? { fullestRank: kv.fullestRank } : {}),
  };
}

function healthText(s: ServerReading | undefined): string | null {
  if (!s) return null;
  if (s.unreachable) return s.unreachable;
  if (!s.health) return null;
  return s.health.ok ? 'ok' : s.health.detail;
}
