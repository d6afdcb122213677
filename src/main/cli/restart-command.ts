// `pd-console restart decode|prefill|router|stack[@URL|UNIT] [--host H] [--yes] [--drain] [--json]`: the same
// plan, guard rails and step-by-step following as the app, in a terminal. Without --yes it prints the plan and
// asks y/N on a terminal; without a terminal it refuses rather than restart unconfirmed. On a deployment with
// several workers of a role (or several hosts), and for one named worker, the restart is a roll (roll-command.ts).
import type { Core } from '../core/core';
import type {
  RollTarget,
  ApiHandlers,
  RestartOperation,
  RestartPlan,
  RestartTarget,
  SettingsState,
} from '@shared/contract';
import { RESTART_TARGETS } from '@shared/api/restart';
import type { HostConfig, Role } from '@shared/domain';
import { createApp } from '../compose';
import { rollCommand, type RollCliIo } from './roll-command';
import { hasWorkerGroups } from '@shared/fleet';
import { rollChannel } from './roll-on-app';
import { DEMO_FLEET_HOST, demoFleetLine, withDemoFleet } from './demo-fleet';
import { formatDuration } from '../core/actions/operation';
import { describeProgress } from '../core/actions/load-progress';
import { DEMO_HOST, HOST_OPTION, hostArg, hostFromArg, isSimulated } from './target';
import { defineCommand, parseCommandLine, usageText, UsageError } from './cli-args';
import { HOST_SPEC_HELP } from '@shared/host-spec';
import { EXIT, exitOfEnd } from './restart-exit';
import { oneLine } from '@shared/display-text';

export const RESTART_USAGE = `usage: pd-console restart decode|prefill|router|stack [--host H] [--yes] [--drain] [--json] [--demo-speed N]
       pd-console restart decode@URL|UNIT [--host H] [--add-host H2,H3] [--yes] [--json] [--without-gpu-check]

  Shows the plan (host, unit, exact command, what will break), asks y/N on a terminal, then follows every
  step: systemd active, /health 200, the router reporting the worker healthy. Ctrl-C asks to cancel before
  the next step; a second Ctrl-C leaves without waiting (the restart goes on on the host).
  With several workers of a role, \`restart decode\` restarts them one at a time (a rolling restart: stop,
  GPUs and ports free, start, the router reports it healthy, then the next) and \`restart stack\` rolls the
  whole deployment: prefill, then decode, then the router. ROLE@URL|UNIT restarts that one worker.
  Before a worker is stopped, its GPUs must run only its own units' processes (nvidia-smi and ps on the
  running worker): another process there refuses the roll, since stopping the worker would free nothing.
  On a real host the router is followed to every worker's host first (as \`status\` does; --add-host adds
  hosts by hand); --host demo-fleet is the simulated three-host fleet.
  --yes       do not ask (required when stdin is not a terminal)
  --drain     stop new work to the worker first, where the router supports it
  --json      print the plan and the final operation as JSON lines on stdout (progress goes to stderr)
  --without-gpu-check
              roll where that GPU check cannot be read (no nvidia-smi, a container, a hidden process table);
              without it such a roll does not start. A check that was read and failed refuses it anyway
exit status: 0 restarted · 1 failed · 2 refused or bad usage · 3 outcome unknown (lost contact) · 4 cancelled or declined
`;

export interface RestartCliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Whether stdin is a terminal someone can answer on. */
  isTTY?: boolean;
  /** Asks a question on the terminal and resolves with the answer line. */
  ask?: (question: string) => Promise<string>;
  /** Calls `fn` on Ctrl-C; returns the unsubscribe function. */
  onInterrupt?: (fn: () => void) => () => void;
}

type Handlers = Pick<
  ApiHandlers,
  | 'planRestart'
  | 'startRestart'
  | 'cancelRestart'
  | 'getRestart'
  | 'openDemo'
  | 'connectHost'
  | 'getRestartSettings'
  | 'planRoll'
  | 'startRoll'
  | 'cancelRoll'
  | 'getRoll'
>;

export interface RestartCliApp {
  core: Core;
  handlers: Handlers;
  /** The saved settings the restart runs with (timeouts, order, polkit). */
  settings?: { state(): SettingsState };
  shutdown(): Promise<void>;
}

interface Args {
  target: RestartTarget;
  /** `decode@URL|UNIT`: the one worker to restart. */
  worker?: string;
  addHosts: string[];
  host: string;
  yes: boolean;
  drain: boolean;
  json: boolean;
  withoutGpuCheck: boolean;
  demoSpeed?: number;
}

export const RESTART_COMMAND = defineCommand({
  name: 'restart',
  usage: RESTART_USAGE,
  options: {
    host: HOST_OPTION,
    yes: { type: 'boolean', short: 'y' },
    drain: { type: 'boolean' },
    json: { type: 'boolean' },
    'without-gpu-check': { type: 'boolean' },
    'demo-speed': { type: 'string', needs: 'a number between 0 and 10000' },
    'add-host': { type: 'string', multiple: true, needs: `hosts, comma-separated (${HOST_SPEC_HELP})` },
  },
});

function restartArgs(argv: string[]): Args | string | 'help' {
  let parsed;
  try {
    parsed = parseCommandLine(RESTART_COMMAND, argv);
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  if (parsed.help) return 'help';
  const { values, positionals } = parsed;
  const out: Omit<Args, 'target'> = {
    host: hostArg(values.host),
    yes: values.yes === true,
    drain: values.drain === true,
    json: values.json === true,
    withoutGpuCheck: values['without-gpu-check'] === true,
    addHosts: (values['add-host'] ?? []).flatMap((v) =>
      v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  };
  if (values['demo-speed'] !== undefined) {
    const n = Number(values['demo-speed']);
    if (!(n > 0 && n <= 10_000))
      return `--demo-speed needs a number between 0 and 10000, got ${JSON.stringify(values['demo-speed'])}`;
    out.demoSpeed = n;
  }
  const [a, ...extra] = positionals;
  if (a === undefined) return `which service? expected one of ${RESTART_TARGETS.join(', ')}`;
  if (extra.length) return `unexpected argument ${JSON.stringify(extra[0])}`;
  const at = a.indexOf('@');
  const role = at < 0 ? a : a.slice(0, at);
  if (!(RESTART_TARGETS as readonly string[]).includes(role))
    return `unknown service ${JSON.stringify(role)}: expected one of ${RESTART_TARGETS.join(', ')}`;
  const target = role as RestartTarget;
  if (at >= 0) {
    const worker = a.slice(at + 1);
    if (role === 'stack') return `stack@… names no worker: use decode@URL, prefill@UNIT or router@URL`;
    if (!worker) return `${role}@ needs the worker's URL or unit, e.g. ${role}@http://10.0.0.2:30000`;
    out.worker = worker;
  }
  if (out.worker !== undefined && out.drain) return '--drain is not available for a rolling restart yet';
  return { ...out, target };
}

export async function restartCommand(
  argv: string[],
  io: RestartCliIo,
  deps: { app?: RestartCliApp; sshHome?: string } = {},
): Promise<number> {
  const args = restartArgs(argv);
  if (args === 'help') {
    io.stdout(RESTART_USAGE);
    return EXIT.ok;
  }
  if (typeof args === 'string') {
    io.stderr(usageText(RESTART_COMMAND, args));
    return EXIT.usage;
  }
  // Progress is for people: with --json it goes to stderr so stdout stays machine-readable.
  const say = args.json ? io.stderr : io.stdout;
  if (args.host === DEMO_HOST && args.addHosts.length) {
    io.stderr(
      'pd-console restart: --add-host is for a fleet of real hosts (or --host demo-fleet), not --host demo\n',
    );
    return EXIT.usage;
  }
  const run = (target: string | HostConfig, simulated: boolean, homeDir?: string): Promise<number> => {
    const app: RestartCliApp =
      deps.app ??
      createApp({
        shell: 'cli',
        intervalMs: 1000,
        demoSpeed: args.demoSpeed,
        ...((homeDir ?? deps.sshHome) ? { homeDir: homeDir ?? deps.sshHome } : {}),
      });
    return restartOnApp(app, target, simulated, args, io, say);
  };
  if (args.host === DEMO_FLEET_HOST)
    // The simulated fleet, reached like a real one: its ssh config is the app's ssh home for this run.
    try {
      return await withDemoFleet(args.demoSpeed ?? 1, io, ({ origin, sshHome, hosts }) => {
        say(`${demoFleetLine(hosts)}\n`);
        return run(origin, true, sshHome);
      });
    } catch (err) {
      io.stderr(`pd-console restart: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
  let target: string | HostConfig;
  try {
    target = args.host === DEMO_HOST ? DEMO_HOST : hostFromArg(args.host);
  } catch (err) {
    io.stderr(usageText(RESTART_COMMAND, (err as Error).message));
    return EXIT.usage;
  }
  return run(target, args.host === DEMO_HOST);
}

/** Opens the deployment in the app, once, and restarts in it: one service, or a roll of its workers. */
async function restartOnApp(
  app: RestartCliApp,
  target: string | HostConfig,
  simulated: boolean,
  args: Args,
  io: RestartCliIo,
  say: (s: string) => void,
): Promise<number> {
  const unusable = app.settings?.state().problem;
  if (unusable)
    io.stderr(`pd-console restart: warning: ${unusable.message}; using the default restart settings\n`);
  try {
    const summary =
      target === DEMO_HOST
        ? await app.handlers.openDemo({})
        : await app.core.connectHost(
            { host: typeof target === 'string' ? hostFromArg(target) : target },
            { addHosts: args.addHosts.map(hostFromArg) },
          );
    const deploymentId = summary.deployment.id;
    await firstObservation(app.core, deploymentId);
    const { deployment } = app.core.deploymentOf(deploymentId);
    // The rule the app's restart button and the core's plan follow: groups roll, a 1P1D box restarts in place.
    if (args.worker !== undefined || hasWorkerGroups(deployment.services))
      return await rollCommand(
        rollChannel(app, deploymentId, rollTargetOf(args)),
        { target: rollTargetOf(args), ...expectRoleOf(args) },
        rollIo(args, io, say, simulated),
      );
    const plan = await app.handlers.planRestart({ deploymentId, target: args.target, drain: args.drain });
    if (args.json) io.stdout(`${JSON.stringify({ plan, simulated: isSimulated(summary.host) })}\n`);
    say(planText(plan));
    if (plan.blockedReason) {
      io.stderr(`pd-console restart: refused: ${plan.blockedReason}\n`);
      return EXIT.usage;
    }
    if (!args.yes) {
      const isTTY = io.isTTY ?? Boolean(process.stdin.isTTY);
      if (!isTTY) {
        io.stderr(
          'pd-console restart: refusing to restart without confirmation: stdin is not a terminal. Pass --yes to confirm.\n',
        );
        return EXIT.usage;
      }
      const answer = await (io.ask ?? askOnTerminal)(
        oneLine(`Restart ${targetName(plan)} on ${plan.hostLabel}? [y/N] `),
      );
      if (!/^(y|yes)$/i.test(answer.trim())) {
        say('Not restarted.\n');
        return EXIT.cancelled;
      }
    }
    const { operation, joined } = await app.handlers.startRestart({
      deploymentId,
      target: args.target,
      drain: args.drain,
    });
    if (joined)
      say(`A restart of ${operation.target} is already running (operation ${operation.id}): following it.\n`);
    else say(`Started operation ${operation.id} as ${operation.requestedBy}.\n`);
    const end = await follow(app, operation, say, io);
    if (args.json) io.stdout(`${JSON.stringify({ operation: end })}\n`);
    say(resultText(end));
    return exitOfEnd(end.state);
  } catch (err) {
    const e = err as Error & { hint?: string };
    io.stderr(`pd-console restart: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
    return (e as { code?: string }).code === 'restart-refused' ||
      (e as { code?: string }).code === 'read-only' ||
      (e as { code?: string }).code === 'not-connected' ||
      (e as { code?: string }).code === 'restart-running'
      ? EXIT.usage
      : EXIT.failed;
  } finally {
    await app.shutdown();
  }
}

function expectRoleOf(args: Args): { expectRole?: Role; withoutGpuCheck?: boolean } {
  return {
    ...(args.worker !== undefined && args.target !== 'stack' ? { expectRole: args.target } : {}),
    ...(args.withoutGpuCheck ? { withoutGpuCheck: true } : {}),
  };
}

function rollTargetOf(args: Args): RollTarget {
  if (args.worker !== undefined) return { kind: 'worker', worker: args.worker };
  return args.target === 'stack' ? { kind: 'deployment' } : { kind: 'role', role: args.target };
}

function rollIo(args: Args, io: RestartCliIo, say: (s: string) => void, simulated: boolean): RollCliIo {
  return {
    say,
    simulated,
    stdout: io.stdout,
    stderr: io.stderr,
    json: args.json,
    confirm: async (question) => {
      if (args.yes) return true;
      if (!(io.isTTY ?? Boolean(process.stdin.isTTY)))
        return 'refusing to restart without confirmation: stdin is not a terminal. Pass --yes to confirm.';
      // The question names hosts and workers; it is asked on the terminal, not through the CLI's sink.
      return /^(y|yes)$/i.test((await (io.ask ?? askOnTerminal)(oneLine(question))).trim());
    },
    onInterrupt: io.onInterrupt ?? onSigint,
  };
}

function targetName(plan: RestartPlan): string {
  return plan.target === 'stack'
    ? `the PD stack (${plan.services.map((s) => s.unit).join(', ')})`
    : `${plan.target} (${plan.services[0]?.unit ?? '?'})`;
}

function num(n: number | null): string {
  return n === null ? 'unknown' : String(n);
}

function ago(at: number | null, now: number): string {
  return at === null
    ? 'unknown'
    : `${new Date(at).toISOString().replace('T', ' ').slice(0, 19)} UTC (${formatDuration(now - at)} ago)`;
}

export function planText(plan: RestartPlan): string {
  const lines: string[] = [];
  const who = plan.connectedAs
    ? ` as ${plan.connectedAs.user}${plan.connectedAs.uid === 0 ? ' (root)' : ''}`
    : '';
  lines.push(`Restart plan: ${targetName(plan)} on ${plan.hostLabel}${who}`);
  lines.push(`Order: ${plan.stages.map((s) => s.join(' + ')).join(' → ')}`);
  for (const s of plan.services) {
    lines.push(``, `  ${s.role}: ${s.unit} — now ${s.activeState ?? '?'}/${s.subState ?? '?'}`);
    lines.push(`    command:        ${s.command}`);
    lines.push(`    last restart:   ${ago(s.lastRestartAt, plan.plannedAt)}`);
    if (s.role === 'router')
      lines.push(`    in flight:      ${num(s.impact.inFlightAtRouter)} request(s) at the router`);
    else {
      lines.push(
        `    running:        ${num(s.impact.runningOnWorker)} request(s) on the worker, ${num(s.impact.queuedOnWorker)} queued`,
      );
      lines.push(`    router:         ${num(s.impact.inFlightAtRouter)} request(s) in flight to it`);
      lines.push(`    drain:          ${s.drain.supported ? 'available — ' : ''}${s.drain.detail}`);
    }
    for (const note of s.impact.notes) lines.push(`    note:           ${note}`);
    lines.push(
      `    steps:          ${s.steps.map((st) => st.label).join(' → ')}`,
      `    timeouts:       active ${formatDuration(s.timeouts.activeMs)}, health ${formatDuration(s.timeouts.healthMs)}, router ${formatDuration(s.timeouts.routerMs)}`,
    );
  }
  if (plan.routerInFlight !== null)
    lines.push(``, `The router has ${plan.routerInFlight} request(s) in flight in total.`);
  for (const w of plan.warnings) lines.push(`! ${w}`);
  if (plan.running) lines.push(`! A restart is already running (operation ${plan.running.operationId}).`);
  if (plan.blockedReason) lines.push(`! Refused: ${plan.blockedReason}`);
  // One entry is one line: what the host, the router or the journal said inside it stays on it.
  return `${lines.map(oneLine).join('\n')}\n\n`;
}

export function resultText(op: RestartOperation): string {
  const lines: string[] = [''];
  const mark =
    op.state === 'succeeded' ? '✔' : op.state === 'cancelled' ? '■' : op.state === 'unknown' ? '?' : '✖';
  lines.push(`${mark} ${op.summary}`);
  const f = op.failure;
  if (f) {
    lines.push(`  failed step: ${f.role ? `${f.role} ` : ''}${f.step}`);
    if (f.result) lines.push(`  systemd Result=${f.result}`);
    if (f.hint) lines.push(`  next: ${f.hint}`);
    if (f.sudoersLine) lines.push(`  sudoers line:`, `    ${f.sudoersLine}`);
    if (f.journalTail?.length) lines.push(`  last journal lines:`, ...f.journalTail.map((l) => `    │ ${l}`));
  }
  return `${lines.map(oneLine).join('\n')}\n`;
}

/** Prints step changes, new journal lines and progress as snapshots arrive, until the operation ends. */
function follow(
  app: RestartCliApp,
  first: RestartOperation,
  say: (s: string) => void,
  io: RestartCliIo,
): Promise<RestartOperation> {
  const seenSteps = new Map<string, string>();
  const lastLine = new Map<string, { ts: number; text: string }>();
  const lastProgress = new Map<string, string>();
  let link: RestartOperation['link'] = 'up';
  const t = (op: RestartOperation): string => `[${formatDuration(op.elapsedMs).padStart(9)}]`;
  const show = (op: RestartOperation): void => {
    if (op.link !== link) {
      link = op.link;
      say(
        `${t(op)} ${link === 'down' ? 'lost contact with the host; reconnecting and following on' : 'connection back'}\n`,
      );
    }
    for (const s of op.services) {
      const journal = s.journal;
      const prev = lastLine.get(s.role);
      let from = 0;
      if (prev) {
        const i = journal.findLastIndex((l) => l.ts === prev.ts && l.text === prev.text);
        from = i + 1;
      }
      for (const l of journal.slice(from)) say(`    ${s.role.padEnd(7)} │ ${oneLine(l.text)}\n`);
      if (journal.length) lastLine.set(s.role, journal[journal.length - 1]);
      if (s.progress) {
        const text = describeProgress(s.progress);
        if (lastProgress.get(s.role) !== text) {
          lastProgress.set(s.role, text);
          say(`${t(op)} ${s.role.padEnd(7)} ${oneLine(text)}\n`);
        }
      }
      for (const st of s.steps) {
        const key = `${s.role}:${st.kind}`;
        const was = seenSteps.get(key);
        if (was === st.state || (st.state === 'pending' && was === undefined)) continue;
        seenSteps.set(key, st.state);
        if (st.state === 'pending') continue;
        say(
          `${t(op)} ${s.role.padEnd(7)} ${oneLine(`${st.label}: ${st.state}${st.detail ? ` — ${st.detail}` : ''}`)}\n`,
        );
      }
    }
  };
  return new Promise((resolve) => {
    let interrupts = 0;
    let settled = false;
    const done = (op: RestartOperation): void => {
      if (settled) return;
      settled = true;
      app.core.off('restartProgress', on);
      offInterrupt();
      resolve(op);
    };
    const on = (op: RestartOperation): void => {
      if (op.id !== first.id) return;
      show(op);
      if (op.state !== 'running') done(op);
    };
    const offInterrupt = (io.onInterrupt ?? onSigint)(() => {
      interrupts++;
      if (interrupts === 1) {
        say(
          '\nCancel requested: stopping before the next step. (Ctrl-C again to leave now; the host keeps going.)\n',
        );
        void app.handlers.cancelRestart({ operationId: first.id });
        return;
      }
      void app.handlers.getRestart({ operationId: first.id }).then(done, () => done(first));
    });
    app.core.on('restartProgress', on);
    show(first);
    // It may have ended between the start call and subscribing.
    void app.handlers.getRestart({ operationId: first.id }).then((op) => {
      if (op.state !== 'running') {
        show(op);
        done(op);
      }
    });
  });
}

function firstObservation(core: Core, deploymentId: string, timeoutMs = 20_000): Promise<void> {
  const complete = (): boolean => {
    const latest = core.deploymentOf(deploymentId).latest;
    return !!latest && latest.services.every((s) => s.systemd || s.systemdError);
  };
  if (complete()) return Promise.resolve();
  return new Promise((resolve) => {
    // Without an observation the plan still works; its impact figures say "unknown".
    const timer = setTimeout(finish, timeoutMs);
    function finish(): void {
      clearTimeout(timer);
      core.off('observation', on);
      resolve();
    }
    function on(): void {
      if (complete()) finish();
    }
    core.on('observation', on);
  });
}

function onSigint(fn: () => void): () => void {
  process.on('SIGINT', fn);
  return () => process.off('SIGINT', fn);
}

async function askOnTerminal(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
