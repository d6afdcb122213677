// From what a host's systemd and kernel say to a proposed PD deployment: which units run the SGLang prefill and
// decode servers and the router (by what they execute, never by unit name), where their API and metrics
// endpoints are, which GPUs they use, and — for every endpoint that is missing or inconsistent — why, and what to
// change. What runs is read from the running process (unit-command.ts); a unit's configuration speaks only for a
// unit that does not run, and a value that cannot be known is said to be unknown, never assumed. Pure: text in,
// proposal out; read-units.ts runs the commands.

import type { DeploymentConfig, Role, ServiceConfig } from '@shared/domain';
import type { Listener } from './host-processes';
import { listensFor } from './host-processes';
import type { SglangCommand } from './sglang-command';
import {
  parseRouterFlags,
  parseServerFlags,
  type RouterFlags,
  type ServerFlags,
  type WorkerRef,
} from './sglang-flags';
import {
  findSglang,
  parseEvidence,
  resolveUnitCommand,
  type CommandSource,
  type UnitEvidence,
} from './unit-command';
import { parseListUnits, parseShowExec } from './unit-text';
import { isLoopbackHost, normalHost, parseWorkerUrl } from '@shared/worker-url';

export type { UnitEvidence } from './unit-command';

export interface DiscoveryInput {
  hostId: string;
  deploymentId?: string;
  name?: string;
  /** Output of `systemctl list-units --type=service --all --plain --no-legend --no-pager`. */
  listUnits?: string;
  units: readonly UnitEvidence[];
  /** The host's TCP listeners (`ss -ltnp`), to confirm where servers listen; absent when they could not be read. */
  listeners?: readonly Listener[];
  /** Why the running processes could not be read (then unit files speak for every unit). */
  processesError?: string;
  /** Units the operator picked (the settings file) for roles several units claim; they win over the ranking. */
  chosen?: Partial<Record<Role, string>>;
}

export type DiagnosticCode =
  | 'no-sglang-units'
  | 'missing-role'
  | 'duplicate-role'
  | 'metrics-disabled'
  | 'router-no-metrics'
  | 'router-metrics-ephemeral'
  | 'router-not-pd'
  | 'router-url-mismatch'
  | 'router-url-unreachable-host'
  | 'server-not-routed'
  | 'bootstrap-port-mismatch'
  | 'unified-server'
  | 'unparseable-execstart'
  | 'flag-problem'
  | 'unresolved-env'
  | 'gpu-mapping'
  | 'container'
  | 'multi-node'
  | 'changed-on-disk'
  | 'running-differs'
  | 'not-listening'
  | 'read-from-script';

export interface DiscoveryDiagnostic {
  severity: 'error' | 'warning' | 'info';
  code: DiagnosticCode;
  role?: Role;
  unit?: string;
  /** What is wrong or missing and why, naming units, flags and ports. */
  message: string;
  /** What to change. */
  fix?: string;
}

export interface DiscoveredUnit {
  unit: string;
  kind: 'server' | 'router';
  /** Where its command was read: the running process (exact), the unit's files, or a wrapper script. */
  source: CommandSource;
  /** The process that runs it, when read from a process. */
  pid?: number;
  /** Flags whose value could not be read (a variable set nowhere readable): its endpoints are unknown. */
  unknown?: string[];
  /** prefill/decode from --disaggregation-mode, router; undefined for a unified (non-PD) server. */
  role?: Role;
  activeState?: string;
  command: SglangCommand;
  server?: ServerFlags;
  router?: RouterFlags & { flavour: 'sglang_router' | 'smg' | 'mini_lb' };
  /** The service config this unit would get; absent for a unified server, which has no PD role. */
  service?: ServiceConfig;
  env: Record<string, string>;
}

export interface DiscoveryResult {
  deployment: DeploymentConfig;
  /** Every unit found running SGLang, chosen or not. */
  found: DiscoveredUnit[];
  diagnostics: DiscoveryDiagnostic[];
  /** Roles claimed by several units: the proposal picked one; the operator should confirm. */
  needsOperatorChoice: { role: Role; units: string[]; chosen: string }[];
}

export function discoverDeployment(input: DiscoveryInput): DiscoveryResult {
  const diagnostics: DiscoveryDiagnostic[] = [];
  const listed = new Map(parseListUnits(input.listUnits ?? '').map((u) => [u.unit, u]));
  const found: DiscoveredUnit[] = [];

  for (const ev of input.units) {
    if (listed.get(ev.unit)?.load === 'not-found') continue;
    const d = inspectUnit(ev, input, listed.get(ev.unit)?.active, diagnostics);
    if (d) found.push(d);
  }

  if (found.length === 0) {
    diagnostics.push({
      severity: 'error',
      code: 'no-sglang-units',
      message:
        `none of the ${input.units.length} service unit(s) inspected runs SGLang: no ExecStart contains ` +
        '`python -m sglang.launch_server`, `python -m sglang_router.launch_router`, `python -m smg.launch_router` or `smg`',
      fix: 'if SGLang runs outside systemd (tmux, docker compose, a login shell), create systemd units for it; PD Console manages units',
    });
  }

  for (const d of found) {
    if (d.kind === 'server' && !d.role) {
      diagnostics.push({
        severity: 'info',
        code: 'unified-server',
        unit: d.unit,
        message: `${d.unit} runs an SGLang server without --disaggregation-mode (a unified, non-PD server); it is not part of the proposal`,
        fix: 'start it with --disaggregation-mode prefill or decode if it is meant to be part of the PD pair',
      });
    }
  }

  const needsOperatorChoice: DiscoveryResult['needsOperatorChoice'] = [];
  const picked = input.chosen ?? {};
  const router = choose('router', found, diagnostics, needsOperatorChoice, () => 0, picked.router);
  const routedBy = (d: DiscoveredUnit, refs: WorkerRef[] | undefined) =>
    (refs ?? []).some((r) => d.server && matchEndpoint(r.url, d.server).ok) ? 1 : 0;
  const prefill = choose(
    'prefill',
    found,
    diagnostics,
    needsOperatorChoice,
    (d) => routedBy(d, router?.router?.prefill),
    picked.prefill,
  );
  const decode = choose(
    'decode',
    found,
    diagnostics,
    needsOperatorChoice,
    (d) => routedBy(d, router?.router?.decode),
    picked.decode,
  );

  const unified = found.filter((d) => d.kind === 'server' && !d.role).map((d) => d.unit);
  for (const [role, chosen] of [
    ['prefill', prefill],
    ['decode', decode],
  ] as const) {
    if (chosen || found.length === 0) continue;
    diagnostics.push({
      severity: 'error',
      code: 'missing-role',
      role,
      message:
        `no unit runs an SGLang server with --disaggregation-mode ${role}` +
        (unified.length > 0 ? ` (found unified server(s): ${unified.join(', ')})` : ''),
      fix: `add --disaggregation-mode ${role} to the ExecStart of the ${role} server's unit, or create that unit`,
    });
  }
  if (!router && found.length > 0) {
    diagnostics.push({
      severity: 'warning',
      code: 'missing-role',
      role: 'router',
      message:
        'no unit runs an SGLang router (`python -m sglang_router.launch_router`, `python -m smg.launch_router` or `smg`): ' +
        'router health, readiness and request/error rates will be unavailable',
      fix: 'run the router as a systemd unit with --pd-disaggregation --prefill URL [BOOTSTRAP_PORT] --decode URL',
    });
  }

  if (router?.router) crossCheckRouter(router, prefill, decode, found, diagnostics);

  const services = [prefill, decode, router].flatMap((d) => (d?.service ? [d.service] : []));
  const model = prefill?.server?.servedModelName ?? decode?.server?.servedModelName;
  return {
    deployment: {
      id: input.deploymentId ?? `${input.hostId}-pd`,
      name: input.name ?? (model ? `${model} on ${input.hostId}` : `PD on ${input.hostId}`),
      services,
    },
    found,
    diagnostics,
    needsOperatorChoice,
  };
}

/** "$PREFILL_PORT", "${PREFILL_PORT}": the variables a configured command still holds, with where they were looked for. */
function unresolvedMessage(unit: string, vars: string[], readFiles: string[], unread: string[]): string {
  const looked = [`Environment= of ${unit}`, ...readFiles.map((f) => `${f} (read: not set there)`)];
  return (
    `${vars.map((v) => `$${v}`).join(', ')} ${vars.length === 1 ? 'is' : 'are'} set in none of: ${looked.join(', ')}` +
    (unread.length > 0 ? `; not readable: ${unread.join(', ')}` : '')
  );
}

function inspectUnit(
  ev: UnitEvidence,
  input: DiscoveryInput,
  listedActive: string | undefined,
  diagnostics: DiscoveryDiagnostic[],
): DiscoveredUnit | undefined {
  const parsed = parseEvidence(ev);
  const { show, cat } = parsed;
  const r = resolveUnitCommand(parsed, findSglang);
  const running = (show?.mainPid ?? 0) > 0;
  for (const line of r.unsplittable) {
    diagnostics.push({
      severity: 'warning',
      code: 'unparseable-execstart',
      unit: ev.unit,
      message: `${ev.unit}: an ExecStart line breaks systemd's quoting rules (${line}); systemd refuses to start a unit with such a line`,
      fix: `fix the quoting in ${cat?.files.join(' or ') || 'the unit file'} (systemd.syntax(7): quote a word with an apostrophe in "…")`,
    });
  }
  const command = r.command;
  const source = r.source;
  if (!command || !source) {
    if (show?.shownArgv?.some((a) => /sglang|smg/.test(a)) && r.unsplittable.length === 0) {
      diagnostics.push({
        severity: 'warning',
        code: 'unparseable-execstart',
        unit: ev.unit,
        message:
          `${ev.unit} mentions SGLang in its ExecStart, but ` +
          (running
            ? `none of its processes could be read${input.processesError ? ` (${input.processesError})` : ''}`
            : 'it runs nothing') +
          (ev.cat === undefined
            ? ` and its unit file could not be read (${ev.catError ?? 'systemctl cat failed'})`
            : '') +
          ': its flags cannot be known',
        fix: `check that \`systemctl cat ${ev.unit}\` works for this user, or start the unit so its running command can be read`,
      });
    }
    return undefined;
  }
  const env: Record<string, string> = { ...r.env, ...command.inlineEnv };
  const unresolved = command.unresolved;

  const differs =
    r.configured !== undefined && source === 'process'
      ? runningDiffers(ev.unit, command, r.configured, show, diagnostics)
      : false;
  if (!differs && ((show?.changedOnDisk ?? false) || (cat?.changedOnDisk ?? false))) {
    diagnostics.push({
      severity: 'warning',
      code: 'changed-on-disk',
      unit: ev.unit,
      message: `${ev.unit} changed on disk since systemd loaded it; the running service still uses the old ExecStart`,
      fix: `run \`systemctl daemon-reload\` and restart ${ev.unit} to apply the file`,
    });
  }
  if (source === 'script') {
    diagnostics.push({
      severity: 'info',
      code: 'read-from-script',
      unit: ev.unit,
      message: `${ev.unit} runs nothing now; its command was read from the wrapper script its ExecStart names, as the shell would run it`,
    });
  }
  if (command.container) {
    diagnostics.push({
      severity: 'warning',
      code: 'container',
      unit: ev.unit,
      message: `${ev.unit} runs SGLang inside ${command.container}: ports and GPU indices are read from the SGLang flags and may differ on the host (-p / --gpus mappings)`,
      fix: 'check the API/metrics URLs and GPUs of this service by hand',
    });
  }

  const activeState = ev.activeState ?? show?.activeState ?? listedActive;
  const where = { source, ...(r.pid !== undefined ? { pid: r.pid } : {}) };
  const bareVars =
    unresolved.length > 0 && command.args.some((a) => /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(a));
  const unknownValue = (flags: string[]): DiscoveryDiagnostic | undefined => {
    if (flags.length === 0) return undefined;
    return {
      severity: 'error',
      code: 'unresolved-env',
      unit: ev.unit,
      message:
        `${ev.unit}: ${flags.join(', ')} ${flags.length === 1 ? 'comes' : 'come'} from a variable discovery cannot read — ` +
        unresolvedMessage(ev.unit, unresolved, r.readEnvFiles, r.unreadEnvFiles) +
        `; where it listens is unknown, so it is not monitored`,
      fix: running
        ? `${ev.unit} runs, but its process could not be read${input.processesError ? ` (${input.processesError})` : ''}: check that \`ps\` and /proc/<pid>/cmdline are readable for this user`
        : `start ${ev.unit} (PD Console reads the port from the running process), or set ${unresolved.join(', ')} in its Environment= or EnvironmentFile=`,
    };
  };

  if (command.kind === 'server') {
    const server = parseServerFlags(command.args);
    flagProblems(ev.unit, server.problems, diagnostics);
    const unknownFlags = server.unknown.filter((f) =>
      ['--port', '--host', '--disaggregation-mode'].includes(f),
    );
    const problem = unknownValue(unknownFlags);
    if (problem) {
      diagnostics.push(problem);
      return {
        unit: ev.unit,
        kind: 'server',
        ...where,
        ...(server.mode && !unknownFlags.includes('--disaggregation-mode') ? { role: server.mode } : {}),
        ...(activeState ? { activeState } : {}),
        unknown: unknownFlags,
        command,
        server,
        env,
      };
    }
    const role: Role | undefined = server.mode ?? undefined;
    const port = confirmedPort(ev.unit, server.host, server.port, command.args, r.pid, input, diagnostics);
    const apiUrl = `http://${connectHost(server.host)}:${port}`;
    const gpus = gpuIndices(server, env, ev.unit, diagnostics);
    if (server.nnodes > 1) {
      diagnostics.push({
        severity: 'info',
        code: 'multi-node',
        unit: ev.unit,
        ...(role ? { role } : {}),
        message: `${ev.unit} is node ${server.nodeRank} of a ${server.nnodes}-node server; only rank 0 serves HTTP and /metrics`,
        ...(server.nodeRank > 0 ? { fix: 'monitor this role through the host that runs --node-rank 0' } : {}),
      });
    }
    if (role && !server.enableMetrics && bareVars) {
      diagnostics.push({
        severity: 'info',
        code: 'unresolved-env',
        role,
        unit: ev.unit,
        message: `${role}: whether ${ev.unit} enables metrics is unknown — its command passes ${unresolved.map((v) => `$${v}`).join(', ')}, which may hold more flags (${unresolvedMessage(ev.unit, unresolved, r.readEnvFiles, r.unreadEnvFiles)}); ${apiUrl}/metrics will be tried`,
      });
    } else if (role && !server.enableMetrics) {
      diagnostics.push({
        severity: 'error',
        code: 'metrics-disabled',
        role,
        unit: ev.unit,
        message:
          `${role}: metrics disabled — ${ev.unit} ${source === 'process' ? `runs (pid ${r.pid})` : 'is configured to run'} without --enable-metrics, ` +
          `so ${apiUrl}/metrics does not exist (no KV usage, queues or latencies)`,
        fix: `add --enable-metrics to ExecStart of ${ev.unit} and restart it`,
      });
    }
    const metricsKnown = server.enableMetrics || bareVars;
    const service: ServiceConfig | undefined = role && {
      role,
      hostId: input.hostId,
      unit: ev.unit,
      apiUrl,
      ...(metricsKnown ? { metricsUrl: `${apiUrl}/metrics` } : {}),
      healthUrl: `${apiUrl}/health`,
      ...(gpus ? { gpus } : {}),
    };
    return {
      unit: ev.unit,
      kind: 'server',
      ...where,
      ...(role ? { role } : {}),
      ...(activeState ? { activeState } : {}),
      command,
      server: { ...server, port },
      ...(service ? { service } : {}),
      env,
    };
  }

  const flavour = command.flavour ?? 'sglang_router';
  const router = parseRouterFlags(command.args, flavour);
  flagProblems(ev.unit, router.problems, diagnostics);
  const problem = unknownValue(router.unknown.filter((f) => ['--port', '--host'].includes(f)));
  if (problem) {
    diagnostics.push(problem);
    return {
      unit: ev.unit,
      kind: 'router',
      ...where,
      role: 'router',
      ...(activeState ? { activeState } : {}),
      unknown: router.unknown,
      command,
      router: { ...router, flavour },
      env,
    };
  }
  const apiPort = confirmedPort(ev.unit, router.host, router.port, command.args, r.pid, input, diagnostics);
  const apiUrl = `http://${connectHost(router.host)}:${apiPort}`;
  let metricsUrl: string | undefined;
  if (router.prometheusPort === null || router.prometheusHost === null) {
    diagnostics.push({
      severity: 'warning',
      code: 'router-no-metrics',
      role: 'router',
      unit: ev.unit,
      message: `router: ${ev.unit} runs ${command.program}, which has no Prometheus endpoint; only its HTTP health is available`,
      fix: 'replace it with sglang-router / smg (`python -m sglang_router.launch_router --pd-disaggregation …`)',
    });
  } else if (router.unknown.some((f) => f === '--prometheus-port' || f === '--prometheus-host')) {
    diagnostics.push({
      severity: 'warning',
      code: 'unresolved-env',
      role: 'router',
      unit: ev.unit,
      message: `router: ${ev.unit}'s Prometheus endpoint comes from a variable discovery cannot read — ${unresolvedMessage(ev.unit, unresolved, r.readEnvFiles, r.unreadEnvFiles)}; its metrics are not read`,
      fix: `start ${ev.unit} (PD Console reads the running process), or set ${unresolved.join(', ')} in its Environment= or EnvironmentFile=`,
    });
  } else if (router.prometheusPort === 0) {
    diagnostics.push({
      severity: 'warning',
      code: 'router-metrics-ephemeral',
      role: 'router',
      unit: ev.unit,
      message: `router: ${ev.unit} has --prometheus-port 0, so its metrics port is chosen at random on each start`,
      fix: `set a fixed --prometheus-port (default 29000) in ExecStart of ${ev.unit}`,
    });
  } else {
    const mPort = confirmedPort(
      ev.unit,
      router.prometheusHost,
      router.prometheusPort,
      command.args,
      r.pid,
      input,
      diagnostics,
      '--prometheus-port',
    );
    metricsUrl = `http://${connectHost(router.prometheusHost)}:${mPort}/metrics`;
  }
  return {
    unit: ev.unit,
    kind: 'router',
    ...where,
    role: 'router',
    ...(activeState ? { activeState } : {}),
    command,
    router: { ...router, port: apiPort, flavour },
    service: {
      role: 'router',
      hostId: input.hostId,
      unit: ev.unit,
      apiUrl,
      ...(metricsUrl ? { metricsUrl } : {}),
      healthUrl: `${apiUrl}/health`,
    },
    env,
  };
}

/**
 * The port a running process really listens on. Its command line is the truth when it names the port; when it
 * leaves it to the program's default, the process's own listener (from `ss -ltnp`, where this user may see it)
 * settles it. A running process not yet listening is said so: SGLang opens its port once the model is loaded.
 */
function confirmedPort(
  unit: string,
  host: string,
  port: number,
  args: readonly string[],
  pid: number | undefined,
  input: DiscoveryInput,
  diagnostics: DiscoveryDiagnostic[],
  flag = '--port',
): number {
  const listeners = input.listeners;
  if (pid === undefined || !listeners) return port;
  if (listeners.some((l) => listensFor(l, host, port))) return port;
  const own = [...new Set(listeners.filter((l) => l.pids.includes(pid)).map((l) => l.port))];
  if (!hasFlagIn(args, flag) && own.length === 1) {
    diagnostics.push({
      severity: 'info',
      code: 'not-listening',
      unit,
      message: `${unit}: its command line gives no ${flag}; its process (pid ${pid}) listens on ${own[0]}, which is used`,
    });
    return own[0];
  }
  diagnostics.push({
    severity: 'info',
    code: 'not-listening',
    unit,
    message:
      `${unit} runs (pid ${pid}) but nothing listens on ${host}:${port} yet` +
      (own.length > 0 ? ` (its process listens on ${own.join(', ')})` : '') +
      ': SGLang opens its port once the model is loaded',
  });
  return port;
}

function hasFlagIn(args: readonly string[], flag: string): boolean {
  return args.some((a) => a === flag || a.startsWith(`${flag}=`));
}

/** The configured command differs from the running one where it matters: restart to apply. */
function runningDiffers(
  unit: string,
  running: SglangCommand,
  configured: SglangCommand,
  show: ReturnType<typeof parseShowExec> | undefined,
  diagnostics: DiscoveryDiagnostic[],
): boolean {
  const describe = (c: SglangCommand): Record<string, string> => {
    if (c.kind === 'server') {
      const f = parseServerFlags(c.args);
      return {
        '--host': f.host,
        '--port': String(f.port),
        '--disaggregation-mode': String(f.mode),
        '--enable-metrics': f.enableMetrics ? 'on' : 'off',
        '--tp': String(f.tp),
        '--dp': String(f.dp),
        '--base-gpu-id': String(f.baseGpuId),
      };
    }
    const f = parseRouterFlags(c.args, c.flavour ?? 'sglang_router');
    return {
      '--host': f.host,
      '--port': String(f.port),
      '--prometheus-port': String(f.prometheusPort),
      '--prefill': f.prefill.map((w) => w.url).join(' '),
      '--decode': f.decode.map((w) => w.url).join(' '),
    };
  };
  const now = describe(running);
  const then = describe(configured);
  const diffs = Object.keys(now).filter((k) => now[k] !== then[k]);
  if (diffs.length === 0 && running.kind === configured.kind) return false;
  const said = (v: Record<string, string>, k: string): string =>
    k === '--enable-metrics'
      ? `${v[k] === 'on' ? 'with' : 'without'} --enable-metrics`
      : `${k} ${v[k] || '(none)'}`;
  const reload = show?.changedOnDisk ?? false;
  diagnostics.push({
    severity: 'warning',
    code: 'running-differs',
    unit,
    message: `${unit} is running with ${diffs.map((k) => said(now, k)).join(', ')}; its unit files now say ${diffs.map((k) => said(then, k)).join(', ')}${reload ? ' (and systemd has not reloaded them yet)' : ''}: the change applies at the next restart`,
    fix: `${reload ? 'run `systemctl daemon-reload`, then ' : ''}restart ${unit} to apply it — figures shown now are the running process's`,
  });
  return true;
}

function flagProblems(unit: string, problems: string[], diagnostics: DiscoveryDiagnostic[]): void {
  for (const p of problems) {
    diagnostics.push({
      severity: 'warning',
      code: 'flag-problem',
      unit,
      message: `${unit}: ${p}`,
      fix: `fix ExecStart of ${unit}`,
    });
  }
}

/** Picks one unit per role: the one the router points at, then an active one, then by name; flags ties. */
function choose(
  role: Role,
  found: DiscoveredUnit[],
  diagnostics: DiscoveryDiagnostic[],
  needsChoice: DiscoveryResult['needsOperatorChoice'],
  preference: (d: DiscoveredUnit) => number,
  operatorChoice?: string,
): DiscoveredUnit | undefined {
  const candidates = found.filter((d) => d.role === role);
  if (candidates.length <= 1) return candidates[0];
  const picked = candidates.find((d) => d.unit === operatorChoice);
  if (picked) {
    diagnostics.push({
      severity: 'info',
      code: 'duplicate-role',
      role,
      message: `${candidates.length} units claim ${role}: ${candidates.map((d) => d.unit).join(', ')}; using ${picked.unit}, the unit you chose (saved in the settings file)`,
      fix: `to choose again, clear the ${role} choice for this host in the discovery settings`,
    });
    return picked;
  }
  const score = (d: DiscoveredUnit) => preference(d) * 2 + (d.activeState === 'active' ? 1 : 0);
  const ranked = [...candidates].sort((a, b) => score(b) - score(a) || a.unit.localeCompare(b.unit));
  const chosen = ranked[0];
  needsChoice.push({ role, units: ranked.map((d) => d.unit), chosen: chosen.unit });
  const why =
    preference(chosen) > preference(ranked[1])
      ? 'the router points at it'
      : score(chosen) > score(ranked[1])
        ? 'it is the active one'
        : 'first by name; nothing else tells them apart';
  diagnostics.push({
    severity: 'warning',
    code: 'duplicate-role',
    role,
    message: `${candidates.length} units claim ${role}: ${ranked.map((d) => `${d.unit} (${d.activeState ?? 'state unknown'})`).join(', ')}; proposing ${chosen.unit} because ${why}`,
    fix: `confirm which unit is the ${role} server; disable the other (systemctl disable --now UNIT) if it is stale`,
  });
  return chosen;
}

function crossCheckRouter(
  router: DiscoveredUnit,
  prefill: DiscoveredUnit | undefined,
  decode: DiscoveredUnit | undefined,
  found: DiscoveredUnit[],
  diagnostics: DiscoveryDiagnostic[],
): void {
  const r = router.router;
  if (!r) return;
  if (r.flavour !== 'mini_lb' && !r.pd && (prefill || decode)) {
    diagnostics.push({
      severity: 'warning',
      code: 'router-not-pd',
      role: 'router',
      unit: router.unit,
      message: `router: ${router.unit} runs without --pd-disaggregation, so it does not pair prefill and decode workers`,
      fix: `add --pd-disaggregation --prefill URL [BOOTSTRAP_PORT] --decode URL to ExecStart of ${router.unit}`,
    });
  }
  for (const [role, refs, chosen] of [
    ['prefill', r.prefill, prefill],
    ['decode', r.decode, decode],
  ] as const) {
    const servers = found.filter((d) => d.role === role && d.server && !d.unknown?.length);
    const unread = found.filter(
      (d) => d.kind === 'server' && d.unknown?.length && (!d.role || d.role === role),
    );
    let urlProblem = false;
    for (const ref of refs) {
      const matches = servers.map((d) => ({ d, m: matchEndpoint(ref.url, d.server as ServerFlags) }));
      const hit = matches.find((x) => x.m.ok);
      if (!hit && unread.length > 0) {
        // A server whose endpoint could not be read may be the one: no fix is proposed from what is unknown.
        urlProblem = true;
        diagnostics.push({
          severity: 'warning',
          code: 'router-url-mismatch',
          role,
          unit: router.unit,
          message: `router's --${role} ${ref.url} matches no ${role} server whose endpoint could be read; ${unread.map((d) => d.unit).join(', ')} may be it (${unread.length === 1 ? 'its' : 'their'} ${[...new Set(unread.flatMap((d) => d.unknown ?? []))].join(', ')} could not be read — see above)`,
        });
        continue;
      }
      if (hit) {
        if (role === 'prefill' && typeof ref.bootstrapPort === 'number' && hit.d.server) {
          const bp = hit.d.server.bootstrapPort;
          if (bp !== ref.bootstrapPort) {
            diagnostics.push({
              severity: 'warning',
              code: 'bootstrap-port-mismatch',
              role: 'prefill',
              unit: router.unit,
              message: `router's --prefill ${ref.url} ${ref.bootstrapPort} names bootstrap port ${ref.bootstrapPort}, but ${hit.d.unit} listens for bootstrap on ${bp}`,
              fix: `use --prefill ${ref.url} ${bp} in ${router.unit}, or --disaggregation-bootstrap-port ${ref.bootstrapPort} in ${hit.d.unit}`,
            });
          }
        }
        continue;
      }
      urlProblem = true;
      const samePort = matches.find((x) => x.m.portMatches);
      if (samePort) {
        diagnostics.push({
          severity: 'error',
          code: 'router-url-unreachable-host',
          role,
          unit: router.unit,
          message: `router's --${role} ${ref.url} targets port ${samePort.d.server?.port}, but ${samePort.d.unit} listens on ${samePort.d.server?.host} only`,
          fix: `point the router at http://127.0.0.1:${samePort.d.server?.port}, or start ${samePort.d.unit} with --host 0.0.0.0`,
        });
        continue;
      }
      const listening = servers
        .map((d) => `${d.unit} listens on ${d.server?.host}:${d.server?.port}`)
        .join('; ');
      diagnostics.push({
        severity: 'error',
        code: 'router-url-mismatch',
        role,
        unit: router.unit,
        message:
          `router's --${role} ${ref.url} does not match any ${role} unit on this host` +
          (listening ? ` (${listening})` : ` (no ${role} unit found)`) +
          '; if that server runs on another host, add that host to the deployment',
        fix: chosen?.service
          ? `change --${role} in ExecStart of ${router.unit} to ${chosen.service.apiUrl}, or --port of ${chosen.unit}`
          : `start a ${role} server at ${ref.url}`,
      });
    }
    if (chosen?.server && chosen.service && r.flavour !== 'mini_lb' && (r.pd || refs.length > 0)) {
      const server = chosen.server;
      // A wrong URL was already reported with its fix; saying the server gets no traffic would repeat it.
      if (!urlProblem && !refs.some((ref) => matchEndpoint(ref.url, server).ok)) {
        diagnostics.push({
          severity: 'warning',
          code: 'server-not-routed',
          role,
          unit: chosen.unit,
          message: `${role} server ${chosen.unit} (${chosen.service.apiUrl}) is not among the router's --${role} workers, so it gets no traffic from ${router.unit}`,
          fix: `add --${role} ${chosen.service.apiUrl}${role === 'prefill' ? ` ${server.bootstrapPort}` : ''} to ExecStart of ${router.unit}`,
        });
      }
    }
  }
}

const WILDCARD = new Set(['0.0.0.0', '::', '[::]', '', '*']);

/** How a host the operator wrote should be dialled from the host itself. */
export function connectHost(host: string): string {
  if (WILDCARD.has(host)) return '127.0.0.1';
  if (host.includes(':') && !host.startsWith('[')) return `[${host}]`;
  return host;
}

/** Whether a worker URL given to the router reaches a server listening on host:port. */
export function matchEndpoint(
  url: string,
  server: { host: string; port: number },
): { ok: boolean; portMatches: boolean } {
  const ep = parseWorkerUrl(url);
  if ('error' in ep || ep.port !== server.port) return { ok: false, portMatches: false };
  const target = ep.host;
  const listen = normalHost(server.host);
  const ok =
    WILDCARD.has(server.host.trim()) ||
    target === listen ||
    (isLoopbackHost(target) && isLoopbackHost(listen));
  return { ok, portMatches: true };
}

/**
 * Physical GPU indices a server uses: logical ids base + i·step for i < tp·pp·(dp unless DP attention) per
 * node, mapped through CUDA_VISIBLE_DEVICES when set. Undefined (with a diagnostic) when that cannot be known.
 */
function gpuIndices(
  s: ServerFlags,
  env: Record<string, string>,
  unit: string,
  diagnostics: DiscoveryDiagnostic[],
): number[] | undefined {
  const total = s.tp * s.pp * (s.dpAttention ? 1 : s.dp);
  const perNode = Math.max(1, Math.floor(total / s.nnodes));
  const logical = Array.from({ length: perNode }, (_, i) => s.baseGpuId + i * s.gpuIdStep);
  const cvd = env.CUDA_VISIBLE_DEVICES;
  if (cvd === undefined || cvd.trim() === '') return logical;
  const visible = cvd.split(',').map((x) => x.trim());
  if (!visible.every((x) => /^\d+$/.test(x))) {
    diagnostics.push({
      severity: 'info',
      code: 'gpu-mapping',
      unit,
      message: `${unit}: CUDA_VISIBLE_DEVICES=${cvd} names GPUs by UUID/MIG id; GPU indices are not mapped`,
      fix: 'use numeric indices in CUDA_VISIBLE_DEVICES to see per-GPU figures per role',
    });
    return undefined;
  }
  if (logical.some((i) => i >= visible.length)) {
    diagnostics.push({
      severity: 'warning',
      code: 'gpu-mapping',
      unit,
      message: `${unit}: needs logical GPUs ${logical.join(',')} (base ${s.baseGpuId}, ${perNode} GPU(s)) but CUDA_VISIBLE_DEVICES=${cvd} exposes only ${visible.length}`,
      fix: 'align --base-gpu-id / --tp-size with CUDA_VISIBLE_DEVICES',
    });
    return undefined;
  }
  return logical.map((i) => Number(visible[i]));
}
