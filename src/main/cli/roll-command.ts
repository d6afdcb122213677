// `pd-console restart ROLE --host H` on a deployment with several workers of a role (a rolling restart, one
// worker at a time), `restart ROLE@URL|UNIT` (one worker) and `restart stack` on such a deployment (the whole
// deployment in its safe order). The plan, then each worker step by step, then the result; --json prints the
// plan and the final roll operation as JSON lines on stdout.
import type { RestartSettings, RollOperation, RollPlan, RollTarget } from '@shared/contract';
import type { DeploymentConfig, HostConfig, Role } from '@shared/domain';
import type { Clock } from '../core/clock';
import type { SshConnection } from '../core/ssh/connection';
import { formatDuration } from '../core/actions/operation';
import { describeProgress } from '../core/actions/load-progress';
import { findRollWorker, startRefusal } from '../core/actions/roll-plan';
import { prepareRoll, type RollContext } from '../core/actions/roll-session';
import { rollWorkersOfFleet } from '../core/actions/roll-fleet';
import { systemClock } from '../core/clock';
import { isSingleHostPair } from '@shared/fleet';
import { parseHostSpec } from '@shared/host-spec';
import { createSshResolver } from '../core/ssh/resolve-host';
import { refusingPrompts } from '../core/ssh/prompts';
import { HostLinkPool } from '../core/ssh/host-link-pool';
import { configRoots, createAliasIndex, defaultLookupAll } from '../core/ssh/alias-addresses';
import { discoverFleet } from '../core/discovery/run-fleet-discovery';
import { EXIT, exitOfEnd } from './restart-exit';
import { oneLine } from '@shared/display-text';

/** A roll's context, plus what only the CLI knows: the role a `decode@X` argument names. */
export interface RollCliContext extends RollContext {
  /** `decode@X`: the role the named worker must have. */
  expectRole?: Role;
  /** `--without-gpu-check`: roll where the GPU check cannot be read. */
  withoutGpuCheck?: boolean;
}

export interface RollCliIo {
  /** Progress and the plan: stdout, or stderr with --json. */
  say: (s: string) => void;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  json: boolean;
  /** The fleet is the simulated one: said in the plan's JSON line (`simulated`). */
  simulated: boolean;
  /** Resolves true when the operator confirmed (or --yes), false when declined; a string is a refusal. */
  confirm: (question: string) => Promise<boolean | string>;
  onInterrupt: (fn: () => void) => () => void;
}

/** True when the deployment has more than one worker of a role or spans hosts: restarts become rolls. */
export function isMultiWorker(d: DeploymentConfig): boolean {
  const hosts = new Set(d.services.map((s) => s.hostId));
  const roles = d.services.map((s) => s.role);
  return hosts.size > 1 || new Set(roles).size < roles.length;
}

export async function rollCommand(target: RollTarget, ctx: RollCliContext, io: RollCliIo): Promise<number> {
  if (target.kind === 'worker' && ctx.expectRole) {
    const w = findRollWorker(ctx.workers, target.worker);
    if (w && w.role !== ctx.expectRole) {
      io.stderr(
        `pd-console restart: ${ctx.expectRole}@${target.worker} names ${w.name}, a ${w.role} worker: use ${w.role}@${target.worker}\n`,
      );
      return EXIT.usage;
    }
  }
  const prepared = await prepareRoll(target, ctx);
  const { plan } = prepared;
  try {
    if (io.json) io.stdout(`${JSON.stringify({ plan, simulated: io.simulated })}\n`);
    io.say(rollPlanText(plan));
    const refusal = startRefusal(plan, ctx.withoutGpuCheck);
    if (refusal) {
      const hint = plan.refused
        ? plan.refusedHint
        : 'pass --without-gpu-check to roll without it, only if you know nothing else runs on those GPUs';
      io.stderr(`pd-console restart: refused: ${refusal}\n${hint ? `hint: ${hint}\n` : ''}`);
      return EXIT.usage;
    }
    const ok = await io.confirm(`Restart ${plan.targetText}? [y/N] `);
    if (typeof ok === 'string') {
      io.stderr(`pd-console restart: ${ok}\n`);
      return EXIT.usage;
    }
    if (!ok) {
      io.say('Not restarted.\n');
      return EXIT.cancelled;
    }
    const roll = prepared.start(progressPrinter(io.say), {
      withoutGpuCheck: ctx.withoutGpuCheck === true,
    });
    io.say(`Started roll ${prepared.id}.\n`);
    let interrupts = 0;
    let leaveNow: () => void = () => undefined;
    const left = new Promise<RollOperation>((resolve) => (leaveNow = () => resolve(roll.snapshot())));
    const off = io.onInterrupt(() => {
      interrupts++;
      if (interrupts > 1) return leaveNow();
      io.say(
        '\nCancel requested: the roll stops after the worker being restarted. (Ctrl-C again to leave now; the hosts keep going.)\n',
      );
      roll.cancel();
    });
    const end = await Promise.race([roll.done, left]).finally(off);
    if (io.json) io.stdout(`${JSON.stringify({ operation: end })}\n`);
    io.say(rollResultText(end));
    return exitOfEnd(end.state);
  } finally {
    prepared.dispose();
  }
}

export interface FleetRollOptions {
  origin: HostConfig;
  addHosts: HostConfig[];
  target: RollTarget;
  settings: RestartSettings;
  /** Home whose ~/.ssh is read (tests, PD_CONSOLE_SSH_HOME); then `ssh -G` is not run, as in compose.ts. */
  sshHome?: string;
  pace?: { pollMs: number; minRealGapMs: number };
  clock?: Clock;
  expectRole?: Role;
  withoutGpuCheck?: boolean;
}

/**
 * Follows the router from `origin` to every worker's host (fleet discovery) and rolls the fleet; answers
 * "single-host" (having printed nothing) when the deployment is the classic one-host 1P1D, which keeps its
 * one-service restart.
 */
export async function fleetRoll(o: FleetRollOptions, io: RollCliIo): Promise<number | 'single-host'> {
  const homeDir = o.sshHome;
  const sshBinary = homeDir ? null : undefined;
  const pool = new HostLinkPool({
    resolve: createSshResolver({ prompts: refusingPrompts, homeDir, sshBinary }),
  });
  try {
    let found;
    try {
      found = await discoverFleet(
        o.origin,
        {
          pool,
          aliases: createAliasIndex({ homeDir, sshBinary }),
          lookupAll: (n) => defaultLookupAll(n),
          configFile: configRoots({ homeDir }).userConfig,
        },
        { addHosts: o.addHosts },
      );
    } catch {
      // The origin itself failed: the one-service restart connects again and says why in its own words.
      return 'single-host';
    }
    const { fleet } = found;
    if (o.target.kind !== 'worker' && o.addHosts.length === 0 && isSingleHostPair(fleet))
      return 'single-host';
    const { workers, left } = rollWorkersOfFleet(fleet);
    const hosts = new Map<string, HostConfig>();
    const links = new Map<string, SshConnection>();
    for (const id of new Set(workers.flatMap((w) => w.units.map((u) => u.hostId)))) {
      const host =
        id === o.origin.id
          ? o.origin
          : (o.addHosts.find((h) => h.id === id) ??
            parseHostSpec(id) ?? { id, label: id, kind: 'ssh' as const, alias: id });
      hosts.set(id, host);
      try {
        links.set(id, await pool.get(host));
      } catch (err) {
        io.stderr(
          `pd-console restart: refused: ${host.label} cannot be reached, so its workers cannot be restarted: ${(err as Error).message}\n`,
        );
        return 2;
      }
    }
    return await rollCommand(
      o.target,
      {
        deploymentId: fleet.origin,
        workers,
        links,
        hosts,
        clock: o.clock ?? systemClock,
        settings: o.settings,
        notes: left.map((l) => `not part of the roll: ${l}`),
        ...(o.expectRole ? { expectRole: o.expectRole } : {}),
        ...(o.withoutGpuCheck ? { withoutGpuCheck: true } : {}),
        ...o.pace,
      },
      io,
    );
  } finally {
    await pool.closeAll();
  }
}

export function rollPlanText(plan: RollPlan): string {
  const lines = [`Rolling restart plan: ${plan.targetText}`];
  if (plan.workers.length)
    lines.push(`Order: ${plan.workers.map((w) => w.name).join(' → ')} (one at a time)`);
  for (const w of plan.workers) {
    lines.push('', `  ${w.name} (${w.role}, ${w.workerId}) — router: ${w.healthNow.state}`);
    for (const s of w.steps) lines.push(`    ${s.label}${s.command ? `:  ${s.command}` : ''}`);
  }
  if (plan.checks.length) lines.push('', 'Checks:');
  for (const c of plan.checks)
    lines.push(
      c.unreadable
        ? `  ? ${c.name}: cannot be read — ${c.detail}`
        : `  ${c.ok ? '✔' : '✖'} ${c.name}: ${c.detail}`,
    );
  for (const w of plan.warnings) lines.push(`! ${w}`);
  if (plan.refused) lines.push(`! Refused: ${plan.refused}`);
  if (plan.refused && plan.refusedHint) lines.push(`  next: ${plan.refusedHint}`);
  else if (plan.checks.some((c) => c.unreadable))
    lines.push(
      '! The GPU check could not be read: the roll starts only with --without-gpu-check (stopping a worker whose GPUs another process holds frees nothing).',
    );
  // One entry is one line: what the host, the router or the journal said inside it stays on it.
  return `${lines.map(oneLine).join('\n')}\n\n`;
}

export function rollResultText(op: RollOperation): string {
  const mark =
    op.state === 'succeeded' ? '✔' : op.state === 'cancelled' ? '■' : op.state === 'unknown' ? '?' : '✖';
  const lines = ['', `${mark} ${op.summary}`];
  const f = op.failure;
  if (f) {
    if (f.worker) lines.push(`  worker: ${f.worker} (${f.workerId}), step: ${f.step}`);
    lines.push(`  still serving (the router reports healthy): ${f.stillServing.join(', ') || 'none seen'}`);
    if (f.hint) lines.push(`  next: ${f.hint}`);
    if (f.journalTail?.length) lines.push('  last journal lines:', ...f.journalTail.map((l) => `    │ ${l}`));
  }
  return `${lines.map(oneLine).join('\n')}\n`;
}

/** Prints each step's changes, pauses and load progress as the roll runs. */
function progressPrinter(say: (s: string) => void): (op: RollOperation) => void {
  const seen = new Map<string, string>();
  const progress = new Map<string, string>();
  let paused: string | null = null;
  return (op) => {
    const t = `[${formatDuration(op.elapsedMs).padStart(9)}]`;
    const p = op.paused ? `${op.paused.hostLabel}: ${op.paused.reason}` : null;
    if (p !== paused) {
      say(p ? `${t} paused — ${oneLine(op.paused!.reason)}\n` : `${t} link back: the roll carries on\n`);
      paused = p;
    }
    for (const w of op.workers) {
      const load = w.follow?.services[0]?.progress;
      const text = load ? describeProgress(load) : '';
      if (text && progress.get(w.workerId) !== text) {
        progress.set(w.workerId, text);
        say(`${t} ${oneLine(`${w.name.padEnd(10)} ${text}`)}\n`);
      }
      w.steps.forEach((s, i) => {
        const key = `${w.workerId}:${i}`;
        if (s.state === 'pending' || seen.get(key) === s.state) return;
        seen.set(key, s.state);
        say(
          `${t} ${oneLine(`${w.name.padEnd(10)} ${s.label}: ${s.state}${s.detail && s.state !== 'running' ? ` — ${s.detail}` : ''}`)}\n`,
        );
      });
    }
  };
}
