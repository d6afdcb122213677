// Where are requests piling up? A pure reading of one round of a PD pipeline (router → prefill → KV transfer →
// decode) into one plain verdict with the figures that support it and what to do next.
//
// The PD queues say which hand-off is stuck (reference §1.6):
//   prefill queued            waiting for prefill compute                          → prefill-bound
//   prefill bootstrap queue   waiting for decode to accept (handshake, KV slots)   → decode-bound
//   decode prealloc queue     waiting for free KV slots on decode                  → decode-bound
//   prefill inflight queue    KV being sent                                        → transfer-bound
//   decode transfer queue     waiting for KV to arrive                             → transfer-bound
// plus decode KV near full (decode-bound), transfer failures and latency (transfer-bound), and router 5xx or
// unhealthy workers while the servers have room (router-bound).
//
// Before any of that, what the figures can be trusted for: a host whose link is down is not read at all (nothing
// that needs its data is said); a unit that is not serving says why (its condition: systemd, /health, journal);
// a unit this console is restarting is the operator's doing, not a fault; and after an outage the windowed
// figures (5xx share, transfer failures) are read from the window since the recovery, not over one that still
// holds the outage — so the router is never blamed for the 5xx of a worker that was down, or for counting
// unhealthy a worker that is down, loading or being restarted.
//
// A role is one or several workers: the unscoped keys are the role's aggregate, and the per-worker keys
// (`decode.kv_ratio@decode-2`) say which worker is the one at fault, so the verdict names it and its host (the
// only worker of its role by the role: worker-names.ts).
import type { RouterWorkerState, Verdict, VerdictKind } from '@shared/contract';
import type { ConnectionStatus, Role } from '@shared/domain';
import type { UnitCondition } from '@shared/unit-condition';
import { routerWorkerHealth } from '@shared/router-health';
import { splitScopedKey } from '@shared/signals/scoped-key';
import type { OperatorAction } from '../actions/in-progress';
import {
  markAlone,
  workerList,
  workerName as named,
  workerShortName,
  type FleetWorker,
} from '@shared/worker-names';

export interface VerdictThresholds {
  /** A queue this long counts as piling up (requests). */
  queue: number;
  /** Decode KV usage at or above this is "full" (0..1). */
  kvFull: number;
  /** KV transfer latency (p50 or mean) above this is slow (ms). */
  transferLatencyMs: number;
  /** Router 5xx share at or above this is failing (0..1). */
  routerErrorShare: number;
}

export const DEFAULT_VERDICT_THRESHOLDS: VerdictThresholds = {
  queue: 8,
  kvFull: 0.9,
  transferLatencyMs: 500,
  routerErrorShare: 0.05,
};

/** One service's reading this round: its condition (shared/unit-condition.ts) and where the router knows it. */
export interface UnitReading {
  /** The scope of its keys in a fleet (`decode-1`); the role in a one-host pair. */
  key: string;
  role: Role;
  /** The host it runs on (node rank 0's). */
  hostId?: string;
  /** Its URL as the router lists it, normalised, to match the router's worker list. */
  url?: string;
  condition: UnitCondition;
  /** Why its /metrics was not read this round, when it was not. */
  metricsError?: string;
  /** Since when this console has seen it not serving (the verdict tracker's), when it is not. */
  downSince?: number;
}

/** A host's SSH link as the verdict reads it. */
export interface LinkReading {
  hostId: string;
  /** How the operator knows the host ("gpu-b", "demo GPU host (simulated)"). */
  label: string;
  status: ConnectionStatus;
  /** Since when it has not answered (it left the connected state); null while it answers. */
  downSince: number | null;
  /** The last round with data from it; null when none came yet. */
  lastDataAt: number | null;
}

/** A unit or a link that was down and came back. */
export interface Recovery {
  /** The unit's key, or `link:<hostId>`. */
  key: string;
  /** "decode", "decode-1 on gpu-b", "the link to gpu-b". */
  what: string;
  /** The unit's role; none for a link. */
  role?: Role;
  from: number;
  until: number;
  /** What it was while down: the unit's condition, or the link's state. */
  why: string;
  /** It was down because this console restarted it. */
  byYou: boolean;
}

export interface VerdictInput {
  /** Latest values by signal key (`prefill.queued`, `decode.kv_ratio`, …); absent or null = unknown. */
  values: Record<string, number | null | undefined>;
  /** Change of queue keys over the last couple of minutes (same keys), when known. */
  growth?: Record<string, number | null | undefined>;
  /** Roles this deployment has. */
  roles: readonly Role[];
  /**
   * A fleet's workers, for naming them with their host. Without it the workers are read from the scoped keys
   * in `values` (named without a host); a one-host pair has no scoped keys and none.
   */
  workers?: readonly FleetWorker[];
  /** The router's own view of its workers (its per-worker health gauges), to name the ones it finds unhealthy. */
  routerWorkers?: readonly RouterWorkerState[];
  /** The round's time (the times the verdict names are read against it). */
  now?: number;
  /**
   * Each service's condition this round. Without it (a recording, a test of the figures alone) a service is
   * down when `active` or `health_ok` reads 0.
   */
  units?: readonly UnitReading[];
  /** The deployment's host links; a host whose link is down is not judged from stale figures. */
  links?: readonly LinkReading[];
  /** Restarts and rolls this console runs now. */
  actions?: readonly OperatorAction[];
  /** Units and links that came back within the last rate window, newest first. */
  recovered?: readonly Recovery[];
  /**
   * The windowed signals (rates, shares, quantiles) evaluated over the window since the last recovery only,
   * read instead of the standard window's while that one still holds the outage.
   */
  fresh?: { since: number; values: Record<string, number | null | undefined> };
  /** The last stuck or down verdict, when it ended lately: said as the transition out of it. */
  lastProblem?: { kind: VerdictKind; text: string; until: number };
  /** The verdict before the link went down, said as what was last known. */
  beforeLinkLoss?: string;
}

/** The workers of each role: as given, else every scope the values name for the role. */
function workersByRole(input: VerdictInput): Map<Role, FleetWorker[]> {
  const by = new Map<Role, FleetWorker[]>();
  const add = (w: FleetWorker): void => {
    const list = by.get(w.role) ?? [];
    if (!list.some((x) => x.id === w.id)) list.push(w);
    by.set(w.role, list);
  };
  if (input.workers) for (const w of input.workers) add(w);
  else {
    for (const k of Object.keys(input.values)) {
      const { key, scope } = splitScopedKey(k);
      const role = key.slice(0, key.indexOf('.')) as Role;
      if (scope !== undefined && input.roles.includes(role) && !key.startsWith('gpu.'))
        add({ id: scope, role });
    }
    for (const [role, list] of by) by.set(role, markAlone(list, false));
  }
  return by;
}

type Stage = 'prefill' | 'decode' | 'transfer' | 'router';

/** One service as the verdict weighs it: serving, down (and why), being restarted by the operator, or unread. */
interface Part {
  key: string;
  role: Role;
  worker: FleetWorker;
  state: 'serving' | 'down' | 'ours' | 'unread';
  /** Why it is down: "not active (systemd)", "not serving — crash-looping: restart 4, …". */
  why: string;
  condition?: UnitCondition;
  downSince?: number;
  action?: OperatorAction;
  url?: string;
  link?: LinkReading;
  /** Why a failing check is expected here (a router not ready while it has no worker to send to). */
  note?: string;
  /** Why its /metrics was not read this round. */
  metricsError?: string;
}

export function pipelineVerdict(
  input: VerdictInput,
  th: VerdictThresholds = DEFAULT_VERDICT_THRESHOLDS,
): Verdict {
  const roles = [...new Set(input.roles)];
  const parts = partsOf(input, roles);
  const down = (input.links ?? []).filter((l) => l.downSince !== null);
  if (down.length > 0) return unreachable(input, parts, down, th);
  return judge(input, parts, th);
}

/** Each service of each role, with its state this round. */
function partsOf(input: VerdictInput, roles: readonly Role[]): Part[] {
  const fleet = workersByRole(input);
  const v = valueOf(input.values);
  const downLinks = (input.links ?? []).filter((l) => l.downSince !== null);
  const out: Part[] = [];
  for (const role of roles) {
    const workers = fleet.get(role);
    const list: Array<{ worker: FleetWorker; scope: string }> =
      workers && workers.length > 0
        ? workers.map((w) => ({ worker: w, scope: `@${w.id}` }))
        : [{ worker: { id: role, role }, scope: '' }];
    for (const { worker, scope } of list) {
      const unit = input.units?.find((u) => u.key === worker.id && u.role === role);
      const hostId = unit?.hostId ?? worker.hosts?.[0];
      // A one-host pair has one link: when it is down, every service is unread.
      const link =
        downLinks.find((l) => l.hostId === hostId) ??
        (scope === '' || hostId === undefined ? downLinks[0] : undefined);
      // A restart names the role it restarts (it runs only where the role is one worker), a roll the worker.
      const action = input.actions?.find(
        (a) => a.current.includes(worker.id) || (a.kind === 'restart' && a.current.includes(role)),
      );
      const part: Part = {
        key: worker.id,
        role,
        worker,
        state: 'serving',
        why: '',
        ...(unit ? { condition: unit.condition } : {}),
        ...(unit?.downSince !== undefined ? { downSince: unit.downSince } : {}),
        ...(unit?.metricsError ? { metricsError: unit.metricsError } : {}),
        ...((unit?.url ?? worker.url) ? { url: unit?.url ?? worker.url } : {}),
      };
      if (link) {
        part.state = 'unread';
        part.link = link;
      } else if (action) {
        part.state = 'ours';
        part.action = action;
      } else if (unit && unit.condition.kind !== 'unknown') {
        if (unit.condition.kind !== 'serving') {
          part.state = 'down';
          part.why = `not serving — ${unit.condition.text}`;
        }
      } else if (v(`${role}.active${scope}`) === 0) {
        part.state = 'down';
        part.why = 'not active (systemd)';
      } else if (v(`${role}.health_ok${scope}`) === 0) {
        part.state = 'down';
        part.why = `running but failing its ${role === 'router' ? 'readiness' : 'health'} check`;
      }
      out.push(part);
    }
  }
  return explainRouterReadiness(out, input.recovered ?? []);
}

/**
 * A router is not ready while a role it routes to has no worker serving, and reads so until its next checks after
 * the role is back: its failing readiness is the workers' doing, said beside them rather than as a second
 * service down (the console reads /health every few polls, the router re-checks its workers on its own cadence).
 */
function explainRouterReadiness(parts: Part[], recovered: readonly Recovery[]): Part[] {
  const servers = [...new Set(parts.filter((p) => p.role !== 'router').map((p) => p.role))];
  const starved = servers.filter((r) =>
    parts.filter((p) => p.role === r).every((p) => p.state !== 'serving'),
  );
  const back = servers.filter(
    (r) => !starved.includes(r) && recovered.some((x) => parts.some((p) => p.key === x.key && p.role === r)),
  );
  if (starved.length === 0 && back.length === 0) return parts;
  for (const p of parts)
    if (
      p.role === 'router' &&
      p.state === 'down' &&
      (p.condition ? p.condition.kind === 'not-answering' : p.why.includes('readiness'))
    ) {
      p.state = 'serving';
      p.why = '';
      p.note =
        starved.length > 0
          ? `${workerShortName(p.worker)}: not ready while no ${starved.join(' or ')} worker serves, as expected`
          : `${workerShortName(p.worker)}: not ready yet after ${back.join(' and ')} came back; it re-checks its workers on its own`;
    }
  return parts;
}

const valueOf =
  (values: Record<string, number | null | undefined>) =>
  (k: string): number | null => {
    const x = values[k];
    return x === undefined || x === null || !Number.isFinite(x) ? null : x;
  };

/** The verdict while a host's link is down: what cannot be read is said so, and only the rest is judged. */
function unreachable(
  input: VerdictInput,
  parts: readonly Part[],
  down: readonly LinkReading[],
  th: VerdictThresholds,
): Verdict {
  const first = down[0];
  const unread = parts.filter((p) => p.state === 'unread');
  const rest = parts.filter((p) => p.state !== 'unread');
  // Hosts are named when there are several to tell apart.
  const manyHosts = (input.links?.length ?? 0) > 1;
  const hosts = down.map((l) => l.label).join(', ');
  const who = manyHosts ? hosts : down.length > 1 ? `Hosts ${hosts}` : 'Host';
  const evidence: string[] = [];
  for (const l of down) {
    const prefix = down.length > 1 || manyHosts ? `${l.label}: ` : '';
    evidence.push(
      l.lastDataAt !== null
        ? `${prefix}last data at ${clock(l.lastDataAt)}`
        : `${prefix}no data has come from it yet`,
    );
    if (l.status.state === 'reconnecting') evidence.push(`${prefix}last error: ${l.status.lastError}`);
    if (l.status.state === 'failed') evidence.push(`${prefix}${l.status.reason}`);
  }
  if (rest.length === 0 || !manyHosts) {
    evidence.push('unit states, health and metrics cannot be read until the link is back');
    if (input.beforeLinkLoss) evidence.push(`before it dropped: ${input.beforeLinkLoss}`);
    return {
      kind: 'unreachable',
      headline: `${who} unreachable since ${clock(first.downSince!)} (${linkState(first.status)}).`,
      evidence,
      nextStep: linkNextStep(first),
    };
  }
  // Other hosts still read: the workers there are judged, the unread ones are named.
  const others = judge(input, rest, th);
  return {
    kind: 'unreachable',
    headline: `${hosts} unreachable since ${clock(first.downSince!)} (${linkState(first.status)}): ${workerList(unread.map((p) => p.worker))} not read.`,
    evidence: [...evidence, `the other hosts: ${others.headline}`],
    nextStep: linkNextStep(first),
  };
}

function linkState(s: ConnectionStatus): string {
  switch (s.state) {
    case 'reconnecting':
      return `reconnecting, attempt ${s.attempt}`;
    case 'connecting':
      return `connecting, attempt ${s.attempt}`;
    case 'stale':
      return 'not answering, the link is still open';
    case 'failed':
      return 'gave up reconnecting';
    default:
      return s.state;
  }
}

function linkNextStep(l: LinkReading): string {
  const s = l.status;
  if (s.state === 'failed')
    return s.hint ?? `check that ${l.label} is reachable, then reconnect it from the host list`;
  if (s.state === 'reconnecting')
    return `check the network or VPN to ${l.label}; the console reconnects by itself (next attempt at ${clock(s.nextAttemptAt)})`;
  return `check the network or VPN to ${l.label}; the console reconnects by itself`;
}

/** The verdict over the parts that can be read. */
function judge(input: VerdictInput, parts: readonly Part[], th: VerdictThresholds): Verdict {
  const v = valueOf(input.values);
  const g = (k: string): number => {
    const x = input.growth?.[k];
    return x === undefined || x === null || !Number.isFinite(x) ? 0 : x;
  };
  const roles = [...new Set(parts.map((p) => p.role))];
  const fleet = workersByRole(input);
  const nameOf = (p: Part): string => named(p.worker);
  const listOf = (ps: readonly Part[]): string => workerList(ps.map((p) => p.worker));

  // 1. A service that is not serving explains everything downstream of it. In a fleet a role stops only when
  // none of its workers serves; one worker down leaves the others serving, which the verdict says beside its
  // reading. Each worker is named once: the role's down workers in one line, then one line per reason.
  const down: string[] = [];
  const degraded: string[] = [];
  const downParts: Part[] = [];
  for (const role of roles) {
    const mine = parts.filter((p) => p.role === role);
    const out = mine.filter((p) => p.state === 'down');
    if (out.length === 0) continue;
    downParts.push(...out);
    const serving = mine.filter((p) => p.state === 'serving').length;
    if (serving === 0 && out.length > 1) {
      down.push(`every ${role} worker is down: ${listOf(out)}`);
      for (const why of [...new Set(out.map((x) => x.why))])
        down.push(`${listOf(out.filter((x) => x.why === why))}: ${why}`);
    } else {
      const texts = out.map((x) => `${nameOf(x)} is ${x.why}`).join(', ');
      if (serving === 0) down.push(texts);
      else degraded.push(`${texts}; ${serving} of ${mine.length} ${role} workers serve`);
    }
  }
  const ours = parts.filter((p) => p.state === 'ours');
  const oursLines = ourLines(ours);
  if (down.length > 0)
    return {
      kind: 'service-down',
      headline: `Requests cannot flow: ${down[0]}.`,
      evidence: [
        ...down,
        ...conditionLines(downParts, nameOf),
        ...notes(parts),
        ...oursLines.map((l) => `also: ${l}`),
      ],
      nextStep: downNextStep(downParts[0], nameOf),
    };

  // The operator's restart leaves a role with nothing serving: expected, and said as such.
  const stopped = roles.filter((r) => {
    const mine = parts.filter((p) => p.role === r);
    return mine.length > 0 && mine.every((p) => p.state === 'ours');
  });
  if (stopped.length > 0) return restarting(ours, nameOf, parts, ' requests wait until it is back');

  const servers = roles.filter((r) => r !== 'router');
  if (servers.length > 0 && servers.every((r) => v(`${r}.metrics_ok`) !== 1)) {
    const never = servers.every((r) => v(`${r}.metrics_ok`) === null);
    const failing = (input.units ?? []).find((u) => u.role !== 'router' && u.metricsError);
    return {
      kind: 'unknown',
      headline: never
        ? 'No metrics from the servers yet, so where requests wait cannot be told.'
        : "The servers' /metrics do not answer, so where requests wait cannot be told.",
      evidence: servers.map((r) =>
        v(`${r}.metrics_ok`) === 0
          ? `${r}: /metrics did not answer${metricsErrorOf(input, r)}`
          : `${r}: not scraped yet`,
      ),
      nextStep: failing
        ? `open the ${failing.role} service page: its /metrics fails (${failing.metricsError}); the servers need --enable-metrics`
        : 'wait for the first scrape; if none comes, check that the servers run with --enable-metrics',
    };
  }

  // Windowed figures from the window since the last recovery while the standard one still holds the outage.
  const fresh = input.fresh;
  const w = (k: string): number | null => (fresh ? valueOf(fresh.values)(k) : v(k));

  // A count the role's aggregate lacks is the sum of its workers' own (a fleet's queues add up).
  const summedBy = (read: (k: string) => number | null) => (k: string) => {
    const own = read(k);
    if (own !== null) return own;
    const xs = (fleet.get(k.slice(0, k.indexOf('.')) as Role) ?? [])
      .map((wk) => read(`${k}@${wk.id}`))
      .filter((x): x is number => x !== null);
    return xs.length === 0 ? null : xs.reduce((t, x) => t + x, 0);
  };
  const summed = summedBy(v);
  const q = (k: string): number => summed(k) ?? 0;
  const norm = (k: string): number => q(k) / th.queue + (g(k) >= th.queue / 2 ? 0.5 : 0);
  const ev: Record<Stage, Array<[number, string]>> = { prefill: [], decode: [], transfer: [], router: [] };
  const add = (stage: Stage, weight: number, text: string): void => {
    if (weight > 0) ev[stage].push([weight, text]);
  };
  const reqs = (k: string): string => `${fmt(q(k))} request${q(k) === 1 ? '' : 's'}`;
  const grow = (k: string): string => (g(k) > 0 ? ` (+${fmt(g(k))} in 2 min)` : '');
  // In a fleet, which worker holds the queue: ", 9 on prefill-1 on gpu-a, others at most 2".
  const where = (k: string): string => {
    const held = (fleet.get(k.slice(0, k.indexOf('.')) as Role) ?? [])
      .map((wk) => ({ w: wk, n: v(`${k}@${wk.id}`) }))
      .filter((x): x is { w: FleetWorker; n: number } => x.n !== null)
      .sort((a, b) => b.n - a.n);
    if (held.length === 0 || !(held[0].n > 0)) return '';
    const others = held.length > 1 ? held[1].n : 0;
    return others > 0
      ? `, ${fmt(held[0].n)} on ${named(held[0].w)}, others at most ${fmt(others)}`
      : `, all on ${named(held[0].w)}`;
  };

  add(
    'prefill',
    norm('prefill.queued'),
    `${reqs('prefill.queued')} queued for prefill${grow('prefill.queued')}${where('prefill.queued')}`,
  );
  add(
    'decode',
    norm('decode.decode_prealloc_queue'),
    `${reqs('decode.decode_prealloc_queue')} waiting for KV slots on decode${grow('decode.decode_prealloc_queue')}${where('decode.decode_prealloc_queue')}`,
  );
  add(
    'decode',
    norm('prefill.prefill_bootstrap_queue'),
    `${reqs('prefill.prefill_bootstrap_queue')} in the prefill bootstrap queue, waiting for decode to accept${where('prefill.prefill_bootstrap_queue')}`,
  );
  add(
    'decode',
    norm('decode.queued'),
    `${reqs('decode.queued')} queued on decode${grow('decode.queued')}${where('decode.queued')}`,
  );
  // The fullest dp rank is the one refusing requests (the same figure the KV alert watches).
  const kvTotal = v('decode.kv_ratio');
  const kvOf = (scope: string): number | null =>
    v(`decode.kv_fullest_rank_ratio${scope}`) ?? v(`decode.kv_ratio${scope}`);
  const decodeWorkers = (fleet.get('decode') ?? [])
    .map((wk) => ({ w: wk, kv: kvOf(`@${wk.id}`) }))
    .filter((x): x is { w: FleetWorker; kv: number } => x.kv !== null)
    .sort((a, b) => b.kv - a.kv);
  // In a fleet the pool that refuses requests is the fullest worker's, however much room the others have.
  const kv = decodeWorkers.length > 0 ? decodeWorkers[0].kv : kvOf('');
  // One worker's pool is said as its cache ("decode KV cache 99 % full"), several as the fullest beside the rest.
  const cacheText = (who: string, full: number, overall: number | null): string =>
    overall !== null && full > overall
      ? `${who} KV cache ${pct(full)} full on its fullest dp rank (${pct(overall)} overall)`
      : `${who} KV cache ${pct(full)} full`;
  if (decodeWorkers.length > 1 && kv !== null && kv >= th.kvFull)
    add('decode', 1 + (kv - th.kvFull) * 10, fullestWorkerText(decodeWorkers, th.kvFull));
  else if (decodeWorkers.length === 1 && kv !== null && kv >= th.kvFull)
    add(
      'decode',
      1 + (kv - th.kvFull) * 10,
      cacheText(named(decodeWorkers[0].w), kv, v(`decode.kv_ratio@${decodeWorkers[0].w.id}`)),
    );
  else if (kv !== null && kv >= th.kvFull)
    add('decode', 1 + (kv - th.kvFull) * 10, cacheText('decode', kv, kvTotal));
  add(
    'transfer',
    norm('prefill.prefill_inflight_queue'),
    `${reqs('prefill.prefill_inflight_queue')} in flight (KV being sent) on prefill${where('prefill.prefill_inflight_queue')}`,
  );
  add(
    'transfer',
    norm('decode.decode_transfer_queue'),
    `${reqs('decode.decode_transfer_queue')} waiting for KV to arrive on decode${where('decode.decode_transfer_queue')}`,
  );
  const since = fresh ? ` since ${clock(fresh.since)}` : '';
  const freshSummed = summedBy(w);
  const failures =
    (freshSummed('prefill.transfer_failed_per_min') ?? 0) +
    (freshSummed('decode.transfer_failed_per_min') ?? 0);
  if (failures > 0) add('transfer', 1, `${fmt(failures)} KV transfer failures per minute${since}`);
  const latency =
    w('decode.kv_transfer_latency_p50_ms') ??
    w('prefill.kv_transfer_latency_p50_ms') ??
    w('decode.kv_transfer_latency_ms') ??
    w('prefill.kv_transfer_latency_ms');
  if (latency !== null && latency > th.transferLatencyMs)
    add(
      'transfer',
      0.5 + latency / th.transferLatencyMs / 4,
      `KV transfer latency ${fmt(latency)} ms${since}`,
    );

  // Workers the router counts unhealthy: only those that themselves look fine point at the router (or the path
  // to it). One down, loading, being restarted, on an unread host or just back (the router re-adds it after its
  // own health checks) is explained by that.
  const recentlyBack = new Set((input.recovered ?? []).map((r) => r.key));
  const atRouter = unhealthyAtRouter(input, parts, recentlyBack, nameOf);
  if (atRouter.blamed.length > 0 || atRouter.byCount) add('router', 1, atRouter.text);

  // The router's 5xx are its own only once it routes to workers that serve: not while this console restarts one
  // (requests in flight to it fail), a worker is down (the router sends to it until its own health checks drop
  // it), a worker just back is not re-added yet, or the router itself is not ready again after them.
  const serverDown = downParts.some((p) => p.role !== 'router');
  const catchingUp =
    ours.length > 0 ||
    serverDown ||
    atRouter.notReadded.length > 0 ||
    parts.some((p) => p.role === 'router' && p.note);
  const minuteShare = v('router.router_error_share');
  const errShare = w('router.router_error_share');
  const failing = errShare !== null && errShare >= th.routerErrorShare;
  if (failing && !catchingUp)
    add('router', 1 + errShare * 10, `${pct(errShare)} of router responses are 5xx${since}`);

  const score = (s: Stage): number => ev[s].reduce((t, [x]) => t + x, 0);
  const stages: Stage[] = ['decode', 'transfer', 'prefill', 'router'];
  // Ties go to the stage furthest downstream: a stuck decode backs up everything before it.
  const best = stages.reduce((a, b) => (score(b) > score(a) ? b : a));
  const top = score(best);
  const recovering = recoveringText(input, minuteShare, errShare, th);

  if (top >= 1) {
    const evidence = ev[best].sort((a, b) => b[0] - a[0]).map(([, t]) => t);
    for (const s of stages) if (s !== best && score(s) >= 1) evidence.push(`also: ${ev[s][0][1]}`);
    for (const d of degraded) evidence.push(`also: ${d}`);
    for (const l of oursLines) evidence.push(`also: ${l}`);
    if (recovering) evidence.push(`also: ${recovering.line}`);
    const headline: Record<Stage, string> = {
      prefill: `Prefill-bound: requests are piling up before prefill — ${evidence[0]}.`,
      decode: `Decode-bound: requests are piling up at decode — ${evidence[0]}.`,
      transfer: `Transfer-bound: requests are stuck in the KV transfer from prefill to decode — ${evidence[0]}.`,
      router: `Router-bound: the router is failing requests while the servers have room — ${evidence[0]}.`,
    };
    // Workers that serve but get no traffic from the router take their capacity out of the stage: that comes
    // first, before any advice to add capacity.
    const refused = best !== 'router' && atRouter.blamed.length > 0;
    const who = atRouter.blamed.join(', ');
    return {
      kind: `${best}-bound`,
      headline: refused
        ? `${headline[best].slice(0, -1)}; the router routes nothing to ${who}, which ${atRouter.blamed.length === 1 ? 'serves' : 'serve'}.`
        : headline[best],
      evidence,
      nextStep: refused
        ? `${boundNextStep('router', false, atRouter)}; routed again, ${who} ${atRouter.blamed.length === 1 ? 'takes' : 'take'} its share — if ${best} still piles up then: ${boundNextStep(best, kv !== null && kv >= th.kvFull, atRouter)}`
        : boundNextStep(best, kv !== null && kv >= th.kvFull, atRouter),
    };
  }

  if (degraded.length > 0)
    return {
      kind: 'service-down',
      headline: `Degraded: ${degraded[0]}.`,
      evidence: [
        ...degraded,
        ...conditionLines(downParts, nameOf),
        ...(failing && serverDown
          ? [
              `${pct(errShare)} of router responses are 5xx${since}: requests it still sends to ${listOf(downParts)} fail`,
            ]
          : []),
        ...oursLines.map((l) => `also: ${l}`),
      ],
      nextStep: downNextStep(downParts[0], nameOf),
    };

  if (ours.length > 0) {
    const r = restarting(ours, nameOf, parts, '');
    if (failing) r.evidence.push(`${pct(errShare)} of router responses are 5xx while the restart runs`);
    return r;
  }

  const running = q('prefill.running') + q('decode.running');
  const rps = v('router.router_requests_per_s');
  const flow = [
    `prefill: ${reqs('prefill.queued')} queued, ${reqs('prefill.prefill_inflight_queue')} in flight`,
    `decode: ${reqs('decode.decode_prealloc_queue')} waiting for KV slots, ${reqs('decode.decode_transfer_queue')} waiting for KV` +
      kvBullet(decodeWorkers, kvTotal, kv),
  ];

  if (recovering)
    return {
      kind: 'recovering',
      headline: `Recovering: ${recovering.headline}.`,
      evidence: [...recovering.evidence, ...notes(parts), ...atRouter.notReadded, ...flow],
      nextStep: recovering.nextStep,
    };

  // A serving unit whose /metrics fails: its queues and KV are not known, so "healthy" cannot be said of it.
  const blind = parts.filter((p) => p.state === 'serving' && p.metricsError);
  if (blind.length > 0)
    return {
      kind: 'unknown',
      headline: `Partly unknown: ${listOf(blind)} ${blind.length === 1 ? 'serves' : 'serve'} but ${blind.length === 1 ? 'its' : 'their'} /metrics ${blind.length === 1 ? 'fails' : 'fail'}, so ${blind.length === 1 ? 'its' : 'their'} queues cannot be read; the rest shows none building up.`,
      evidence: [
        ...blind.map((p) => `${nameOf(p)}: /metrics fails: ${p.metricsError}`),
        // A role none of whose serving units was read has no figures to show.
        ...flow.filter((line) =>
          parts.some((p) => p.state === 'serving' && !p.metricsError && line.startsWith(`${p.role}:`)),
        ),
      ],
      nextStep: `open the ${blind[0].role} service page: its /metrics fails (${blind[0].metricsError})`,
    };

  const idle = running === 0 && (rps === null || rps === 0);
  const lp = input.lastProblem;
  const again = lp ? ` again since ${clock(lp.until)}` : '';
  const evidence = lp ? [`was ${lp.kind} until ${clock(lp.until)}: ${lp.text}`, ...flow] : flow;
  if (idle)
    return {
      kind: 'idle',
      headline: `Idle${again}: no requests are running or waiting.`,
      evidence,
      nextStep: 'nothing to do: no traffic reaches the router',
    };
  return {
    kind: 'healthy',
    headline: `Healthy${again}: no queue is building up anywhere in the pipeline.`,
    evidence,
    nextStep: 'nothing to do',
  };
}

/** "decode-1 is being restarted by you — roll 2/3", per action. */
function ourLines(ours: readonly Part[]): string[] {
  const byAction = new Map<OperatorAction, Part[]>();
  for (const p of ours) byAction.set(p.action!, [...(byAction.get(p.action!) ?? []), p]);
  return [...byAction].map(([a, ps]) => {
    const who = ps.map((p) => workerShortName(p.worker)).join(', ');
    const what = a.kind === 'roll' && a.position ? ` — roll ${a.position.index}/${a.position.total}` : '';
    return `${who} ${ps.length === 1 ? 'is' : 'are'} being restarted by you${what}${a.paused ? ` (paused: ${a.paused})` : ''}`;
  });
}

/** The verdict while the only thing wrong is a restart or roll this console runs. */
function restarting(
  ours: readonly Part[],
  nameOf: (p: Part) => string,
  parts: readonly Part[],
  wait: string,
): Verdict {
  const lines = ourLines(ours);
  const evidence: string[] = [];
  for (const p of ours) {
    if (p.action?.step) evidence.push(`${nameOf(p)}: ${p.action.step}`);
    if (p.condition && p.condition.kind !== 'unknown') evidence.push(`${nameOf(p)}: ${p.condition.text}`);
  }
  for (const role of [...new Set(ours.map((p) => p.role))]) {
    const mine = parts.filter((p) => p.role === role);
    const serving = mine.filter((p) => p.state === 'serving').length;
    if (mine.length > 1) evidence.push(`${serving} of ${mine.length} ${role} workers serve meanwhile`);
  }
  evidence.push(...notes(parts));
  for (const l of lines.slice(1)) evidence.push(`also: ${l}`);
  if (evidence.length === 0) evidence.push(lines[0]);
  const roll = ours.find((p) => p.action?.kind === 'roll');
  return {
    kind: 'restarting',
    headline: `${lines[0]}${wait ? `;${wait}` : ''}.`,
    evidence,
    nextStep: roll
      ? `nothing to do while the roll runs: it goes on to the next worker once ${workerShortName(roll.worker)} is healthy at the router, and stops by itself if one fails`
      : 'nothing to do while the restart runs: its panel shows each step, and it stops by itself if a step fails',
  };
}

const notes = (parts: readonly Part[]): string[] => parts.flatMap((p) => (p.note ? [p.note] : []));

/** Why each down unit is down, beyond the line that names it: since when, its last error, its restarts. */
function conditionLines(ps: readonly Part[], nameOf: (p: Part) => string): string[] {
  const out: string[] = [];
  for (const p of ps) {
    const c = p.condition;
    if (!c || c.kind === 'unknown') continue;
    const facts: string[] = [];
    if (c.exitStatus !== undefined && !c.text.includes(`exit status ${c.exitStatus}`))
      facts.push(`exit status ${c.exitStatus}`);
    if (c.restarts > 0 && c.kind !== 'crash-looping') facts.push(`${c.restarts} automatic restarts so far`);
    if (c.lastError && !c.text.includes(c.lastError)) facts.push(`last error: ${c.lastError}`);
    const since = c.since ?? p.downSince;
    if (since !== null && since !== undefined) facts.unshift(`not serving since ${clock(since)}`);
    if (facts.length > 0) out.push(`${nameOf(p)}: ${facts.join('; ')}`);
  }
  return out;
}

function downNextStep(p: Part | undefined, nameOf: (p: Part) => string): string {
  if (!p) return 'open the journal of the service that is down';
  const c = p.condition;
  if (c?.nextStep) return `${nameOf(p)}: ${c.nextStep}`;
  switch (c?.kind) {
    case 'loading':
      return `wait for ${nameOf(p)} to load its model; the router adds it back once /health answers`;
    case 'starting':
    case 'stopping':
      return `wait a moment; open the journal of ${nameOf(p)} if it stays ${c.kind}`;
    case 'exited':
      return `${nameOf(p)} exited on its own: read the journal, then start it again`;
    case 'not-found':
      return `check the unit name of ${nameOf(p)} on its host, then reopen the deployment`;
    default:
      return `open the journal of ${nameOf(p)}`;
  }
}

function boundNextStep(stage: Stage, kvFull: boolean, atRouter: { blamed: string[] }): string {
  switch (stage) {
    case 'decode':
      return kvFull
        ? 'decode has no KV room: lower the load (the router’s max concurrency) or add decode capacity; the KV page shows which pool is full'
        : 'decode does not accept requests as fast as they come: check its KV usage and batch size, or add decode capacity';
    case 'prefill':
      return 'prefill cannot keep up: lower the input load or add prefill capacity; the Metrics page shows prefill throughput';
    case 'transfer':
      return 'check the KV transfer between prefill and decode (network, transfer backend): the journals of both say why transfers fail or wait';
    case 'router':
      return atRouter.blamed.length > 0
        ? `the router counts ${atRouter.blamed.join(', ')} unhealthy while its own /health answers: check the router's health checks and its journal`
        : "open the router's journal around now: the servers have room, so its 5xx are its own";
  }
}

/**
 * What the router counts unhealthy, and which of those point at the router: the ones that look fine themselves.
 * `blamed` names them (by URL where the deployment has no such worker); `notReadded` says which just-recovered
 * workers the router has not taken back yet, which its own health checks do in time.
 */
function unhealthyAtRouter(
  input: VerdictInput,
  parts: readonly Part[],
  recentlyBack: ReadonlySet<string>,
  nameOf: (p: Part) => string,
): { text: string; blamed: string[]; byCount: boolean; notReadded: string[] } {
  const v = valueOf(input.values);
  const health = routerWorkerHealth(input.routerWorkers);
  const none = { text: '', blamed: [], byCount: false, notReadded: [] };
  if (!health) {
    // Without the router's list: by count, less the servers not serving.
    const healthy = v('router.workers_healthy');
    const total = v('router.workers_total');
    if (healthy === null || total === null || total <= 0 || healthy >= total) return none;
    const notServing = parts.filter((p) => p.role !== 'router' && p.state !== 'serving').length;
    return total - healthy - notServing > 0
      ? {
          text: `${fmt(healthy)} of ${fmt(total)} workers healthy at the router`,
          blamed: [],
          byCount: true,
          notReadded: [],
        }
      : none;
  }
  const known: Part[] = [];
  const unknown: string[] = [];
  const notReadded: string[] = [];
  let open = 0;
  for (const r of health.unhealthy) {
    if (r.healthy !== false) continue;
    const p = parts.find((x) => x.url !== undefined && x.url === r.url);
    if (p && p.state !== 'serving') continue;
    if (p && recentlyBack.has(p.key)) {
      notReadded.push(
        `the router has not re-added ${nameOf(p)} yet${r.cbState === 'open' ? ' (circuit breaker open)' : ''}`,
      );
      continue;
    }
    if (r.cbState === 'open') open++;
    if (p) known.push(p);
    else unknown.push(r.role ? `${r.role} worker ${r.url}` : r.url);
  }
  const count = known.length + unknown.length;
  if (count === 0) return { ...none, notReadded };
  const names = [
    ...(known.length === 0
      ? []
      : [input.workers?.length ? workerList(known.map((p) => p.worker)) : known.map(nameOf).join(', ')]),
    ...unknown,
  ];
  const breaker =
    open === 0 ? '' : open === count ? ' (circuit breaker open)' : ` (${open} with circuit breaker open)`;
  return {
    text: `${fmt(health.healthy)} of ${fmt(health.total)} workers healthy at the router; not healthy: ${names.join(', ')}${breaker}`,
    blamed: [...known.map((p) => p.key), ...unknown],
    byCount: false,
    notReadded,
  };
}

/** The transition out of an outage, when one ended within the rate window. */
function recoveringText(
  input: VerdictInput,
  minuteShare: number | null,
  share: number | null,
  th: VerdictThresholds,
): { headline: string; line: string; evidence: string[]; nextStep: string } | null {
  const recent = input.recovered ?? [];
  if (recent.length === 0) return null;
  // The last outage to end, and of those overlapping it the one that began first: the cause the others followed
  // (a router not ready while decode was down), not an earlier outage of its own (the previous worker of a roll).
  // Of two that began together, a server's: a router's readiness follows its workers.
  const last = recent.reduce((a, b) => (b.until > a.until ? b : a));
  const first = (a: Recovery, b: Recovery): Recovery =>
    b.from < a.from || (b.from === a.from && a.role === 'router' && b.role !== 'router') ? b : a;
  const r = recent.filter((x) => x.from < last.until && x.until > last.from).reduce(first, last);
  const was = r.key.startsWith('link:')
    ? `${r.what} was down until ${clock(r.until)}`
    : r.byYou
      ? `${r.what} was being restarted by you until ${clock(r.until)}`
      : `${r.what} was down until ${clock(r.until)}`;
  let tail = '';
  if (input.fresh) {
    if (share === null) tail = '; 5xx share since then not measured yet';
    else if (minuteShare !== null && minuteShare >= th.routerErrorShare && share < minuteShare)
      tail = `; 5xx share falling (${pct(share)} since then, ${pct(minuteShare)} over the last minute)`;
    else if (share === 0) tail = '; no 5xx since then';
    else tail = `; ${pct(share)} of router responses 5xx since then`;
  }
  const evidence = [
    `${r.what}: ${r.why} from ${clock(r.from)} to ${clock(r.until)} (${duration(r.until - r.from)})`,
  ];
  for (const x of recent)
    if (x !== r) evidence.push(`${x.what}: ${x.why} from ${clock(x.from)} to ${clock(x.until)}`);
  const now = input.units?.find((u) => u.key === r.key);
  if (now) evidence.push(`${r.what} now: ${now.condition.text}`);
  if (input.fresh)
    evidence.push(
      `rates and shares are read since ${clock(input.fresh.since)}: the last minute's still hold the outage`,
    );
  return {
    headline: `${was}${tail}`,
    line: `recovering: ${was}${tail}`,
    evidence,
    nextStep: r.key.startsWith('link:')
      ? 'nothing to do: figures since it came back are current; the gap in the charts is the outage'
      : r.byYou
        ? 'nothing to do: it is back; the 5xx of the restart leave the last minute’s figures shortly'
        : `it came back by itself: read why it went down in its journal at ${clock(r.from)}`,
  };
}

/**
 * The KV part of the healthy bullet. In a fleet the card beside it shows the role's aggregate, so the bullet says
 * that figure and names the fullest worker separately ("KV 37 % overall, fullest decode-2 on gpu-b at 80 %")
 * instead of one bare figure that is neither the card's nor obviously one worker's.
 */
function kvBullet(
  sorted: readonly { w: FleetWorker; kv: number }[],
  total: number | null,
  kv: number | null,
): string {
  if (sorted.length === 0) return kv !== null ? `, KV ${pct(kv)}` : '';
  const top = sorted[0];
  if (sorted.length === 1) return `, KV ${pct(top.kv)} on ${named(top.w)}`;
  const fullest = `fullest ${named(top.w)} at ${pct(top.kv)}`;
  return total !== null ? `, KV ${pct(total)} overall, ${fullest}` : `, KV: ${fullest}`;
}

/** "decode-2 on gpu-b at 97 % KV, others below 60 %": the fullest worker first, then how the rest stand. */
function fullestWorkerText(sorted: readonly { w: FleetWorker; kv: number }[], kvFull: number): string {
  const [top, ...rest] = sorted;
  const head = `${named(top.w)} at ${pct(top.kv)} KV`;
  if (rest.length === 0) return head;
  const full = rest.filter((x) => x.kv >= kvFull);
  const below = rest.filter((x) => x.kv < kvFull);
  const parts = [head, ...full.map((x) => `${named(x.w)} at ${pct(x.kv)}`)];
  if (below.length > 0) {
    // Rounded up to the next 10 %, as an operator would say it.
    const bound = Math.min(100, Math.max(10, Math.ceil((below[0].kv * 100 + 1e-9) / 10) * 10));
    parts.push(
      `${full.length > 0 ? `${below.length} other${below.length === 1 ? '' : 's'}` : 'others'} below ${bound} %`,
    );
  }
  return parts.join(', ');
}

function metricsErrorOf(input: VerdictInput, role: Role): string {
  const e = input.units?.find((u) => u.role === role && u.metricsError)?.metricsError;
  return e ? ` (${e})` : '';
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n >= 10 ? n.toFixed(0) : n.toFixed(1);
}

function pct(r: number): string {
  return `${(r * 100).toFixed(r >= 0.995 && r < 1 ? 1 : 0)} %`;
}

/** A moment as the operator's wall clock shows it: "05:49:23" (local time, 24 h). */
export function clock(ts: number): string {
  const d = new Date(ts);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  return `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
}

/** "45 s", "1 min 13 s", "2 h 5 min". */
function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}
