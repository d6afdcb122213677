// Composition root shared by every shell: builds the core with the demo host and the SSH resolver wired in.
import type { DeploymentConfig, HostConfig, Role } from '@shared/domain';
import type { ApiHandlers } from '@shared/contract';
import { join } from 'node:path';
import { DiscoveryService } from './core/services/discovery';
import { RecordingService } from './core/services/recording';
import { dataDir } from './paths';
import { Core, type CoreOptions } from './core/core';
import { acceleratedClock, systemClock, type Clock } from './core/clock';
import {
  startDemoFleet,
  startDemoHost,
  type DemoEra,
  type DemoFleet,
  type DemoSimulation,
  type RouterEra,
} from './demo';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { configRoots, createAliasIndex, defaultLookupAll } from './core/ssh/alias-addresses';
import {
  DEMO_ROUTER_ERA_LABEL,
  DEMO_SERVER_ERA_LABEL,
  type DemoRouterEra,
  type DemoServerEra,
} from '@shared/api/monitoring';
import type { ConnectConfig } from 'ssh2';
import { createSshResolver, resolveSshHost, type SecretStore } from './core/ssh/resolve-host';
import { refusingPrompts } from './core/ssh/prompts';
import { HostsService } from './core/services/hosts';
import { DashboardService } from './core/services/dashboard';
import { RestartService } from './core/services/restart';
import { RollService } from './core/services/roll';
import { rollDeploymentsOf } from './core/services/roll-deployments';
import { ReviewService } from './core/services/review';
import { SettingsService } from './core/services/settings';
import { HistoryService } from './core/services/history';
import { recordingHistory } from './core/prometheus/history-recordings';
import { PrometheusService } from './core/services/prometheus';
import { prometheusHistory } from './core/prometheus/history-provider';

export const APP_VERSION = '0.1.0';

/** The conventional single-host PD layout (sglang-metrics.md §4); used until discovery proposes better. */
export function standardDeployment(host: HostConfig): Omit<DeploymentConfig, 'id'> {
  return {
    name: `${host.label} PD deployment`,
    services: [
      {
        role: 'prefill',
        hostId: host.id,
        unit: 'sglang-prefill.service',
        apiUrl: 'http://127.0.0.1:30100',
        metricsUrl: 'http://127.0.0.1:30100/metrics',
        gpus: [0, 1, 2, 3],
      },
      {
        role: 'decode',
        hostId: host.id,
        unit: 'sglang-decode.service',
        apiUrl: 'http://127.0.0.1:30200',
        metricsUrl: 'http://127.0.0.1:30200/metrics',
        gpus: [4, 5, 6, 7],
      },
      {
        role: 'router',
        hostId: host.id,
        unit: 'sglang-router.service',
        apiUrl: 'http://127.0.0.1:30001',
        metricsUrl: 'http://127.0.0.1:29001/metrics',
        healthUrl: 'http://127.0.0.1:30001/readiness',
      },
    ],
  };
}

export interface App {
  core: Core;
  handlers: ApiHandlers;
  hosts: HostsService;
  /** Recorded sessions opened for review (the desktop menu's File → Open, the CLI's `open`). */
  review: ReviewService;
  /** The live deployments' session recordings (files under dataDir/recordings). */
  recording: RecordingService;
  /** Signal history and alerts (benchmarks fill its store with synthetic history through bench/support). */
  dashboard: DashboardService;
  /** Charts' history beyond the live store (Prometheus, recordings); setPrometheus wires discovery's answer. */
  history: HistoryService;
  /** The settings file (settings.json in the data folder) and what is in effect. */
  settings: SettingsService;
  /** The operator's Prometheus (discovery, coverage, exports); history takes its client from clientFor(). */
  prometheus: PrometheusService;
  /** Where recordings are exported to (browser mode serves its files as downloads). */
  exportDir: string;
  shutdown(): Promise<void>;
}

export type AppOptions = Pick<CoreOptions, 'shell' | 'autoOpenDemo' | 'intervalMs'> & {
  demoSpeed?: number;
  /** Metric eras the demo host runs when openDemo does not name one (--demo-era, --demo-router). */
  demoEra?: DemoServerEra;
  demoRouterEra?: DemoRouterEra;
  /** Data-parallel ranks of the demo's decode server (DP attention); default 1. */
  demoDpRanks?: number;
  /** How long the demo's decode servers take to load their model (--demo-model-load); default 90 s. */
  demoModelLoadMs?: number;
  /** Record sessions (default: on for the desktop app and browser mode, off for one-shot CLI commands). */
  record?: boolean;
  /** Where recordings, exports and the hosts file go; default dataDir(). */
  dataDir?: string;
  /** Keychain for remembered passphrases (Electron safeStorage); absent elsewhere. */
  secrets?: SecretStore;
  /** Home folder whose ~/.ssh is used (tests point it at a temp folder). */
  homeDir?: string;
  /** Starts the demo host some other way (benchmarks run it in its own process); default: in this process. */
  demoLauncher?: CoreOptions['demo'];
  /** The demo fleet's simulated time (tests stop it to compare with its ground truth); default demoSpeed × wall. */
  demoFleetClock?: Clock;
  /** Seed of the demo fleet's simulation (tests); default the simulation's own. */
  demoFleetSeed?: number;
};

/** Everything a shell needs: the core (also the event bus) and the full handler map for dispatch. */
export function createApp(opts: AppOptions): App {
  const dir = opts.dataDir ?? dataDir();
  // Read before anything starts: every feature begins with the saved settings. Its events go out on the core.
  const settings = new SettingsService(
    { emit: (event, state) => core.emit(event, state) },
    join(dir, 'settings.json'),
  );
  // The resolver asks the operator through the hosts service, which needs the core: bind it late.
  let resolver: ((host: HostConfig) => Promise<ConnectConfig>) | null = null;
  const sshHome = opts.homeDir ?? process.env.PD_CONSOLE_SSH_HOME;
  const core = createCore(
    opts,
    (host) => resolver!(host),
    (hostId) => settings.discoveryChoices(hostId),
    {
      discovery: {
        aliases: createAliasIndex({ homeDir: sshHome }),
        lookupAll: (n) => defaultLookupAll(n),
        configFile: configRoots({ homeDir: sshHome }).userConfig,
      },
    },
  );
  const hosts = new HostsService(core, join(dir, 'hosts.json'));
  resolver = createSshResolver({
    // One-shot CLI commands have nobody to ask: they refuse unknown keys and encrypted keys not in the agent.
    prompts: opts.shell === 'cli' ? refusingPrompts : hosts.prompts,
    secrets: opts.secrets,
    // PD_CONSOLE_SSH_HOME (tests, sandboxes): ~/.ssh is read from that folder, by `ssh -G` as for the operator.
    homeDir: sshHome,
    warn: (w) => core.emit('sshWarning', w),
  });
  if (opts.shell !== 'cli') hosts.watchNetwork();
  const dashboard = new DashboardService(core, { alerts: settings.cell('alerts') });
  const demoSim = (): DemoSimulation => {
    const sim = demoSims.get(core);
    if (!sim) throw new Error('the demo host is not running');
    return sim;
  };
  dashboard.attachDemoFaults({
    set: (fault, on, target, forMs) => demoSim().setFault(fault, on, target, forMs),
    states: () => demoSim().faultStates(),
  });
  const restart = new RestartService(core, {
    clockFor: (host) => deploymentClock(core, host),
    store: settings.cell('restart'),
  });
  const roll = new RollService(
    core,
    restart,
    rollDeploymentsOf(
      core.deployments,
      (host) => deploymentClock(core, host),
      (id) => restart.scrapesOf(id),
    ),
  );
  // A restart or roll by this console makes the alerts of the units it restarts expected, not notified.
  dashboard.attachRestarts((id) => restart.running.restarting(id));
  const discovery = new DiscoveryService(core, (hostId) => settings.discoveryChoices(hostId));
  const prometheus = new PrometheusService(core, { secrets: opts.secrets });
  // Recording on/off is the operator's saved choice, unless this run says otherwise (one-shot CLI commands
  // record nothing).
  const record = opts.record ?? (opts.shell === 'cli' ? false : undefined);
  const exportDir = join(dir, 'exports');
  const recording = new RecordingService(core, {
    dir: join(dir, 'recordings'),
    exportDir,
    appVersion: APP_VERSION,
    settings: record === undefined ? {} : { enabled: record },
    store: settings.cell('recording'),
    clockFor: (host) => deploymentClock(core, host),
  });
  const review = new ReviewService(core, {
    store: recording.store,
    cacheDir: join(dir, 'cache', 'review'),
    recentFile: join(dir, 'review-recent.json'),
    recordingIds: () => recording.store.activeIds(),
  });
  const history = new HistoryService({
    deployments: core.deployments,
    live: (q) => dashboard.store.getSeries(q),
    recordings: recordingHistory({
      list: () => recording.store.list(),
      activeIds: () => recording.store.activeIds(),
    }),
  });
  // Beyond the live store, charts read the Prometheus discovery found (or the operator gave) for the deployment.
  history.setPrometheus(prometheusHistory(prometheus, () => Date.now()));
  // The recordings open for review are read like the live deployments: services resolve either through the
  // core's registry, and only the live ones can be acted on (the registry's `live()`).
  core.deployments.addRecordings(review);
  const recordingHandlers = recording.handlers();
  const handlers: ApiHandlers = {
    ...core.handlers(),
    ...dashboard.handlers(),
    ...restart.handlers(),
    ...roll.handlers(),
    ...discovery.handlers(),
    ...recordingHandlers,
    // An open review of the session shows a new note at once; a deleted session's review cache goes with it.
    annotateSession: async (a) => {
      await recordingHandlers.annotateSession(a);
      await review.sessionAnnotated(a.id);
    },
    deleteSession: async (a) => {
      await recordingHandlers.deleteSession(a);
      await review.sessionDeleted(a.id);
    },
    ...hosts.handlers(),
    ...review.handlers(),
    ...settings.handlers(),
    ...history.handlers(),
    ...prometheus.handlers(),
  };
  return {
    core,
    handlers,
    hosts,
    review,
    recording,
    dashboard,
    history,
    settings,
    prometheus,
    exportDir,
    // Every service's timers, followers, uploads and files end here, in reverse order of construction:
    // the deployments close first (so the recorder sees their last data), then the recorder closes its files.
    shutdown: () =>
      disposeAll([
        () => hosts.stop(),
        () => core.shutdown(),
        () => dashboard.stop(),
        () => prometheus.dispose(),
        () => roll.dispose(),
        () => restart.dispose(),
        () => recording.shutdown(),
        () => review.shutdown(),
      ]),
  };
}

/**
 * Runs every disposer even when one fails (a failed recording close must not leave SSH links open), in the
 * order given; the first failure is rethrown once all have run.
 */
async function disposeAll(disposers: Array<() => void | Promise<void>>): Promise<void> {
  const failures: unknown[] = [];
  for (const d of disposers) {
    try {
      await d();
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length > 0) throw failures[0];
}

// The contract's era names and the demo's must be the same lists: these fail to compile otherwise.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const ERA_LISTS_AGREE: Same<DemoEra, DemoServerEra> & Same<RouterEra, DemoRouterEra> = true;

const demoClocks = new WeakMap<Core, Clock>();
const demoSims = new WeakMap<Core, DemoSimulation>();
const demoFleets = new WeakMap<Core, DemoFleet>();

/** The running demo fleet, for tests and benchmarks that read its ground truth or take a host down. */
export function demoFleetOf(core: Core): DemoFleet | undefined {
  return demoFleets.get(core);
}

/** The running demo host's simulation, for tests and benchmarks that inject faults or journal lines. */
export function demoSimOf(core: Core): DemoSimulation | undefined {
  return demoSims.get(core);
}

/** The clock a deployment lives on: the demo host's simulated time for the demo, wall time otherwise. */
export function deploymentClock(core: Core, host: HostConfig): Clock {
  return (host.kind === 'demo' && demoClocks.get(core)) || systemClock;
}

export function createCore(
  opts: AppOptions,
  resolveSsh: CoreOptions['resolveSsh'] = resolveSshHost,
  discoveryChoices: (hostId: string) => Partial<Record<Role, string>> = () => ({}),
  fleetEnvironment?: CoreOptions['fleetEnvironment'],
): Core {
  const core: Core = new Core({
    ...opts,
    version: APP_VERSION,
    clock: systemClock,
    demo:
      opts.demoLauncher ??
      (async ({ speed, era, router }) => {
        const clock = acceleratedClock(opts.demoSpeed ?? speed);
        demoClocks.set(core, clock);
        const demo = await startDemoHost({
          clock,
          era: era ?? opts.demoEra,
          routerEra: router ?? opts.demoRouterEra,
          dpRanks: opts.demoDpRanks,
          modelLoadMs: opts.demoModelLoadMs,
        });
        demoSims.set(core, demo.sim);
        const host: HostConfig = { id: 'demo', label: 'demo GPU host (simulated)', kind: 'demo' };
        const d = standardDeployment(host);
        return {
          host: demo.host,
          port: demo.port,
          username: demo.username,
          clientPrivateKey: demo.clientPrivateKey,
          hostKeyPublic: demo.hostKeyPublic,
          deployment: {
            ...d,
            name: `Demo: Qwen3-32B PD on 8×H100 · ${DEMO_SERVER_ERA_LABEL[demo.sim.era]} · ${DEMO_ROUTER_ERA_LABEL[demo.sim.routerEra]}`,
          },
          era: demo.sim.era,
          router: demo.sim.routerEra,
          stop: () => demo.stop(),
        };
      }),
    demoFleet: async ({ speed, era, router }) => {
      const clock = opts.demoFleetClock ?? acceleratedClock(opts.demoSpeed ?? speed);
      const fleet = await startDemoFleet({
        clock,
        seed: opts.demoFleetSeed,
        era: era ?? opts.demoEra,
        routerEra: router ?? opts.demoRouterEra,
        dpRanks: opts.demoDpRanks,
        modelLoadMs: opts.demoModelLoadMs,
      });
      // The fleet is reached as an operator's would be: through an ssh config naming its hosts, written to a
      // home of its own (removed when the demo closes) so the operator's ~/.ssh is neither read nor touched.
      const home = await mkdtemp(join(os.tmpdir(), 'pd-demo-fleet-'));
      const stop = async (): Promise<void> => {
        await fleet.stop();
        await rm(home, { recursive: true, force: true });
      };
      try {
        const files = await fleet.writeSshConfig(home);
        demoClocks.set(core, clock);
        demoSims.set(core, fleet.sim);
        demoFleets.set(core, fleet);
        const demoResolver = createSshResolver({
          prompts: refusingPrompts,
          homeDir: files.home,
        });
        const entry = fleet.entry.name;
        return {
          era: fleet.sim.era,
          router: fleet.sim.routerEra,
          origin: { id: entry, label: `${entry} (demo fleet, simulated)`, kind: 'demo', alias: entry },
          env: {
            // The fleet's hosts are demo hosts reached over real SSH: resolved from its config like ssh hosts.
            resolve: (host) => demoResolver({ ...host, kind: 'ssh' }),
            discovery: {
              aliases: createAliasIndex({ homeDir: files.home }),
              lookupAll: (n) => defaultLookupAll(n),
              configFile: files.configFile,
            },
          },
          name: `Demo fleet: 2 prefill + 3 decode on 3 hosts · ${DEMO_SERVER_ERA_LABEL[fleet.sim.era]} · ${DEMO_ROUTER_ERA_LABEL[fleet.sim.routerEra]}`,
          fallback: fleet.fallback,
          stop,
        };
      } catch (err) {
        await stop();
        throw err;
      }
    },
    resolveSsh,
    fleetEnvironment,
    discoveryChoices,
    defaultDeployment: standardDeployment,
  });
  return core;
}
