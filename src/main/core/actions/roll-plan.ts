// The plan of a rolling restart: which workers restart, in which order, with which commands, and the
// pre-flight checks that decide whether it may start. Pure: the router's view of each worker and the
// privilege per host are gathered by the caller.
//
// Order of a whole-deployment roll: the stack order of the restart settings (restart-settings.ts, the one order
// policy of in-place restarts and rolls): by default prefill workers one at a time, then decode one at a time,
// routers last.
//  - One at a time per role: the router needs a healthy worker of each role to serve a PD request, so taking
//    down one worker of N leaves N−1 serving; two at once would cut capacity further for no gain.
//  - Prefill before decode (unless the settings say decode first): a prefill restart costs only the requests in their prefill (seconds of work),
//    a decode restart cuts every long generation it holds. A new model or flag that fails to load fails on
//    the cheap side first, and the roll stops there before any decode worker went down.
//  - Routers last: the router is what steers traffic away from the worker that is down, so it must stay up
//    while workers roll; restarted at the end it starts with every worker healthy and registers them all
//    instead of circuit-breaking the ones that were still loading.
// Within a role, workers the router reports unhealthy go first: they serve nothing now, so restarting them
// costs no capacity, and a broken one stops the roll before a healthy worker was touched.
import type {
  RestartImpact,
  RestartSettings,
  RollCheck,
  RollHealth,
  RollPlan,
  RollStepPlan,
  RollTarget,
  RollUnit,
  RollWorker,
  RollWorkerPlan,
} from '@shared/contract';
import type { Role } from '@shared/domain';
import { normalizeWorkerUrl } from '../probes/sglang/router';
import { unitKey, type GpuOwners } from './gpu-owners';
import { portOfUrl, unitVerbCommand } from './roll-commands';
import type { Privilege } from './unit-commands';
import { roleRank } from './restart-settings';

const DEFAULT_ORDER = { stackOrder: 'parallel', stackIncludesRouter: true } as const;

export interface RollPlanInput {
  workers: RollWorker[];
  target: RollTarget;
  /** The router's latest view, by worker id; a worker missing here counts as unknown. */
  health: ReadonlyMap<string, RollHealth>;
  privilegeOf: (hostId: string) => Privilege;
  readOnly?: boolean;
  /** Who holds each unit's GPUs now, read on the running workers (by unitKey); absent: not read yet. */
  gpuOwners?: ReadonlyMap<string, GpuOwners>;
  /** What restarting a worker cuts off (the monitor's latest scrapes); absent: not shown. */
  impactOf?: (w: RollWorker) => RestartImpact;
  /** The stack order of the restart settings; absent: the default (prefill first, routers included). */
  order?: Pick<RestartSettings, 'stackOrder' | 'stackIncludesRouter'>;
}

const UNKNOWN: RollHealth = { state: 'unknown', detail: 'the router reports nothing about it' };

/** Node rank ≥ 1 first, rank 0 last: rank 0 serves HTTP, so the worker is back only when it is. */
export function unitOrder(units: readonly RollUnit[]): RollUnit[] {
  return [...units].sort((a, b) => b.nodeRank - a.nodeRank);
}

export function rankZero(w: RollWorker): RollUnit {
  return unitOrder(w.units).at(-1)!;
}

/** The worker a `decode@URL|UNIT` target names: by URL (normalised), unit name, or short name. */
export function findRollWorker(workers: readonly RollWorker[], key: string): RollWorker | undefined {
  const url = normalizeWorkerUrl(key);
  return (
    workers.find((w) => normalizeWorkerUrl(w.id) === url) ??
    workers.find((w) => w.units.some((u) => u.unit === key)) ??
    workers.find((w) => w.name === key)
  );
}

export function targetText(t: RollTarget, workers: readonly RollWorker[]): string {
  if (t.kind === 'deployment') return `the whole deployment (${workers.length} workers)`;
  if (t.kind === 'role') {
    const n = workers.filter((w) => w.role === t.role).length;
    return `every ${t.role} worker, one at a time (${n})`;
  }
  const w = findRollWorker(workers, t.worker);
  return w ? `${w.name} (${w.id})` : t.worker;
}

function healthOf(input: RollPlanInput, w: RollWorker): RollHealth {
  return input.health.get(w.id) ?? UNKNOWN;
}

function ordered(input: RollPlanInput, ws: RollWorker[]): RollWorker[] {
  const bad = (w: RollWorker): number => (healthOf(input, w).state === 'healthy' ? 1 : 0);
  // Array.prototype.sort is stable: the deployment's own order stays within each group.
  const rank = roleRank(input.order ?? DEFAULT_ORDER);
  return [...ws].sort((a, b) => rank[a.role] - rank[b.role] || bad(a) - bad(b));
}

/**
 * A worker's steps with a drain around its restart: out of the router's pool first (running requests finish),
 * back in once it serves again, before the router is asked about it. Only where the router can drain it.
 */
export function withDrain(steps: readonly RollStepPlan[], routerUrl: string): RollStepPlan[] {
  const routerAt = steps.findIndex((s) => s.kind === 'router');
  const at = routerAt < 0 ? steps.length : routerAt;
  return [
    { kind: 'drain', label: 'Drain: stop new work, let running requests finish' },
    ...steps.slice(0, at),
    {
      kind: 'readd',
      label: 'Register the worker with the router again',
      command: `POST ${routerUrl}/workers`,
    },
    ...steps.slice(at),
  ];
}

export function stepsOf(w: RollWorker, privilegeOf: (hostId: string) => Privilege): RollStepPlan[] {
  const units = unitOrder(w.units);
  const zero = units.at(-1)!;
  const steps: RollStepPlan[] = [];
  // Every unit's GPUs are checked before the first unit stops: a multi-node worker goes down as a whole.
  for (const u of units)
    if (u.gpus.length)
      steps.push({
        kind: 'gpu-owners',
        label: `GPUs ${u.gpus.join(',')} on ${u.hostLabel} run only ${u.unit}'s processes (before the stop)`,
        hostId: u.hostId,
        hostLabel: u.hostLabel,
        unit: u.unit,
        gpus: [...u.gpus],
      });
  for (const u of units)
    steps.push({
      kind: 'stop',
      label: `Stop ${u.unit} on ${u.hostLabel}${w.units.length > 1 ? ` (node rank ${u.nodeRank})` : ''}`,
      hostId: u.hostId,
      hostLabel: u.hostLabel,
      unit: u.unit,
      command: unitVerbCommand('stop', u.unit, privilegeOf(u.hostId)),
    });
  for (const u of units)
    if (u.gpus.length)
      steps.push({
        kind: 'gpus-free',
        label: `GPUs ${u.gpus.join(',')} on ${u.hostLabel} run no process`,
        hostId: u.hostId,
        hostLabel: u.hostLabel,
        unit: u.unit,
        gpus: [...u.gpus],
      });
  const ports: Array<[number, string]> = [];
  const http = portOfUrl(w.apiUrl);
  if (http !== null) ports.push([http, 'HTTP']);
  if (w.bootstrapPort !== undefined && w.bootstrapPort !== http) ports.push([w.bootstrapPort, 'bootstrap']);
  for (const [port, what] of ports)
    steps.push({
      kind: 'port-free',
      label: `${what} port ${port} on ${zero.hostLabel} is free`,
      hostId: zero.hostId,
      hostLabel: zero.hostLabel,
      unit: zero.unit,
      port,
    });
  for (const u of units)
    steps.push({
      kind: 'start',
      label:
        u === zero
          ? `Start ${u.unit} on ${u.hostLabel}; systemd active, ${w.role === 'router' ? 'router /health' : '/health 200'}`
          : `Start ${u.unit} on ${u.hostLabel} (node rank ${u.nodeRank}); systemd active`,
      hostId: u.hostId,
      hostLabel: u.hostLabel,
      unit: u.unit,
      command: unitVerbCommand('start', u.unit, privilegeOf(u.hostId)),
    });
  steps.push({
    kind: 'router',
    label:
      w.role === 'router'
        ? 'Router ready: healthy prefill and decode workers'
        : 'The router reports the worker healthy again',
  });
  return steps;
}

function describeHealth(ws: readonly RollWorker[], input: RollPlanInput): string {
  return ws.map((w) => `${w.name} ${healthOf(input, w).state} (${healthOf(input, w).detail})`).join('; ');
}

/**
 * The check before `w` goes down: another worker of its role must be healthy, so the router keeps serving.
 * Null when `w` is the only worker of its role (nothing can keep serving; the caller warns instead).
 */
export function keepsServingCheck(
  w: RollWorker,
  workers: readonly RollWorker[],
  health: ReadonlyMap<string, RollHealth>,
): RollCheck | null {
  const others = workers.filter((o) => o.role === w.role && o.id !== w.id);
  if (!others.length || w.role === 'router') return null;
  const input = { health } as RollPlanInput;
  const healthy = others.filter((o) => healthOf(input, o).state === 'healthy');
  const name = `the router keeps a healthy ${w.role} worker while ${w.name} is down`;
  if (healthy.length)
    return { name, ok: true, detail: `healthy now: ${healthy.map((o) => o.name).join(', ')}` };
  return {
    name,
    ok: false,
    detail: `no other ${w.role} worker is healthy now: ${describeHealth(others, input)}`,
  };
}

/**
 * The GPU check of one worker, from its units' readings: null when none of its units has known GPUs or they were
 * not read. A check that was read and failed carries the refusal and what to do.
 */
export function gpuCheckOf(
  w: RollWorker,
  owners: ReadonlyMap<string, GpuOwners>,
): { check: RollCheck; refused?: string; hint?: string } | null {
  const read = unitOrder(w.units).flatMap((u) => {
    const v = u.gpus.length ? owners.get(unitKey(u)) : undefined;
    return v ? [v] : [];
  });
  if (!read.length) return null;
  const name = `the GPUs of ${w.name} run only its own processes`;
  const of = (k: GpuOwners['kind']) => read.filter((v) => v.kind === k);
  const garbage = of('garbage');
  if (garbage.length) {
    const detail = garbage.map((v) => v.detail).join('; ');
    return {
      check: { name, ok: false, detail },
      refused: `${w.name}: the GPU check failed: ${detail}`,
      hint: 'Run the command by hand on that host to see what answers instead.',
    };
  }
  const foreign = of('foreign') as Array<Extract<GpuOwners, { kind: 'foreign' }>>;
  if (foreign.length) {
    const detail = foreign.map((v) => v.detail).join('; ');
    return {
      check: { name, ok: false, detail: `${detail}: stopping ${w.name} would free nothing` },
      refused: `${w.name}: ${detail}: stopping ${w.name} would free nothing, so it is not stopped`,
      hint: foreign.map((v) => v.hint).join(' '),
    };
  }
  const unreadable = of('unreadable');
  if (unreadable.length)
    return {
      check: { name, ok: false, unreadable: true, detail: unreadable.map((v) => v.detail).join('; ') },
    };
  return { check: { name, ok: true, detail: read.map((v) => v.detail).join('; ') } };
}

/**
 * Why a planned roll may not start now: its refusal, or a GPU check that could not be read while the operator
 * did not choose to roll without it. Null: it may start. The one rule for the app, the CLI and the executor.
 */
export function startRefusal(plan: RollPlan, withoutGpuCheck = false): string | null {
  if (plan.refused) return plan.refused;
  const unread = plan.checks.filter((c) => c.unreadable);
  if (!unread.length || withoutGpuCheck) return null;
  const details = [...new Set(unread.map((c) => c.detail))].join('; ');
  return `the GPU check could not be read (${details}); the roll starts only when you choose to roll without it`;
}

export function buildRollPlan(input: RollPlanInput): RollPlan {
  const { workers, target } = input;
  const text = targetText(target, workers);
  const warnings: string[] = [];
  const checks: RollCheck[] = [];
  let chosen: RollWorker[];
  let refused: string | undefined;
  let refusedHint: string | undefined;
  if (target.kind === 'worker') {
    const w = findRollWorker(workers, target.worker);
    chosen = w ? [w] : [];
    if (!w)
      refused = `no worker ${JSON.stringify(target.worker)} in this deployment; known: ${workers.map((x) => `${x.name} (${x.id})`).join(', ') || 'none'}`;
  } else if (target.kind === 'role') {
    chosen = workers.filter((w) => w.role === target.role);
    if (!chosen.length) refused = `this deployment has no ${target.role} worker`;
  } else {
    const order = input.order ?? DEFAULT_ORDER;
    chosen = order.stackIncludesRouter ? workers : workers.filter((w) => w.role !== 'router');
    if (!order.stackIncludesRouter && chosen.length < workers.length)
      warnings.push(
        'the routers are not restarted: the restart settings leave the router out of a whole-deployment restart',
      );
  }
  chosen = ordered(input, chosen);
  const plans: RollWorkerPlan[] = chosen.map((w) => ({
    workerId: w.id,
    name: w.name,
    role: w.role,
    healthNow: healthOf(input, w),
    ...(input.impactOf ? { impact: input.impactOf(w) } : {}),
    steps: stepsOf(w, input.privilegeOf),
  }));
  // Each role's first worker decides whether its part of the roll may start; the executor checks every
  // later worker again, from the router's live view, before stopping it.
  const seen = new Set<Role>();
  for (const w of chosen) {
    if (seen.has(w.role)) continue;
    seen.add(w.role);
    const check = keepsServingCheck(w, workers, input.health);
    if (check) {
      checks.push(check);
      if (!check.ok && !refused) {
        refused = `restarting ${w.name} first would leave the router no healthy ${w.role} worker: ${check.detail}`;
        refusedHint = 'Bring the unhealthy workers back first, or restart them one by one.';
      }
    } else if (w.role === 'router')
      warnings.push(
        workers.filter((x) => x.role === 'router').length > 1
          ? `while ${w.name} restarts its clients get connection errors; the other router keeps serving its own`
          : `while ${w.name} restarts, clients get connection errors; the workers keep running`,
      );
    else
      warnings.push(
        `${w.name} is the only ${w.role} worker: the deployment serves no request while it restarts`,
      );
  }
  for (const w of chosen)
    for (const u of w.units)
      if (w.role !== 'router' && !u.gpus.length)
        warnings.push(
          `the GPUs of ${u.unit} on ${u.hostLabel} are not known (no CUDA_VISIBLE_DEVICES / --base-gpu-id found): ${w.name} starts without the check that its GPUs are free`,
        );
  if (input.gpuOwners)
    for (const w of chosen) {
      const gpu = gpuCheckOf(w, input.gpuOwners);
      if (!gpu) continue;
      checks.push(gpu.check);
      if (gpu.refused && !refused) {
        refused = gpu.refused;
        refusedHint = gpu.hint;
      }
    }
  for (const w of chosen)
    if (w.units.length > 1)
      checks.push({
        name: `${w.name} spans ${w.units.length} nodes`,
        ok: true,
        detail: `all its units restart as one worker: ${unitOrder(w.units)
          .map((u) => `${u.unit} on ${u.hostLabel} (rank ${u.nodeRank})`)
          .join(', then ')}`,
      });
  if (input.readOnly) {
    refused = 'PD Console is in read-only mode: restarts are switched off';
    refusedHint = undefined;
  }
  return {
    target,
    targetText: text,
    workers: plans,
    checks,
    warnings,
    ...(refused ? { refused } : {}),
    ...(refused && refusedHint ? { refusedHint } : {}),
  };
}
