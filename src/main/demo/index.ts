// The demo host: a simulated 8-GPU SGLang PD host (prefill on GPUs 0–3, decode on 4–7, a router in front)
// that the app reaches through its real SSH client. It is the app's embedded default ("Open demo
// deployment") and the fixture of most tests.
import type { DeploymentConfig } from '@shared/domain';
import { systemClock, type Clock } from '../core/clock';
import type { CommandResult } from './commands/emulate';
import { DemoHttpServers } from './http';
import { generateDemoKeys } from './keys';
import { DemoSimulation, type DemoEra, type RouterEra } from './simulation';
import { DEMO_PASSWORD, DemoSshServer } from './ssh-server';
import { PORTS, type ServerRole } from './units';
import type { DemoChannelLog } from './channel-log';
import { installDemoPrometheus, type DemoPrometheusOption } from './prometheus-unit';

export type {
  DemoEra,
  RouterEra,
  FaultName,
  DemoSnapshot,
  UnitSnapshot,
  KvTruth,
  GpuReading,
} from './simulation';
export { DemoSimulation, FAULT_NAMES, FAULT_SCOPES, KV_CAPACITY } from './simulation';
export { emulateCommand, runCommand, type CommandResult } from './commands/emulate';
export type { CommandIO } from './commands/context';
export type { DemoChannelLog, ExecEntry } from './channel-log';
export type { DemoPrometheusOption } from './prometheus-unit';
export { handleHttp, DemoHttpServers, DEMO_HTTP_PORTS } from './http';
export { DEMO_ERAS, ROUTER_ERAS } from './eras';
export { PORTS as DEMO_PORTS, HOSTNAME as DEMO_HOSTNAME, MODEL_NAME as DEMO_MODEL_NAME } from './units';
export { DEMO_PASSWORD } from './ssh-server';
export {
  startDemoFleet,
  launchDemoFleet,
  type DemoFleet,
  type DemoFleetHost,
  type DemoFleetOptions,
} from './fleet';
export {
  maxWorkersDownAtOnce,
  type FleetTruth,
  type FleetWorkerTruth,
  type FleetUnitTruth,
} from './fleet-truth';
export type { FleetSshFiles } from './fleet-ssh-config';
export { FLEET_HOSTS, FLEET_PORTS, type FleetHostName } from './topology';
export type { UnitTransition } from './simulation';
export { DemoMachine, machineOf } from './machine';
export type { CommandResult as DemoCommandResult };

export interface DemoHostOptions {
  /** All simulation time comes from it. Default systemClock. */
  clock?: Clock;
  /** SGLang server metric era (E1…E4, see simulation.ts). Default 'E4' (newest). */
  era?: DemoEra;
  /** Router era. Default 'smg-1.5' (newest smg without --engine-metrics). */
  routerEra?: RouterEra;
  /** >1 runs decode with DP attention: one scheduler series per dp_rank. Default 1. */
  dpRanks?: number;
  /** A decode server's model load (DemoSimulationOptions.modelLoadMs). Default 90 s. */
  modelLoadMs?: number;
  /** Those servers run without --enable-metrics: /metrics 404, ExecStart without the flag. */
  metricsDisabled?: Array<'prefill' | 'decode'>;
  /** SSH user name accepted besides root. Default 'operator'. */
  user?: string;
  /** Seed of the load model and every other random draw. */
  seed?: number;
  /** Also listen the simulated HTTP ports on real 127.0.0.1 ports (for a real sshd fixture): see httpPorts. */
  listenHttp?: boolean;
  /** Simulated past at start: the services started this long ago. Default 45 min. */
  historyMs?: number;
  /** Adds Debian's prometheus.service whose listen port forwards to a real Prometheus (prometheus-unit.ts). */
  prometheus?: DemoPrometheusOption;
}

export interface DemoHost {
  host: '127.0.0.1';
  port: number;
  /** Raw SSH public host key blob (what ssh2's hostVerifier receives). */
  hostKeyPublic: Buffer;
  /** "ssh-ed25519 AAAA… demo-host": for a known_hosts line. */
  hostKeyLine: string;
  /** OpenSSH-format ed25519 private key the server accepts (publickey auth). */
  clientPrivateKey: string;
  /** authorized_keys line of clientPrivateKey. */
  clientPublicKeyLine: string;
  username: string;
  /** Password auth also works with this password. */
  password: string;
  sim: DemoSimulation;
  /** Simulated loopback port → real 127.0.0.1 port; empty unless listenHttp. */
  httpPorts: Record<number, number>;
  /** The deployment this host runs, in the app's config shape. */
  deployment: Omit<DeploymentConfig, 'id'>;
  /** Every SSH channel clients opened (exec command lines, direct-tcpip count). */
  channels: DemoChannelLog;
  stop(): Promise<void>;
}

/** The demo host's deployment in the app's config shape (services, units, endpoints, GPUs). */
export function demoDeployment(
  metricsDisabled: ReadonlyArray<ServerRole> = [],
): Omit<DeploymentConfig, 'id'> {
  const server = (role: ServerRole): DeploymentConfig['services'][number] => {
    const port = role === 'prefill' ? PORTS.prefill : PORTS.decode;
    const base = `http://127.0.0.1:${port}`;
    return {
      role,
      hostId: 'demo',
      unit: `sglang-${role}.service`,
      apiUrl: base,
      ...(metricsDisabled.includes(role) ? {} : { metricsUrl: `${base}/metrics` }),
      healthUrl: `${base}/health`,
      gpus: role === 'prefill' ? [0, 1, 2, 3] : [4, 5, 6, 7],
    };
  };
  return {
    name: 'Demo PD deployment (Qwen3-32B)',
    services: [
      server('prefill'),
      server('decode'),
      {
        role: 'router',
        hostId: 'demo',
        unit: 'sglang-router.service',
        apiUrl: `http://127.0.0.1:${PORTS.routerApi}`,
        metricsUrl: `http://127.0.0.1:${PORTS.routerMetrics}/metrics`,
        healthUrl: `http://127.0.0.1:${PORTS.routerApi}/health`,
      },
    ],
  };
}

export async function startDemoHost(opts: DemoHostOptions = {}): Promise<DemoHost> {
  const clock = opts.clock ?? systemClock;
  const username = opts.user ?? 'operator';
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(username))
    throw new RangeError(`demo host: "${username}" is not a valid user name`);
  const sim = new DemoSimulation({
    clock,
    era: opts.era,
    routerEra: opts.routerEra,
    dpRanks: opts.dpRanks,
    modelLoadMs: opts.modelLoadMs,
    metricsDisabled: opts.metricsDisabled,
    seed: opts.seed,
    historyMs: opts.historyMs,
  });
  if (opts.prometheus) installDemoPrometheus(sim, opts.prometheus);
  const keys = generateDemoKeys();
  const http = new DemoHttpServers(sim);
  const ssh = new DemoSshServer({ sim, keys, users: new Set([username, 'root']), http });
  const port = await ssh.listen(0);
  let httpPorts: Record<number, number> = {};
  if (opts.listenHttp) {
    httpPorts = await http.listen();
    sim.httpPorts = httpPorts;
  }
  let stopped: Promise<void> | null = null;
  return {
    host: '127.0.0.1',
    port,
    hostKeyPublic: keys.hostKeyPublic,
    hostKeyLine: keys.hostPublicKeyLine,
    clientPrivateKey: keys.clientPrivateKey,
    clientPublicKeyLine: keys.clientPublicKeyLine,
    username,
    password: DEMO_PASSWORD,
    sim,
    httpPorts,
    deployment: demoDeployment(opts.metricsDisabled ?? []),
    channels: ssh.channels,
    stop: () =>
      (stopped ??= Promise.all([sim.stopFaultTimers(), ssh.close(), http.close()]).then(() => undefined)),
  };
}
