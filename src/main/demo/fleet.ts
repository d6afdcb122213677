// The demo fleet: three simulated GPU hosts (gpu-a 127.0.0.2, gpu-b .3, gpu-c .4), each its own SSH server
// with its own host key, all accepting one client key, sharing one simulated world (topology.ts): a router
// and two prefill workers on gpu-a, two decode workers on gpu-b, and a decode worker spanning gpu-b and
// gpu-c. `shape` lays out any other size (the scale benchmark runs 8 hosts, 8 prefill, 24 decode on
// 127.0.0.2…9; see scaledFleetTopology). Where 127.0.0.2–.4 cannot be bound (macOS by default) every host listens on 127.0.0.1 with its
// own SSH port; the HTTP ports already differ per host, so the simulated network still tells them apart.
import net from 'node:net';
import { acceleratedClock, systemClock, type Clock } from '../core/clock';
import type { DemoChannelLog } from './channel-log';
import type { DemoEra, RouterEra } from './eras';
import { writeFleetSshFiles, type FleetSshFiles } from './fleet-ssh-config';
import { fleetTruth, maxWorkersDownAtOnce, type FleetTruth } from './fleet-truth';
import { DemoHttpServers } from './http';
import { ed25519, generateDemoKeys } from './keys';
import { machineOf, type DemoMachine } from './machine';
import { DemoSimulation, type FaultName, type UnitTransition } from './simulation';
import { DEMO_PASSWORD, DemoSshServer } from './ssh-server';
import {
  DEFAULT_FLEET_SHAPE,
  FLEET_PORTS,
  fleetAddresses,
  fleetHostNames,
  fleetShapeProblem,
  fleetTopology,
  type FleetHostName,
  type FleetShape,
} from './topology';
import type { ServerRole } from './units';

export interface DemoFleetOptions {
  /** All simulation time comes from it. Default systemClock. */
  clock?: Clock;
  era?: DemoEra;
  routerEra?: RouterEra;
  /** >1 runs decode-0 with DP attention. Default 1. */
  dpRanks?: number;
  /** A decode server's model load (DemoSimulationOptions.modelLoadMs). Default 90 s. */
  modelLoadMs?: number;
  metricsDisabled?: ServerRole[];
  /** SSH user name accepted besides root. Default 'operator'. */
  user?: string;
  seed?: number;
  /** Simulated past at start. Default 45 min. */
  historyMs?: number;
  /** Also listen each host's HTTP ports on real ephemeral ports of its address: see DemoFleetHost.httpPorts. */
  listenHttp?: boolean;
  /** Use 127.0.0.1 for every host even where 127.0.0.2–.4 exist (to exercise the fallback). */
  forceFallback?: boolean;
  /**
   * Hosts and workers (e.g. {hosts: 8, prefill: 8, decode: 24} on 127.0.0.2…9 for the scale benchmark).
   * Default the hand-laid 3 hosts / 2 prefill / 3 decode described above.
   */
  shape?: FleetShape;
}

export interface DemoFleetHost {
  name: FleetHostName;
  /** The address it listens on and the workers' URLs use. */
  address: string;
  port: number;
  /** Raw SSH public host key blob (what ssh2's hostVerifier receives). */
  hostKeyPublic: Buffer;
  /** "ssh-ed25519 AAAA… gpu-a". */
  hostKeyLine: string;
  /** known_hosts line for address:port ("[127.0.0.2]:40123 ssh-ed25519 AAAA…"). */
  knownHostsLine: string;
  /** The host as its own tools see it (commands, HTTP). */
  machine: DemoMachine;
  channels: DemoChannelLog;
  /** Simulated port → real port on `address`; empty unless listenHttp. */
  httpPorts: Record<number, number>;
}

export interface DemoFleet {
  hosts: DemoFleetHost[];
  host(name: FleetHostName): DemoFleetHost;
  /** The host the router runs on: where discovery starts. */
  entry: DemoFleetHost;
  /** The router's API as the fleet's hosts reach it ("http://127.0.0.2:30001"). */
  routerUrl: string;
  clientPrivateKey: string;
  clientPublicKeyLine: string;
  username: string;
  password: string;
  sim: DemoSimulation;
  /** Why the hosts share 127.0.0.1, or null when each has its own address. */
  fallback: string | null;
  /** Writes an OpenSSH client config, known_hosts and the client key under `dir/.ssh` (see fleet-ssh-config.ts). */
  writeSshConfig(dir: string, opts?: { omit?: FleetHostName[] }): Promise<FleetSshFiles>;
  /** Exact state of every worker now: units, KV tokens, the router's view. */
  groundTruth(): FleetTruth;
  /** Every ActiveState change of every unit so far, oldest first (a copy). */
  unitHistory(): UnitTransition[];
  /** The most workers of the role down at one moment since `since` (see maxWorkersDownAtOnce). */
  maxWorkersDownAtOnce(role: ServerRole, since?: number): number;
  /** Turns a fault on or off: target a worker ("decode-1"), a role, a unit key or, host-wide, a host. */
  setFault(name: FaultName, on: boolean, target?: string, forMs?: number): void;
  /**
   * Takes one host off the network for good: its SSH server cuts every connection and stops listening (its
   * units keep running in the simulation, as a host behind a dead switch does).
   */
  stopHost(name: FleetHostName): Promise<void>;
  stop(): Promise<void>;
}

/** Can this machine bind the address? Linux routes all of 127.0.0.0/8 to lo; macOS only has 127.0.0.1. */
function canBind(address: string): Promise<string | null> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', (err: NodeJS.ErrnoException) => resolve(`${address}: ${err.code ?? err.message}`));
    s.listen(0, address, () => s.close(() => resolve(null)));
  });
}

async function chooseAddresses(
  names: readonly FleetHostName[],
  force: boolean,
): Promise<{ addresses: Record<FleetHostName, string>; fallback: string | null }> {
  const wanted = fleetAddresses(names);
  const problems = force
    ? ['forceFallback was set']
    : (await Promise.all(names.map((h) => canBind(wanted[h])))).filter((p): p is string => !!p);
  if (!problems.length) return { addresses: wanted, fallback: null };
  const all = Object.fromEntries(names.map((h) => [h, '127.0.0.1']));
  const last = wanted[names[names.length - 1]].split('.').pop();
  const rest = names.slice(1).map((n) => `.${wanted[n].split('.').pop()}`);
  const others = !rest.length ? '' : rest.length <= 2 ? ` (and ${rest.join(', ')})` : ` (and .3 … .${last})`;
  return {
    addresses: all,
    fallback:
      `every fleet host listens on 127.0.0.1 with its own SSH port, because 127.0.0.2–.${last} cannot be bound ` +
      `(${problems.join('; ')}). On macOS, \`sudo ifconfig lo0 alias 127.0.0.2\`${others} gives them their own addresses.`,
  };
}

export async function startDemoFleet(opts: DemoFleetOptions = {}): Promise<DemoFleet> {
  const clock = opts.clock ?? systemClock;
  const username = opts.user ?? 'operator';
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(username))
    throw new RangeError(`demo fleet: "${username}" is not a valid user name`);
  const shape = opts.shape ?? DEFAULT_FLEET_SHAPE;
  const problem = fleetShapeProblem(shape);
  if (problem) throw new RangeError(`demo fleet: ${problem}`);
  const names = fleetHostNames(shape.hosts);
  const { addresses, fallback } = await chooseAddresses(names, opts.forceFallback ?? false);
  const metricsDisabled = new Set(opts.metricsDisabled ?? []);
  const dpRanks = Math.max(1, Math.floor(opts.dpRanks ?? 1));
  const routerEra = opts.routerEra ?? 'smg-1.5';
  const sim = new DemoSimulation({
    clock,
    era: opts.era,
    routerEra,
    seed: opts.seed,
    historyMs: opts.historyMs,
    dpRanks,
    modelLoadMs: opts.modelLoadMs,
    metricsDisabled: [...metricsDisabled],
    topology: fleetTopology({
      addresses,
      dpRanks,
      metricsDisabled,
      engineMetrics: routerEra === 'smg-engine-metrics',
      shape,
    }),
  });
  const client = ed25519('pd-console-demo-fleet');
  const http = new Map<FleetHostName, DemoHttpServers>();
  for (const name of names) http.set(name, new DemoHttpServers(machineOf(sim, name)));
  const ssh: DemoSshServer[] = [];
  const hosts: DemoFleetHost[] = [];
  try {
    for (const name of names) {
      const machine = machineOf(sim, name);
      const keys = generateDemoKeys(client, name);
      const server = new DemoSshServer({
        sim: machine,
        keys,
        users: new Set([username, 'root']),
        http: http.get(name) as DemoHttpServers,
        address: addresses[name],
        // One simulated network: a forward through any host to another host's address reaches that host.
        route: (destIP, port) => {
          const m = machine.route(destIP, port);
          return m ? (http.get(m.hostId) ?? null) : null;
        },
      });
      ssh.push(server);
      const port = await server.listen(0);
      const [type, blob] = keys.hostPublicKeyLine.split(' ');
      hosts.push({
        name,
        address: addresses[name],
        port,
        hostKeyPublic: keys.hostKeyPublic,
        hostKeyLine: keys.hostPublicKeyLine,
        knownHostsLine: `[${addresses[name]}]:${port} ${type} ${blob}`,
        machine,
        channels: server.channels,
        httpPorts: opts.listenHttp ? await (http.get(name) as DemoHttpServers).listen(addresses[name]) : {},
      });
    }
  } catch (err) {
    await Promise.all([...ssh.map((s) => s.close()), ...[...http.values()].map((h) => h.close())]);
    throw err;
  }
  const byName = (name: FleetHostName): DemoFleetHost => {
    const h = hosts.find((x) => x.name === name);
    if (!h) throw new RangeError(`demo fleet: no host "${name}"; hosts: ${names.join(', ')}`);
    return h;
  };
  let stopped: Promise<void> | null = null;
  const fleet: DemoFleet = {
    hosts,
    host: byName,
    entry: byName(names[0]),
    routerUrl: `http://${addresses[names[0]]}:${FLEET_PORTS.routerApi}`,
    clientPrivateKey: client.private,
    clientPublicKeyLine: client.public,
    username,
    password: DEMO_PASSWORD,
    sim,
    fallback,
    writeSshConfig: (dir, o) => writeFleetSshFiles(dir, fleet, o),
    groundTruth: () => fleetTruth(sim),
    unitHistory: () => {
      sim.advance();
      return sim.unitHistory.slice();
    },
    maxWorkersDownAtOnce: (role, since) => {
      sim.advance();
      return maxWorkersDownAtOnce(sim.unitHistory, role, since);
    },
    setFault: (name, on, target, forMs) => sim.setFault(name, on, target, forMs),
    stopHost: async (name) => {
      const i = names.indexOf(name);
      if (i < 0) throw new RangeError(`demo fleet: no host "${name}"; hosts: ${names.join(', ')}`);
      await ssh[i].close();
    },
    stop: () =>
      (stopped ??= Promise.all([
        sim.stopFaultTimers(),
        ...ssh.map((s) => s.close()),
        ...[...http.values()].map((h) => h.close()),
      ]).then(() => undefined)),
  };
  return fleet;
}

/** The demo fleet for the core's DemoLauncher: speed 1 runs on the wall clock, more runs the simulation faster. */
export async function launchDemoFleet(args: {
  speed: number;
  era?: DemoEra;
  router?: RouterEra;
  shape?: FleetShape;
}): Promise<DemoFleet> {
  const clock = args.speed === 1 ? systemClock : acceleratedClock(args.speed);
  return startDemoFleet({ clock, era: args.era, routerEra: args.router, shape: args.shape });
}
