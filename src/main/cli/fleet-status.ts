// `pd-console status` for a deployment the app opened as a fleet (several workers of a role, or a router naming
// other hosts): one entry per router and worker from the app's own observation of it (fleet-reading.ts), the
// per-role totals, and every worker discovery could not place or no router lists, with the line to change.
import type { ApiHandlers } from '@shared/contract';
import type { DeploymentSummary, KvUsage } from '@shared/domain';
import { verdictText } from './verdict-text';
import { isSingleHostPair, type Fleet, type FleetWorker, type WorkerRole } from '@shared/fleet';
import { listNeedsSaying, routerListFindings } from '../core/discovery/router-workers';
import { fleetWorkerGroups, routerServiceId } from '../core/fleet/fleet-config';
import {
  awaitFleetReading,
  serverKey,
  unitKey,
  type FleetReading,
  type ObservedCore,
  type ServerReading,
} from './fleet-reading';

export interface FleetIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

export interface ServiceEntry {
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
  kv?: { usedTokens: number; capacityTokens: number; ratio: number | null; source: string };
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

/** Prints the status of a fleet the app has open (`summary.fleet`); the exit status of `pd-console status`. */
export async function fleetStatus(
  app: { core: ObservedCore; handlers: Pick<ApiHandlers, 'getDashboard' | 'listDeployments'> },
  summary: DeploymentSummary & { fleet: Fleet },
  opts: { json: boolean; simulated: boolean; timeoutMs?: number },
  io: FleetIo,
): Promise<number> {
  const { fleet } = summary;
  const { reading, late } = await awaitFleetReading(
    app.core,
    summary.deployment.id,
    summary.deployment.services,
    opts.timeoutMs,
  );
  // Said on stderr so that --json stays one document; what they lack is in their entries too.
  if (late.length > 0)
    io.stderr(`pd-console status: still waiting, printed without a first answer from: ${late.join('; ')}\n`);
  const report = fleetReport(fleet, reading);
  const id = summary.deployment.id;
  const { verdict } = await app.handlers.getDashboard({ deploymentId: id });
  // The origin's link as the window's indicator shows it: the field scripts read in every status.
  const open = (await app.handlers.listDeployments({})).find((d) => d.deployment.id === id);
  const connection = (open ?? summary).connection.state;
  if (opts.json)
    io.stdout(JSON.stringify({ simulated: opts.simulated, connection, ...report, verdict }, null, 2) + '\n');
  else io.stdout(fleetTable(fleet, report) + verdictText(verdict));
  const allActive = report.services.every(
    (s) => s.activeState === 'active' && (s.units ?? []).every((u) => u.activeState === 'active'),
  );
  // No router means nothing is served, whatever the units' states.
  return allActive && fleet.unplaced.length === 0 && fleet.routers.length > 0 ? 0 : 3;
}

/**
 * A fleet of one router, one prefill and one decode on one host reads best in the classic status (one row per
 * service, its headline figures); a router whose list needs a word, or anything larger, gets the fleet table.
 */
export function showsAsFleet(fleet: Fleet): boolean {
  return !isSingleHostPair(fleet) || fleet.routers.some(listNeedsSaying);
}

export function fleetReport(fleet: Fleet, reading: FleetReading) {
  const services: ServiceEntry[] = [];
  const nameOf = workerNames(fleet);
  fleet.routers.forEach((r, i) => {
    const u = reading.units.get(unitKey(r.host, r.unit));
    const s = reading.servers.get(serverKey(r.host, r.apiUrl));
    services.push({
      name: routerServiceId(i),
      role: 'router',
      host: r.host,
      unit: r.unit,
      url: r.apiUrl,
      activeState: u?.state?.activeState ?? null,
      subState: u?.state?.subState ?? null,
      health: healthText(s),
      error: s?.unreachable ?? u?.error ?? null,
      ...(routerListFindings(r).length > 0 ? { notes: routerListFindings(r) } : {}),
    });
  });
  for (const w of fleet.workers) services.push(workerEntry(w, nameOf(w), reading));

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
      t.fullest = { name: nameOf(w), url: w.url, ratio: kv.ratio };
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

/** Each worker's name as the app gives it (see ServiceEntry.name). */
function workerNames(fleet: Fleet): (w: FleetWorker) => string {
  const names = new Map<FleetWorker, string>();
  for (const g of fleetWorkerGroups(fleet))
    for (const w of g.entries)
      names.set(w, g.entries.length > 1 && w.dpRank !== undefined ? `${g.id} dp rank ${w.dpRank}` : g.id);
  return (w) => names.get(w) ?? w.url;
}

function workerEntry(w: FleetWorker, name: string, reading: FleetReading): ServiceEntry {
  const first = w.units[0];
  const u = first ? reading.units.get(unitKey(first.host, first.unit)) : undefined;
  const s = reading.servers.get(serverKey(w.host, w.apiUrl));
  const kv = s?.kv && workerKv(w, s.kv);
  const error = w.unreachable ?? s?.unreachable ?? u?.error ?? (s && !s.kv ? (s.kvError ?? null) : null);
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
    ...(notes.length > 0 ? { notes } : {}),
  };
}

/** A DP-aware worker (`…@rank`) is one rank of its server's pool; others the whole server. */
function workerKv(w: FleetWorker, kv: KvUsage): NonNullable<ServiceEntry['kv']> {
  const rank = w.dpRank !== undefined ? kv.ranks?.find((r) => r.rank === String(w.dpRank)) : undefined;
  if (rank)
    return { usedTokens: rank.used, capacityTokens: rank.capacity, ratio: rank.ratio, source: kv.source };
  return {
    usedTokens: kv.usedTokens,
    capacityTokens: kv.capacityTokens,
    ratio: kv.capacityTokens > 0 ? kv.usedTokens / kv.capacityTokens : null,
    source: kv.source,
  };
}

function healthText(s: ServerReading | undefined): string | null {
  if (!s) return null;
  if (s.unreachable) return s.unreachable;
  if (!s.health) return null;
  return s.health.ok ? 'ok' : s.health.detail;
}

const pct = (r: number | null): string => (r === null ? 'n/a' : `${(r * 100).toFixed(1)} %`);
const tokens = (n: number): string => n.toLocaleString('en-US');

export function fleetTable(fleet: Fleet, report: ReturnType<typeof fleetReport>): string {
  const count = (role: string) => report.services.filter((s) => s.role === role).length;
  const lines: string[] = [
    `${fleet.origin} — ${fleet.hosts.length} host(s) (${fleet.hosts.map((h) => h.id + (h.unreachable ? ' unreachable' : '')).join(', ')}): ` +
      `${count('router')} router, ${count('prefill')} prefill, ${count('decode')} decode` +
      (count('regular') > 0 ? `, ${count('regular')} regular` : ''),
  ];
  const rows = report.services.map((s) => [
    s.role,
    s.name,
    s.url,
    s.host,
    (s.unit ?? '—') +
      (s.units && s.units.length > 1
        ? ` +${s.units
            .slice(1)
            .map((u) => `${u.host} r${u.nodeRank}`)
            .join(',')}`
        : ''),
    s.activeState ? `${s.activeState}/${s.subState ?? '?'}` : 'unknown',
    s.health ?? '—',
    s.kv
      ? `${pct(s.kv.ratio)} (${tokens(s.kv.usedTokens)} / ${tokens(s.kv.capacityTokens)})`
      : s.role === 'router'
        ? ''
        : `n/a${s.error ? ` (${s.error})` : ''}`,
  ]);
  // Workers by the app's names (decode-1), their URLs beside them.
  const head = ['ROLE', 'WORKER', 'URL', 'HOST', 'UNIT', 'STATE', 'HEALTH', 'KV'];
  const last = head.length - 1;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (i < last ? r[i].length : 0))));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]) : c))
      .join('  ')
      .trimEnd();
  lines.push(fmt(head), ...rows.map(fmt));
  for (const [role, t] of Object.entries(report.roles))
    lines.push(
      `${role}: ${t.healthy}/${t.workers} healthy, KV ${pct(t.kv.ratio)} (${tokens(t.kv.usedTokens)} / ${tokens(t.kv.capacityTokens)} tokens)` +
        (t.fullest && t.workers > 1 ? `, fullest ${t.fullest.name} at ${pct(t.fullest.ratio)}` : ''),
    );
  for (const s of report.services) for (const n of s.notes ?? []) lines.push(`note: ${s.name}: ${n}`);
  if (fleet.unplaced.length > 0) {
    lines.push('unplaced:');
    for (const u of fleet.unplaced) lines.push(`  ${u.reason} — ${u.fix}`);
  }
  if (fleet.unrouted.length > 0) {
    lines.push('SGLang units no router lists:');
    for (const u of fleet.unrouted) lines.push(`  ${u.host} ${u.unit} (${u.role}, ${u.apiUrl}): ${u.reason}`);
  }
  return lines.join('\n') + '\n';
}
