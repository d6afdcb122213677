// `pd-console`: the same core for terminals and scripts.
import type { App } from '../compose';
import type { Core } from '../core/core';
import { ROLES, type Role } from '@shared/domain';
import type { DeploymentSummary, HostConfig, ServiceObservation } from '@shared/domain';
import { parseCommand } from './parse-command';
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
import { fleetStatus, showsAsFleet } from './fleet-status';
import { DEMO_FLEET_HOST, demoFleetLine, withDemoFleet } from './demo-fleet';
import { withApp, type CliAppDeps } from './cli-app';
import type { CliIo } from './cli-io';
import { openCommand } from './open-command';
import { recordingCommand } from './recording-command';
import { FORMAT_MINOR_VERSION } from '../core/store/recording/format';
import { LinkWatch } from './link-status';
import { settingsCommand } from './settings-command';
import { historyCommand } from './history-command';
import { logsCommand } from './logs-command';
import { exportCommand } from './export-command';
import { demoEraHelp, demoEraOptions, type DemoEraOptions } from './demo-options';
import { headlineOf } from './headline';
import { verdictText } from './verdict-text';
import { readEra, serverEraOf } from './era-of';
import { NOT_UNDERSTOOD } from '@shared/signals/family-classes';
import { tuneGarbageCollector } from '../gc-tuning';
import type { Exposition } from '../core/probes/exposition/types';
import { serviceCondition, type UnitCondition } from '@shared/unit-condition';

/** The first line of each host command's usage: the line `pd-console --help` lists it under. */
const SYNOPSIS = {
  status: 'status [--host H] [--json] [--wait S] [--add-host H2,H3]',
  kv: 'kv [--host H] [--watch]',
  discover: 'discover [--host H] [--json]',
  metrics: 'metrics --service prefill|decode|router [--host H] [--json]',
} as const;

const USAGE = `usage: pd-console <command> [options]

commands:
  ${SYNOPSIS.status}
                                 on a real host: follows the router to every worker's host (each worker URL's
                                 host is found as the ssh alias that resolves to it; --add-host adds hosts
                                 by hand, e.g. a multi-node worker's other nodes) and lists each worker's
                                 host, unit(s), state, health and exact KV, per-role totals, and every worker
                                 it cannot place with the line to add; a one-host 1P1D deployment, and the
                                 demo, get the classic view:
                                 systemd state, health and KV usage of prefill, decode and router, the SSH
                                 link (since when it is up, or lost and which reconnect attempt is next), and
                                 the headline figures: router requests/s, error share, latency p50/p99; servers'
                                 running and queued requests, generation tokens/s — rates over the scrapes of
                                 at least S seconds (default 3); a missing figure says which metric it needs.
                                 Each unit's condition is named as systemd means it, with the evidence:
                                 "crash-looping: restart 4, exit status 1 (ImportError: …)", "failed (exit
                                 status 1, Restart=no)", "running, model loading (3 min, last load took 4 min)".
                                 Waits up to 10 s for every probe's first answer.
                                 exit status: 0 every service serving; 3 something is not (loading, failed,
                                 crash-looping, stopped, unreachable); 1 the command failed; 2 bad usage
  ${SYNOPSIS.kv.padEnd(31)}KV-cache usage of prefill and decode (every second with --watch); where a
                                 figure is missing it says why: the link, or the endpoint and how long it waits
  ${SYNOPSIS.discover.padEnd(31)}find the SGLang units on the host; say what is missing and what to change
  ${SYNOPSIS.metrics}
                                 every metric family the endpoint serves: type, series, last value; the
                                 server or router version it recognises, the headline families missing and
                                 what adds them, and how many families PD Console does not use
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
    service: { type: 'string', needs: ROLES.join(', ') },
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

/** Conditions in which a service's endpoint is expected to answer: only then is a failed scrape news. */
const SCRAPED_CONDITIONS = new Set<UnitCondition['kind']>(['serving', 'not-answering', 'unknown']);

/** A service's condition as systemd, /health and its journal tell it; unknown while the link is down. */
function conditionOf(
  s: ServiceObservation,
  all: readonly ServiceObservation[],
  now: number,
  linkUp: boolean,
): UnitCondition {
  if (!linkUp)
    return {
      kind: 'unknown',
      tone: 'muted',
      text: 'unknown — no link to the host',
      since: null,
      restarts: 0,
    };
  return serviceCondition(s, all, now);
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
  if (cmd === 'metrics' && !ROLES.includes(flags.service as Role))
    return usage(`--service must be one of ${ROLES.join(', ')}`);
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
        if (cmd === 'status') {
          const fleet = summary.fleet;
          if (fleet && showsAsFleet(fleet))
            return await fleetStatus(app, { ...summary, fleet }, { json, simulated }, io);
          return await status(app, summary, json, waitMs, io);
        }
        if (cmd === 'discover') return await discover(app, summary, json, io);
        if (cmd === 'metrics') return await metrics(app, summary, flags.service as Role, json, io);
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
  const withoutRole = (m: string): string => m.replace(new RegExp(`^${s.role}(?: \\([^)]*\\))?: `), '');
  if (s.metrics && !s.metrics.ok)
    return withoutRole(s.metrics.error) + (s.metrics.hint ? ` — ${s.metrics.hint}` : '');
  if (s.role !== 'router' && !s.kv && s.kvMissing) return s.kvMissing.reason;
  if (s.systemdError) return withoutRole(s.systemdError);
  return null;
}

/** Scrape times per role of one deployment, and the latest exposition, from the core's scrape hook. */
function watchScrapes(core: Core, deploymentId: string) {
  const times = new Map<Role, number[]>();
  const last = new Map<Role, Exposition>();
  const on = (e: { deploymentId: string; ts: number; role: Role; exposition: Exposition }): void => {
    if (e.deploymentId !== deploymentId) return;
    const t = times.get(e.role) ?? [];
    t.push(e.ts);
    times.set(e.role, t);
    last.set(e.role, e.exposition);
  };
  core.hooks.on('scrape', on);
  return {
    times: (role: Role): number[] => times.get(role) ?? [],
    last: (role: Role): Exposition | undefined => last.get(role),
    dispose: () => core.hooks.off('scrape', on),
  };
}

/**
 * Observations until every service that is being scraped has two scrapes at least `waitMs` apart (rates
 * need two), or until `waitMs` + 20 s have passed: then what there is, with the reason for what is not.
 */
/** How long a one-shot status waits for every probe's first answer before printing what it has. */
const FIRST_ANSWERS_MS = 10_000;

async function observeForRates(
  core: Core,
  deploymentId: string,
  scrapes: ReturnType<typeof watchScrapes>,
  waitMs: number,
): Promise<ServiceObservation[] | null> {
  const deadline = core.now + waitMs + 20_000;
  const firstAnswers = core.now + FIRST_ANSWERS_MS;
  let services = await nextObservation(core, deploymentId);
  for (;;) {
    if (!services) return null;
    // Every probe has answered once (bounded): a slow host's first poll is late, not an answer.
    const answered =
      core.now >= firstAnswers ||
      services.every(
        (s) =>
          !s.systemdError?.includes('has not answered') &&
          !(s.metrics && !s.metrics.ok && s.metrics.error.includes('no answer yet')) &&
          s.health !== undefined &&
          s.evidence !== undefined,
      );
    const settled = services.every((s) => {
      if (!s.metrics?.ok) return true;
      const t = scrapes.times(s.role);
      return t.length >= 2 && t[t.length - 1] - t[0] >= waitMs;
    });
    if ((answered && settled) || core.now >= deadline) return services;
    services = await nextObservation(core, deploymentId, Math.max(1000, deadline - core.now)).catch(
      () => services,
    );
  }
}

async function status(
  app: App,
  summary: DeploymentSummary,
  json: boolean,
  waitMs: number,
  io: CliIo,
): Promise<number> {
  const core = app.core;
  const id = summary.deployment.id;
  const link = new LinkWatch(core, id);
  const scrapes = watchScrapes(core, id);
  try {
    const services = await observeForRates(core, id, scrapes, waitMs);
    if (!services) return 1;
    // Asked first: the figures below are then read in one go, their values and scrape times from the same scrapes.
    const { verdict } = await app.handlers.getDashboard({ deploymentId: id });
    // The dashboard ingested every scrape before the observation that followed it was pushed.
    const values = app.dashboard.store.latest(id);
    const notExposed = app.dashboard.store.notExposed(id);
    const headlines = new Map(
      services.map((s) => [
        s.role,
        headlineOf(s, {
          values,
          notExposed,
          scrapes: scrapes.times(s.role).length,
          metricsConfigured: !!summary.deployment.services.find((c) => c.role === s.role)?.metricsUrl,
          era: eraOfScrape(scrapes.last(s.role)),
        }),
      ]),
    );
    if (json) {
      const report = link.report();
      io.stdout(
        JSON.stringify(
          {
            host: summary.host.label,
            simulated: isSimulated(summary.host),
            deployment: summary.deployment.name,
            connection: report.state,
            link: report,
            services: services.map((s) => {
              const t = scrapes.times(s.role);
              const h = headlines.get(s.role)!;
              return {
                role: s.role,
                // The fields a fleet status gives each service, so scripts read both the same way.
                host: summary.host.alias ?? summary.host.label,
                unit: s.unit,
                url: summary.deployment.services.find((c) => c.role === s.role)?.apiUrl ?? null,
                activeState: s.systemd?.activeState ?? null,
                subState: s.systemd?.subState ?? null,
                condition: conditionOf(s, services, core.now, link.up),
                health: s.health ? (s.health.ok ? 'ok' : s.health.detail) : null,
                error: serviceProblem(s),
                ...(s.kv ? { kv: kvJson(s.kv) } : {}),
                signals: h.signals,
                ...(Object.keys(h.why).length > 0 ? { signalsWhy: h.why } : {}),
                // The scrapes the figures span: rates are the counters' change between the first and last.
                scrapes: { count: t.length, firstMs: t[0] ?? null, lastMs: t.at(-1) ?? null },
              };
            }),
            roles: singleHostRoles(services),
            unplaced: [],
            verdict,
          },
          null,
          2,
        ) + '\n',
      );
    } else {
      // The first line keeps its shape (host — link) for scripts that read it; which eras the demo runs is in the name.
      io.stdout(
        `${oneLine(summary.host.label)} — ${link.text(core.now)}\n${oneLine(summary.deployment.name)}\n`,
      );
      for (const s of services) {
        const state = s.systemd
          ? `${s.systemd.activeState}/${s.systemd.subState}`
          : `unknown (${link.up ? s.systemdError : 'no link'})`;
        const c = conditionOf(s, services, core.now, link.up);
        // Each service is one row: what came from the host inside it is kept to one line.
        io.stdout(
          `${s.role.padEnd(8)} ${oneLine(s.unit).padEnd(28)} ${oneLine(state).padEnd(20)} ${oneLine(c.text)}${s.kv ? `  KV ${oneLine(kvText(s, link))}` : ''}\n`,
        );
        if (link.up && c.nextStep) io.stdout(`         next: ${oneLine(c.nextStep)}\n`);
        // With the link down every probe fails for that one reason, which the first line already gives; a unit
        // that is not running (or still loading) has no endpoint to scrape, which its condition already says.
        if (!link.up || !SCRAPED_CONDITIONS.has(c.kind)) continue;
        if (s.metrics && !s.metrics.ok)
          io.stdout(
            `         metrics: ${oneLine(s.metrics.error)}${s.metrics.hint ? ` — ${oneLine(s.metrics.hint)}` : ''}\n`,
          );
        else {
          if (s.role !== 'router' && !s.kv && s.kvMissing)
            io.stdout(`         KV: ${oneLine(s.kvMissing.reason)}\n`);
          const h = headlines.get(s.role)!;
          io.stdout(`         ${headlineText(h.signals)}\n`);
          for (const [k, why] of Object.entries(h.why)) io.stdout(`         ${k}: n/a — ${oneLine(why)}\n`);
        }
      }
      io.stdout(verdictText(verdict));
    }
    return link.up && services.every((s) => conditionOf(s, services, core.now, true).kind === 'serving')
      ? 0
      : 3;
  } finally {
    scrapes.dispose();
    link.dispose();
  }
}

/** The per-role totals of `status --json` for a one-host deployment: one worker per role. */
function singleHostRoles(services: ServiceObservation[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of services) {
    if (s.role === 'router') continue;
    out[s.role] = {
      workers: 1,
      healthy: s.health?.ok ? 1 : 0,
      kv: {
        usedTokens: s.kv?.usedTokens ?? 0,
        capacityTokens: s.kv?.capacityTokens ?? 0,
        ratio: s.kv && s.kv.capacityTokens > 0 ? s.kv.usedTokens / s.kv.capacityTokens : null,
      },
    };
  }
  return out;
}

function eraOfScrape(exp: Exposition | undefined): ReturnType<typeof serverEraOf> {
  return exp ? serverEraOf(new Set(exp.families.map((f) => f.name))) : null;
}

/** KV figures as `status --json` gives them; `fullestRank` where the server has several DP ranks. */
function kvJson(kv: NonNullable<ServiceObservation['kv']>): Record<string, unknown> {
  return {
    usedTokens: kv.usedTokens,
    capacityTokens: kv.capacityTokens,
    ratio: kv.capacityTokens > 0 ? kv.usedTokens / kv.capacityTokens : null,
    source: kv.source,
    // The core names the fullest rank (kv.ts) only when there are several; the CLI does not recompute it.
    ...(kv.ranks && kv.ranks.length > 1 && kv.fullestRank ? { fullestRank: kv.fullestRank } : {}),
  };
}

function headlineText(signals: Record<string, number | null>): string {
  const f = (k: string, digits: number, unit = ''): string | null => {
    const v = signals[k];
    return v === undefined ? null : `${k} ${v === null ? 'n/a' : `${v.toFixed(digits)}${unit}`}`;
  };
  return [
    f('requestsPerSecond', 2),
    f('errorShare', 4),
    f('latencyP50Seconds', 3, ' s'),
    f('latencyP99Seconds', 3, ' s'),
    f('running', 0),
    f('queued', 0),
    f('generationTokensPerSecond', 1),
  ]
    .filter((x): x is string => x !== null)
    .join('  ');
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
  try {
    const missingSince = new Map<Role, number>();
    for (;;) {
      const services = await nextObservation(core, summary.deployment.id, 20_000, signal);
      if (!services) return 0;
      const now = core.now;
      for (const s of services) {
        if (s.kv) missingSince.delete(s.role);
        else if (!missingSince.has(s.role)) missingSince.set(s.role, now);
      }
      const figures = services
        .filter((s) => s.role !== 'router')
        .map((s) => `${s.role}: ${kvText(s, link, watch ? missingSince.get(s.role) : undefined)}`)
        .join('   ');
      const linkNote = link.connected ? '' : `${link.text(core.now)}   `;
      io.stdout(`${oneLine(`${new Date(core.now).toISOString()}  ${linkNote}${figures}`)}\n`);
      // A failed link is not retried: watching on would repeat the same line forever.
      if (!watch || link.failed) return services.some((s) => s.role !== 'router' && s.kv) ? 0 : 1;
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

async function metrics(
  app: App,
  summary: DeploymentSummary,
  role: Role,
  json: boolean,
  io: CliIo,
): Promise<number> {
  const scrapes = watchScrapes(app.core, summary.deployment.id);
  try {
    // The first scrape arrives with the first observation.
    if (!(await nextObservation(app.core, summary.deployment.id))) return 1;
    const inv = await app.handlers.getMetricsInventory({ deploymentId: summary.deployment.id, role });
    const exp = scrapes.last(role);
    const era = exp ? readEra(role, exp) : null;
    const simulated = isSimulated(summary.host);
    const host = oneLine(summary.host.label);
    if (json) io.stdout(JSON.stringify({ simulated, ...inv, ...era }, null, 2) + '\n');
    else if (inv.unavailable) io.stdout(`${host}: ${role}: no metrics: ${oneLine(inv.unavailable)}\n`);
    else {
      io.stdout(`${host}: ${role} ${oneLine(String(inv.url))}: ${familiesText(inv.families.length)}\n`);
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
