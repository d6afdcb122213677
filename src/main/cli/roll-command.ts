// `pd-console restart ROLE --host H` on a deployment with several workers of a role (a rolling restart, one
// worker at a time), `restart ROLE@URL|UNIT` (one worker) and `restart stack` on such a deployment (the whole
// deployment in its safe order). The plan, then each worker step by step, then the result; --json prints the
// plan and the final roll operation as JSON lines on stdout.
import type { RollOperation, RollPlan, RollTarget } from '@shared/contract';
import type { Role } from '@shared/domain';
import { formatDuration } from '../core/actions/operation';
import { describeProgress } from '../core/actions/load-progress';
import { startRefusal } from '../core/actions/roll-plan';
import { EXIT, exitOfEnd } from './restart-exit';
import { oneLine } from '@shared/display-text';
import type { RollChannel } from './roll-on-app';

/** What only the CLI knows of a roll: the role a `decode@X` argument names, and the operator's GPU-check choice. */
export interface RollCliOptions {
  target: RollTarget;
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
  /** The deployment is a simulated one: said in the plan's JSON line (`simulated`). */
  simulated: boolean;
  /** Resolves true when the operator confirmed (or --yes), false when declined; a string is a refusal. */
  confirm: (question: string) => Promise<boolean | string>;
  onInterrupt: (fn: () => void) => () => void;
}

/** The plan from the app's roll service, the operator's confirmation, then the roll followed to its end. */
export async function rollCommand(roll: RollChannel, o: RollCliOptions, io: RollCliIo): Promise<number> {
  const plan = await roll.plan();
  const { target } = o;
  if (target.kind === 'worker' && o.expectRole) {
    const w = plan.workers[0];
    if (w && w.role !== o.expectRole) {
      io.stderr(
        `pd-console restart: ${o.expectRole}@${target.worker} names ${w.name}, a ${w.role} worker: use ${w.role}@${target.worker}\n`,
      );
      return EXIT.usage;
    }
  }
  if (io.json) io.stdout(`${JSON.stringify({ plan, simulated: io.simulated })}\n`);
  io.say(rollPlanText(plan));
  const refusal = startRefusal(plan, o.withoutGpuCheck);
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
  const print = progressPrinter(io.say);
  let last: RollOperation | null = null;
  const run = roll.run({ withoutGpuCheck: o.withoutGpuCheck === true }, (op) => {
    last = op;
    print(op);
  });
  const started = await run.started;
  io.say(`Started roll ${started.id}.\n`);
  let interrupts = 0;
  let leaveNow: () => void = () => undefined;
  const left = new Promise<RollOperation>((resolve) => (leaveNow = () => resolve(last ?? started)));
  const off = io.onInterrupt(() => {
    interrupts++;
    if (interrupts > 1) return leaveNow();
    io.say(
      '\nCancel requested: the roll stops after the worker being restarted. (Ctrl-C again to leave now; the hosts keep going.)\n',
    );
    void run.cancel();
  });
  const end = await Promise.race([run.done, left]).finally(off);
  if (io.json) io.stdout(`${JSON.stringify({ operation: end })}\n`);
  io.say(rollResultText(end));
  return exitOfEnd(end.state);
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
