// `pd-console`: the same core for terminals and scripts.
import type { App } from '../compose';
import type { Core } from '../core/core';
import {
  ROLES,
  serviceId,
  type DeploymentSummary,
  type HostConfig,
  type ServiceConfig,
  type ServiceObservation,
} from '@shared/domain';
import { parseCommand } from './parse-command';
import { fleetWorkersOf, workerShortName } from '@shared/worker-names';
import { HOST_SPEC_HELP } from '@shared/host-spec';
import { oneLine, visibleLayout } from '@shared/display-text';
import {
  defineCommand,
  parseCommandLine,
  usageText,
  UsageError,
  type CommandSpec,
  type OptionValues,
} from './cli-args';
import { DEMO_HOST, HOST_OPTION, hostArg, hostFromArg, isSimulated, openTarget } from './target';
import { restartCommand } from './restart-command';
import { statusCommand } from './status-command';
import { DEMO_FLEET_HOST, demoFleetLine, withDemoFleet } from './demo-fleet';
import { withApp, type CliAppDeps } from './cli-app';
import type { CliIo } from './cli-io';
import { openCommand } from './open-command';
import { recordingCommand } from './recording-command';
import { FORMAT_MINOR_VERSION } from '../core/recording/format';
import { LinkWatch } from './link-status';
import { settingsCommand } from './settings-command';
import { historyCommand } from './history-command';
import { logsCommand } from './logs-command';
import { exportCommand } from './export-command';
import { demoEraHelp, demoEraOptions, type DemoEraOptions } from './demo-options';
import { readEra } from './era-of';
import { watchScrapes } from './scrape-watch';
import { withoutRole } from './fleet-reading';
import { NOT_UNDERSTOOD } from '@shared/signals/family-classes';
import { tuneGarbageCollector } from '../gc-tuning';

/** The first line of each host command's usage: the line `pd-console --help` lists it under. */
const SYNOPSIS = {
  status: 'status [--host H] [--json] [--wait S] [--add-host H2,H3]',
  kv: 'kv [--host H] [--watch]',
  discover: 'discover [--host H] [--json]',
  metrics: 'metrics --service prefill|decode|router|NAME [--host H] [--json]',
} as const;

const USAGE = `usage: pd-console <command> [options]

commands:
  ${SYNOPSIS.status}
                                 the SSH link (since when it is up, or lost and which reconnect attempt is
                                 next), then each router and worker: systemd state, condition, exact KV and
                                 the headline figures: router requests/s, error share, latency p50/p99; servers'
                                 running and queued requests, generation tokens/s — rates over the scrapes of
                                 at least S seconds (default 3); a missing figure says which metric it needs.
                                 On a real host it follows the router to every worker's host (each worker URL's
                                 host is found as the ssh alias that resolves to it; --add-host adds hosts by
                                 hand, e.g. a multi-node worker's other nodes); with several hosts or workers
                                 of a role each row also names the worker, its URL and host, with per-role
                                 totals; every worker it cannot place is listed with the line to add.
                                 Each unit's condition is named as systemd means it, with the evidence:
                                 "crash-looping: restart 4, exit status 1 (ImportError: …)", "failed (exit
                                 status 1, Restart=no)", "running, model loading (3 min, last load took 4 min)".
                                 Waits up to 10 s for every probe's first answer.
                                 exit status: 0 every service serving behind a router; 3 something is not
                                 (loading, failed, crash-looping, stopped, unreachable, unplaced, no router);
                                 1 the command failed; 2 bad usage
  ${SYNOPSIS.kv.padEnd(31)}KV-cache usage of prefill and decode (every second with --watch); where a
                                 figure is missing it says why: the link, or the endpoint and how long it waits
  ${SYNOPSIS.discover.padEnd(31)}find the SGLang units on the host; say what is missing and what to change
  ${SYNOPSIS.metrics}
                                 every metric family the endpoint serves: type, series, last value; the
                                 server or router version it recognises, the headline families missing and
                                 what adds them, and how many families PD Console does not use. A role names
                                 its only service; where it has several, name the worker (decode-1)
  restart decode|prefill|router|stack[@URL|UNIT] [--host H] [--yes] [--drain] [--json]
                                 restart a service or the PD stack in order, step by step; on a fleet a rolling
                                 restart, one worker at a time (see restart --help)
  logs ROLE|WORKER [--host H] [-n N] [--since T] [--follow] [--json]
                                 a unit's journal as the console reads it: long lines whole, byte arrays
                                 decoded, progress bars as their last redraw, keys and tokens removed; a
                                 multi-node worker's units on every host (see logs --help)
  history SIGNAL [--host H] --since 7d [--step 1m] [--json] [--prometheus URL] [--match M]
                                 a signal's series over a range (decode.kv_ratio, decode.ttft_p99_s, …), each
                                 part with its source: the host's Prometheus for the past (through the SSH
                                 tunnel), this app's scrapes for the newest seconds (see history --help)
  open FILE [--json]             a recorded session offline: host, time span, series, events with times, warnings
  recording resave FILE          rewrite a recording in the current format (1.${FORMAT_MINOR_VERSION}): a review then opens it at once
  settings show|export|import|choose …
                                 the settings file: what is in effect, a copy to share, a shared copy taken in,
                                 the unit discovery uses for a role (see settings --help)
  export prometheus-config|grafana-dashboard [--host H] [--out FILE]
                                 a prometheus.yml scraping every endpoint discovery found (a job per role,
                                 instance labels naming the host), or a Grafana dashboard with the console's
                                 panels templated by job/instance (see export --help)
  parse --format prometheus|openmetrics [--json] < FILE
                                 check an exposition read on stdin (exit 0 if it parses)

--host demo is the built-in simulated GPU host (default); --host demo-fleet (status, restart) the simulated
three-host fleet (gpu-a/b/c; add --add-host gpu-c for the decode worker's second node); otherwise an ssh
alias or user@host[:port]. Flags take their value as --flag VALUE or --flag=VALUE, before or after the other
words; an unknown flag is refused. What the CLI prints from hosts, servers and files shows control characters
as escapes (\\u001b) and URLs without user:password.
With --host demo:
${demoEraHelp(33)}`;

/** The options status, kv, discover and metrics share: the host, and the demo's metric eras. */
const HOST_OPTIONS = {
  host: HOST_OPTION,
  'demo-era': { type: 'string', needs: 'a server era (see --help)' },
  'demo-router': { type: 'string', needs: 'a router era (see --help)' },
} as const;

function hostCommandUsage(synopsis: string): string {
  return `usage: pd-console ${synopsis} [--demo-era E] [--demo-router R]\nWith --host demo (the default):\n${demoEraHelp(33)}(pd-console --help says what each command prints)\n`;
}

export const STATUS_COMMAND = defineCommand({
  name: 'status',
  usage: hostCommandUsage(SYNOPSIS.status),
  options: {
    ...HOST_OPTIONS,
    json: { type: 'boolean' },
    wait: { type: 'string', needs: `a number of seconds from 0 to 300` },
    'add-host': { type: 'string', needs: `hosts, comma-separated (${HOST_SPEC_HELP})` },
  },
});
export const KV_COMMAND = defineCommand({
  name: 'kv',
  usage: hostCommandUsage(SYNOPSIS.kv),
  options: { ...HOST_OPTIONS, watch: { type: 'boolean' } },
});
export const DISCOVER_COMMAND = defineCommand({
  name: 'discover',
  usage: hostCommandUsage(SYNOPSIS.discover),
  options: { ...HOST_OPTIONS, json: { type: 'boolean' } },
});
export const METRICS_COMMAND = defineCommand({
  name: 'metrics',
  usage: hostCommandUsage(SYNOPSIS.metrics),
  options: {
    ...HOST_OPTIONS,
    service: { type: 'string', needs: `${ROLES.join(', ')} or a worker's name` },
    json: { type: 'boolean' },
  },
});

export type { CliIo } from './cli-io';

/** What tests inject: an app whose demo host they can fault, and a way to end `kv --watch` (Ctrl-C for people). */
export interface CliDeps extends CliAppDeps {
  signal?: AbortSignal;
  /** Home whose ~/.ssh the app reads (default PD_CONSOLE_SSH_HOME, else the real home). */
  sshHome?: string;
}

/**
 * Every word the CLI writes goes through here: text from hosts, servers, files and labels reaches the terminal with
 * its control characters shown as escapes (an escape sequence in a router's worker URL or a Prometheus error body
 * cannot set the window title or clear the screen) and URLs without userinfo. The CLI's own layout is newlines and
 * tabs only, which pass; the escapes are JSON's, so --json output stays valid JSON.
 */
function terminalIo(io: CliIo): CliIo {
  return {
    stdout: (s) => io.stdout(visibleLayout(s)),
    stderr: (s) => io.stderr(visibleLayout(s)),
    readStdin: io.readStdin,
  };
}

export async function runCli(argv: string[], rawIo: CliIo, deps: CliDeps = {}): Promise<number> {
  const io = terminalIo(rawIo);
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    io.stdout(USAGE);
    return cmd ? 0 : 2;
  }
  if (cmd === 'restart') return restartCommand(rest, io);
  if (cmd === 'open') return openCommand(rest, io);
  if (cmd === 'recording') return recordingCommand(rest, io);
  if (cmd === 'settings') return settingsCommand(rest, io);
  if (cmd === 'history') return historyCommand(rest, io, deps);
  if (cmd === 'logs') return logsCommand(rest, io, deps);
  if (cmd === 'export') return exportCommand(rest, io, deps);
  if (cmd === 'parse') {
    const r = parseCommand(rest, await io.readStdin());
    io.stdout(r.stdout);
    io.stderr(r.stderr);
    return r.exitCode;
  }
  if (cmd === 'status' || cmd === 'kv' || cmd === 'discover' || cmd === 'metrics')
    return hostCommand(cmd, rest, io, deps);
  io.stderr(`pd-console: unknown command ${JSON.stringify(cmd)}\n${USAGE}`);
  return 2;
}

type HostCommandOptions = typeof STATUS_COMMAND.options &
  typeof KV_COMMAND.options &
  typeof METRICS_COMMAND.options;

const HOST_COMMANDS = {
  status: STATUS_COMMAND,
  kv: KV_COMMAND,
  discover: DISCOVER_COMMAND,
  metrics: METRICS_COMMAND,
};

/** status, kv, discover and metrics: one host (or the fleet its router leads to), read once or watched. */
async function hostCommand(
  cmd: keyof typeof HOST_COMMANDS,
  argv: string[],
  io: CliIo,
  deps: CliDeps,
): Promise<number> {
  const spec: CommandSpec = HOST_COMMANDS[cmd];
  const usage = (why: string): number => {
    io.stderr(usageText(spec, why));
    return 2;
  };
  let flags: OptionValues<HostCommandOptions>;
  try {
    const parsed = parseCommandLine(spec, argv);
    if (parsed.help) {
      io.stdout(spec.usage);
      return 0;
    }
    if (parsed.positionals.length)
      return usage(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    // Each command declares a part of these; what it does not declare was refused above.
    flags = parsed.values as OptionValues<HostCommandOptions>;
  } catch (err) {
    if (err instanceof UsageError) return usage(err.message);
    throw err;
  }
  // The app names every service by its role and a number (fleet-config.ts): anything else names none.
  if (cmd === 'metrics' && !new RegExp(`^(${ROLES.join('|')})(-\\d+)?$`).test(flags.service ?? ''))
    return usage(`--service names the service: ${ROLES.join(', ')} or a worker's name (decode-1)`);
  const host = hostArg(flags.host);
  let eras: DemoEraOptions;
  let waitMs: number;
  let addHosts: HostConfig[];
  try {
    eras = demoEraOptions(flags['demo-era'], flags['demo-router']);
    if (host !== DEMO_HOST && (eras.era || eras.router))
      throw new Error('--demo-era and --demo-router apply to --host demo only');
    if (host === DEMO_HOST && flags['add-host'] !== undefined)
      throw new Error('--add-host applies to real hosts only: the demo host is one host');
    waitMs = waitOption(flags.wait);
    addHosts = addHostsOption(flags['add-host']);
  } catch (err) {
    return usage((err as Error).message);
  }
  const json = !!flags.json;
  const run = (target: string | HostConfig, simulated: boolean, homeDir?: string): Promise<number> =>
    withApp(deps, homeDir ? { homeDir } : {}, async (app) => {
      try {
        const summary = await openTarget(app, target, eras, addHosts);
        if (cmd === 'status') return await statusCommand(app, summary, { json, simulated, waitMs }, io);
        if (cmd === 'discover') return await discover(app, summary, json, io);
        if (cmd === 'metrics') return await metrics(app, summary, flags.service!, json, io);
        return await kv(app.core, summary, !!flags.watch, io, deps.signal);
      } catch (err) {
        const e = err as Error & { hint?: string };
        io.stderr(`pd-console ${cmd}: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
        return 1;
      }
    });
  if (host === DEMO_HOST) return run(host, true);
  if (host === DEMO_FLEET_HOST)
    // The simulated fleet, reached like a real one: its ssh config is the app's ssh home for this run.
    try {
      return await withDemoFleet(1, io, ({ origin, sshHome, hosts }) => {
        if (!json) io.stdout(`${demoFleetLine(hosts)}\n`);
        return run(origin, true, sshHome);
      });
    } catch (err) {
      io.stderr(`pd-console ${cmd}: ${(err as Error).message}\n`);
      return 1;
    }
  let origin: HostConfig;
  try {
    origin = hostFromArg(host);
  } catch (err) {
    return usage((err as Error).message);
  }
  return run(origin, false, deps.sshHome);
}

/** `--add-host a,b`: hosts a fleet status reads besides those the router leads to. */
function addHostsOption(v: string | undefined): HostConfig[] {
  if (v === undefined) return [];
  if (v.trim() === '') throw new Error(`--add-host needs hosts, comma-separated (${HOST_SPEC_HELP})`);
  return v.split(',').map((x) => hostFromArg(x.trim()));
}

const DEFAULT_WAIT_S = 3;
const MAX_WAIT_S = 300;

/** `--wait S`: how many seconds of scrapes the rates of `status` span at least. */
function waitOption(v: string | undefined): number {
  if (v === undefined) return DEFAULT_WAIT_S * 1000;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > MAX_WAIT_S)
    throw new Error(`--wait needs a number of seconds from 0 to ${MAX_WAIT_S}, got ${JSON.stringify(v)}`);
  return n * 1000;
}

/** Waits for the first observation that has systemd state and, where configured, a scrape attempt. */
function nextObservation(
  core: Core,
  deploymentId: string,
  timeoutMs = 20_000,
  signal?: AbortSignal,
): Promise<ServiceObservation[] | null> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      core.off('observation', on);
      signal?.removeEventListener('abort', aborted);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no complete observation within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const aborted = (): void => {
      done();
      resolve(null);
    };
    const on = (o: { deploymentId: string; services: ServiceObservation[] }): void => {
      if (o.deploymentId !== deploymentId || !o.services.every((s) => s.systemd || s.systemdError)) return;
      done();
      resolve(o.services);
    };
    if (signal?.aborted) return aborted();
    signal?.addEventListener('abort', aborted);
    core.on('observation', on);
  });
}

/**
 * Why a service has no figure, in the observation's own words: the scrape failed or hangs (the monitor says
 * which endpoint and how long it has waited), no KV gauge, or systemd unreadable. The role prefix is dropped
 * because the CLI prints the role in front.
 */
function serviceProblem(s: ServiceObservation): string | null {
  if (s.metrics && !s.metrics.ok)
    return withoutRole(s, s.metrics.error) + (s.metrics.hint ? ` — ${s.metrics.hint}` : '');
  if (s.role !== 'router' && !s.kv && s.kvMissing) return s.kvMissing.reason;
  if (s.systemdError) return withoutRole(s, s.systemdError);
  return null;
}

/** `since`: when this service's figure went missing, in a watch (a hung scrape is retried, so its wait restarts). */
function kvText(s: ServiceObservation, link: LinkWatch, since?: number): string {
  if (!s.kv) {
    if (!link.up) return 'n/a (no link)';
    const when = since === undefined ? '' : ` since ${new Date(since).toISOString().slice(11, 19)} UTC`;
    return `n/a${when} (${serviceProblem(s) ?? 'no KV figure'})`;
  }
  const pct = (s.kv.ratio * 100).toFixed(1);
  return `${pct} % (${s.kv.usedTokens.toLocaleString('en-US')} / ${s.kv.capacityTokens.toLocaleString('en-US')} tokens, from ${s.kv.source})`;
}

/** One line per observation; a lost link is named with when it went and which reconnect attempt is next. */
async function kv(
  core: Core,
  summary: DeploymentSummary,
  watch: boolean,
  io: CliIo,
  signal?: AbortSignal,
): Promise<number> {
  const link = new LinkWatch(core, summary.deployment.id);
  io.stdout(
    `${oneLine(summary.host.label)}: KV cache of prefill and decode${watch ? ', every second' : ''}\n`,
  );
  // Each server as the verdict and the screens name it: by its role where it is its role's only one.
  const names = new Map(
    (fleetWorkersOf(summary.deployment.services) ?? []).map((w) => [w.id, workerShortName(w)]),
  );
  const nameOf = (s: ServiceObservation): string => names.get(serviceId(s)) ?? s.role;
  try {
    const missingSince = new Map<string, number>();
    for (;;) {
      const services = await nextObservation(core, summary.deployment.id, 20_000, signal);
      if (!services) return 0;
      const now = core.now;
      const servers = services.filter((s) => s.role !== 'router');
      for (const s of servers) {
        const name = nameOf(s);
        if (s.kv) missingSince.delete(name);
        else if (!missingSince.has(name)) missingSince.set(name, now);
      }
      const figures = servers
        .map((s) => {
          const name = nameOf(s);
          return `${name}: ${kvText(s, link, watch ? missingSince.get(name) : undefined)}`;
        })
        .join('   ');
      const linkNote = link.connected ? '' : `${link.text(core.now)}   `;
      io.stdout(`${oneLine(`${new Date(core.now).toISOString()}  ${linkNote}${figures}`)}\n`);
      // A failed link is not retried: watching on would repeat the same line forever.
      if (!watch || link.failed) return servers.some((s) => s.kv) ? 0 : 1;
    }
  } finally {
    link.dispose();
  }
}

async function discover(app: App, summary: DeploymentSummary, json: boolean, io: CliIo): Promise<number> {
  const r = await app.handlers.discover({ deploymentId: summary.deployment.id });
  if (json) {
    io.stdout(JSON.stringify({ simulated: isSimulated(summary.host), ...r }, null, 2) + '\n');
  } else {
    io.stdout(`${oneLine(summary.host.label)}: ${r.found.length} SGLang unit(s) found\n`);
    for (const s of r.proposal.services)
      io.stdout(
        `  ${oneLine(`${s.role.padEnd(8)} ${s.unit.padEnd(30)} api ${s.apiUrl}  metrics ${s.metricsUrl ?? '(none)'}${s.gpus?.length ? `  GPUs ${s.gpus.join(',')}` : ''}`)}\n`,
      );
    for (const d of r.diagnostics)
      io.stdout(
        `  ${d.severity.toUpperCase()}: ${oneLine(d.message)}${d.fix ? `\n    fix: ${oneLine(d.fix)}` : ''}\n`,
      );
    for (const c of r.needsOperatorChoice)
      io.stdout(`  CHOOSE: ${oneLine(`${c.role} could be ${c.units.join(' or ')}; proposed ${c.chosen}`)}\n`);
  }
  return r.diagnostics.some((d) => d.severity === 'error') ? 1 : 0;
}

/** Unknown family names listed in the human output; the rest are counted (--json has all). */
const UNKNOWN_SHOWN = 20;

/**
 * The service `--service` names: a service id (`decode-1`), or a role that has one service. A role of several
 * is refused with their names: reading one of them at random would be a guess.
 */
function namedService(summary: DeploymentSummary, name: string): ServiceConfig {
  const { services } = summary.deployment;
  const byId = services.find((s) => serviceId(s) === name);
  if (byId) return byId;
  const ofRole = services.filter((s) => s.role === name);
  if (ofRole.length === 1) return ofRole[0];
  if (ofRole.length > 1)
    throw new Error(
      `${name}: this deployment has ${ofRole.length} ${name} workers (${ofRole.map(serviceId).join(', ')}); name one with --service`,
    );
  throw new Error(`no service "${name}": this deployment's are ${services.map(serviceId).join(', ')}`);
}

async function metrics(
  app: App,
  summary: DeploymentSummary,
  name: string,
  json: boolean,
  io: CliIo,
): Promise<number> {
  const service = namedService(summary, name);
  const id = serviceId(service);
  const scrapes = watchScrapes(app.core, summary.deployment.id);
  try {
    // The first scrape arrives with the first observation.
    if (!(await nextObservation(app.core, summary.deployment.id))) return 1;
    const inv = await app.handlers.getMetricsInventory({ deploymentId: summary.deployment.id, service: id });
    const exp = scrapes.last(id);
    const era = exp ? readEra(service.role, exp) : null;
    const simulated = isSimulated(summary.host);
    const hostOf = summary.hosts?.find((h) => h.host.id === service.hostId)?.host ?? summary.host;
    const host = oneLine(hostOf.label);
    if (json) io.stdout(JSON.stringify({ simulated, ...inv, ...era }, null, 2) + '\n');
    else if (inv.unavailable) io.stdout(`${host}: ${id}: no metrics: ${oneLine(inv.unavailable)}\n`);
    else {
      io.stdout(`${host}: ${id} ${oneLine(String(inv.url))}: ${familiesText(inv.families.length)}\n`);
      if (era) {
        io.stdout(`  era: ${era.era ?? 'not recognised'} — ${era.because}\n`);
        for (const m of era.missing) io.stdout(`  missing: ${m.family} — ${m.addedBy}\n`);
        if (era.unknown.length > 0) {
          const n = era.unknown.length;
          io.stdout(`  ${familiesText(n)} ${NOT_UNDERSTOOD}:\n`);
          for (const n of era.unknown.slice(0, UNKNOWN_SHOWN)) io.stdout(`    ${n}\n`);
          if (era.unknown.length > UNKNOWN_SHOWN)
            io.stdout(`    … and ${era.unknown.length - UNKNOWN_SHOWN} more (all with --json)\n`);
        }
        io.stdout(`  not used by PD Console: ${familiesText(era.notUsed.length)} (names with --json)\n`);
        if (era.otherExporters.length > 0)
          io.stdout(
            `  other exporters on this endpoint (not SGLang): ${familiesText(era.otherExporters.length)} (names with --json)\n`,
          );
      }
      for (const f of inv.families)
        io.stdout(
          `  ${f.name.padEnd(52)} ${f.type.padEnd(10)} ${String(f.series).padStart(4)} series  ${String(f.lastValue)}\n`,
        );
    }
    return inv.unavailable ? 1 : 0;
  } finally {
    scrapes.dispose();
  }
}

async function readAll(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Entry for the `pd-console` bin and `npm run cli`. */
export function cliMain(): void {
  // `status --watch`, `kv --watch` and the like keep a core running for as long as the operator looks.
  tuneGarbageCollector();
  void runCli(process.argv.slice(2), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    readStdin: readAll,
  }).then((code) => process.exit(code));
}

if (typeof require !== 'undefined' && require.main === module) cliMain();

function familiesText(n: number): string {
  return `${n} ${n === 1 ? 'family' : 'families'}`;
}
