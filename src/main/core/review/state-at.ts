// The deployment as it was at one moment of a recording: an Observation (unit state, health, scrape, KV and
// signals per service) and a DashboardSnapshot (values, KV detail, verdict, alerts firing then), the same
// objects a live poll produces, so every card and page shows the cursor's moment unchanged.
import { compareDpRanks } from '../signals/evaluate/kv';
import type { ActiveAlert, DashboardSnapshot, RouterWorkerState } from '@shared/contract';
import type { AppEvent, KvUsage, Observation, Role, ServiceConfig, ServiceObservation } from '@shared/domain';
import { serviceId } from '@shared/domain';
import { fleetWorkersOf, type FleetWorker } from '@shared/worker-names';
import { unitSource, workerTarget } from '../recording/fleet-targets';
import { KV_METRICS } from '../probes/sglang/kv';
import { pipelineVerdict } from '../signals/verdict';
import { workersAt } from '../signals/evaluate/router-workers';
import { dashboardSnapshot } from '../signals/dashboard-snapshot';
import type { ReviewData } from './review-data';
import { gpuStatusesAt } from './host-columns';

/** The last record of the sources `of` accepts at or before ts (records sorted by ts). */
function lastAt<T extends { ts: number; source: string }>(
  list: readonly T[],
  of: (source: string) => boolean,
  ts: number,
): T | undefined {
  for (let i = countUpTo(list.length, (k) => list[k].ts, ts) - 1; i >= 0; i--)
    if (of(list[i].source)) return list[i];
  return undefined;
}

/** How many of n times, sorted ascending and read by `at`, are at or before ts. */
function countUpTo(n: number, at: (k: number) => number, ts: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at(mid) <= ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A role's group, or a worker's (`decode@decode-1`, whose keys end in `@decode-1`). */
interface Group {
  name: string;
  role: Role;
  suffix: string;
}

function groupOfService(svc: ServiceConfig): Group {
  const id = serviceId(svc);
  return { name: workerTarget(svc.role, id), role: svc.role, suffix: `@${id}` };
}

/** Values of one group's row at or before ts, the row index, and whether that row is a scrape. */
function rowOf(
  data: ReviewData,
  group: Group | Role,
  ts: number,
): { k: number; scraped: boolean; at: number } | null {
  const gr = typeof group === 'string' ? { name: group, role: group, suffix: '' } : group;
  const g = data.table.groups.get(gr.name);
  const k = data.table.rowAtOrBefore(gr.name, ts);
  if (!g || k < 0) return null;
  const ok = g.cols.get(`${gr.role}.metrics_ok${gr.suffix}`);
  const step = data.roleInfo.get(gr.name)?.stepMs ?? 1000;
  return { k, scraped: ok?.[k] === 1 && ts - g.t[k] <= 2.5 * step, at: g.t[k] };
}

export function observationAt(
  data: ReviewData,
  deploymentId: string,
  hostId: string,
  ts: number,
): Observation {
  const services: ServiceObservation[] = data.header.deployment.services.map((svc) => {
    const role = svc.role;
    const group = groupOfService(svc);
    const of = (src: string): boolean => src === group.name;
    const unit = lastAt(data.unitStates, of, ts);
    const health = lastAt(data.health, of, ts);
    const row = rowOf(data, group, ts);
    const info = data.roleInfo.get(group.name);
    const o: ServiceObservation = { role, unit: svc.unit, id: serviceId(svc), hostId: svc.hostId };
    // A multi-node worker: each unit's own recorded state (rank ≥ 1 read on its own host).
    if (svc.units)
      o.units = svc.units.map((u) => {
        const source = unitSource(role, o.id!, u.nodeRank);
        const st = lastAt(data.unitStates, (src) => src === source, ts);
        return {
          hostId: u.hostId,
          unit: u.unit,
          nodeRank: u.nodeRank,
          ...(st ? { systemd: st.state } : { systemdError: 'no state recorded for this unit yet' }),
        };
      });
    if (unit) o.systemd = unit.state;
    if (health) o.health = health.health;
    if (row?.scraped)
      o.metrics = {
        ok: true,
        scrapedAt: row.at,
        // Scrape durations are not recorded.
        durationMs: 0,
        families: info?.families ?? 0,
        samples: info?.series ?? 0,
      };
    else
      o.metrics = {
        ok: false,
        at: ts,
        error: info?.series
          ? 'no /metrics scrape recorded at this moment'
          : `no /metrics scrape of ${role} in this recording`,
        hint: 'The service was down or unreachable, or its metrics failed: the recording has no values here.',
      };
    if (role !== 'router') {
      const kv = row?.scraped ? kvAt(data, group, row.k) : undefined;
      // Never exposed in the whole session: say which metrics were expected. Merely not scraped at this
      // moment: the scrape status above already says so.
      const missing = data.notExposed[`${role}.kv_ratio${group.suffix}`];
      if (kv) o.kv = kv;
      else if (missing) o.kvMissing = { reason: missing.why, expected: missing.expected };
    }
    return o;
  });
  return { deploymentId, hostId, ts, services };
}

function kvAt(data: ReviewData, group: Group, k: number): KvUsage | undefined {
  const { role, suffix } = group;
  const src = data.kv.get(group.name);
  const g = data.table.groups.get(group.name);
  const idx = src?.source[k] ?? -1;
  if (!src || !g || idx < 0) return undefined;
  const meta = src.metas[idx];
  const v = (key: string): number => g.cols.get(`${role}.${key}${suffix}`)?.[k] ?? NaN;
  const evictable = v('kv_evictable');
  const free = v('kv_free');
  // Each dp rank's own pool (review evaluates rank tokens too), sorted by rank; the fullest is the first of
  // the equally full, as live.
  const ranks: NonNullable<KvUsage['ranks']> = [];
  const rankPrefix = `${role}.kv_rank.`;
  const rankSuffix = `.ratio${suffix}`;
  for (const [key, col] of g.cols) {
    if (!key.startsWith(rankPrefix) || !key.endsWith(rankSuffix) || !(col[k] === col[k])) continue;
    const rank = key.slice(rankPrefix.length, -rankSuffix.length);
    ranks.push({
      rank,
      ratio: col[k],
      used: v(`kv_rank.${rank}.used`),
      capacity: v(`kv_rank.${rank}.capacity`),
    });
  }
  ranks.sort((a, b) => compareDpRanks(a.rank, b.rank));
  let fullestRank: KvUsage['fullestRank'];
  for (const r of ranks)
    if (!fullestRank || r.ratio > fullestRank.ratio) fullestRank = { rank: r.rank, ratio: r.ratio };
  return {
    usedTokens: v('kv_used'),
    capacityTokens: v('kv_capacity'),
    ratio: v('kv_ratio'),
    ...(ranks.length > 1 && fullestRank ? { ranks, fullestRank } : {}),
    ...(Number.isFinite(evictable) ? { evictableTokens: evictable } : {}),
    ...(meta.sourceMetrics.includes(KV_METRICS.available) && Number.isFinite(free)
      ? { availableTokens: free }
      : {}),
    source: meta.source,
    sourceMetrics: meta.sourceMetrics,
    ...(meta.caveat ? { caveat: meta.caveat } : {}),
  };
}

/**
 * Alerts firing at ts: fired and not yet resolved or ended, paired by the alert's key (AppEvent.alert) whatever
 * its text became in between (an edited threshold, the workers it names). A recording made before events carried
 * the key pairs "X" with a later "resolved: X" of the same role.
 */
export function alertsAt(events: readonly AppEvent[], ts: number): ActiveAlert[] {
  const active = new Map<string, ActiveAlert>();
  for (const e of events) {
    if (e.ts > ts) break;
    if (e.kind !== 'alert') continue;
    const a = e.alert;
    if (a) {
      if (a.change === 'resolved' || a.change === 'ended') active.delete(a.key);
      else {
        const was = active.get(a.key);
        if (a.change === 'updated' && !was) continue;
        active.set(a.key, {
          key: a.key,
          ruleId: a.ruleId,
          ...(e.role ? { role: e.role } : {}),
          severity: e.severity === 'error' || was?.severity === 'error' ? 'error' : 'warning',
          title: e.title,
          detail: e.detail ?? '',
          since: was?.since ?? e.ts,
          ...(a.expected ? { expected: a.expected } : {}),
        });
      }
      continue;
    }
    const resolved = /^resolved: /.test(e.title);
    const title = resolved ? e.title.slice('resolved: '.length) : e.title;
    const key = `${e.role ?? ''}|${title}`;
    if (resolved) active.delete(key);
    else if (e.severity !== 'info' && !active.has(key))
      active.set(key, {
        key: `recorded-${e.id}`,
        ruleId: `recorded-${e.id}`,
        ...(e.role ? { role: e.role } : {}),
        severity: e.severity === 'error' ? 'error' : 'warning',
        title,
        detail: e.detail ?? '',
        since: e.ts,
      });
  }
  return [...active.values()];
}

/** The dashboard's snapshot at ts, built by the one snapshot builder of the live view from the recording's table. */
export function snapshotAt(
  data: ReviewData,
  events: readonly AppEvent[],
  deploymentId: string,
  ts: number,
): DashboardSnapshot {
  return dashboardSnapshot(
    {
      values: data.table.valuesAt(ts),
      growth: (key, ms) => data.table.growth(key, ms, ts),
      kvMeta: (role) => {
        const row = rowOf(data, role, ts);
        const src = data.kv.get(role);
        const idx = row ? (src?.source[row.k] ?? -1) : -1;
        // The last KV source seen so far names the figures while a scrape is missing.
        return idx >= 0 ? src!.metas[idx] : src?.metas[0];
      },
      routerWorkers: routerWorkersAt(data, ts),
      notExposed: { ...data.notExposed },
    },
    {
      deploymentId,
      ts,
      roles: data.roles,
      workers: workersOf(data),
      // Every host's GPU table, as live: the recording keeps one group per host (`gpu@gpu-b`).
      gpu: gpuStatusesAt(data.table, ts, deploymentHosts(data.header)),
      alerts: alertsAt(events, ts),
    },
    pipelineVerdict,
  );
}

/**
 * The router's list of workers as its last scrape at or before ts gave it — what live shows from the newest
 * (it keeps the last list while a scrape fails); none before its first scrape or where it names no workers.
 */
function routerWorkersAt(data: ReviewData, ts: number): RouterWorkerState[] | undefined {
  const tl = data.routerWorkers;
  if (!tl) return undefined;
  const i = countUpTo(tl.t.length, (k) => tl.t[k], ts) - 1 - tl.from;
  return i >= 0 ? workersAt(tl.rows, i) : undefined;
}

/** The workers with their hosts, so the verdict names both ("decode-2 on gpu-b"), as live. */
function workersOf(data: ReviewData): FleetWorker[] | undefined {
  return fleetWorkersOf(data.header.deployment.services);
}

/** The hosts the recorded deployment runs on, its first service's first (the origin, as live). */
function deploymentHosts(header: ReviewData['header']): string[] {
  const hosts = header.deployment.services.flatMap((s) => [
    s.hostId,
    ...(s.units ?? []).map((u) => u.hostId),
  ]);
  return [...new Set(hosts.length ? hosts : [header.host.id])];
}
