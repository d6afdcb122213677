// One simulated host as its own tools see it: the commands (systemctl, journalctl, nvidia-smi, curl…), its
// HTTP listeners and its SSH server read the world through this view, so each host shows only its own
// units, journal, boot and GPUs. The single demo host is the only machine of its world.
import { isLoopbackHost } from '@shared/worker-url';
import type { Clock } from '../core/clock';
import type { DemoEra, RouterEra } from './eras';
import type { Journal } from './journal';
import { FAULT_SCOPES, DemoSimulation } from './simulation';
import type {
  FaultName,
  ForeignGpuProcess,
  GpuReading,
  HostRuntime,
  NetworkEvent,
  UnitRuntime,
} from './simulation';

const machines = new WeakMap<DemoSimulation, Map<string, DemoMachine>>();

export class DemoMachine {
  constructor(
    readonly world: DemoSimulation,
    readonly hostId: string,
  ) {}

  get clock(): Clock {
    return this.world.clock;
  }

  advance(): void {
    this.world.advance();
  }

  get now(): number {
    return this.world.now;
  }

  private get host(): HostRuntime {
    return this.world.host(this.hostId);
  }

  get hostname(): string {
    return this.host.spec.hostname;
  }

  /** The address other hosts reach this one at. */
  get address(): string {
    return this.host.spec.address;
  }

  get bootId(): string {
    this.advance();
    return this.host.bootId;
  }

  get bootedAt(): number {
    this.advance();
    return this.host.bootedAt;
  }

  get journal(): Journal {
    return this.host.journal;
  }

  get era(): DemoEra {
    return this.world.era;
  }

  get routerEra(): RouterEra {
    return this.world.routerEra;
  }

  get seed(): number {
    return this.world.seed;
  }

  get isDown(): boolean {
    return this.world.hostDown(this.hostId);
  }

  /** Host-wide faults are read for this host; the others for the unit key given (or anywhere). */
  isFaultOn(name: FaultName, unitKey?: string): boolean {
    if (!FAULT_SCOPES[name]) return this.world.isFaultOn(name, this.hostId);
    return this.world.isFaultOn(name, unitKey);
  }

  /** This host's SGLang units, as of now. */
  units(): UnitRuntime[] {
    this.advance();
    return this.host.units;
  }

  unitNamed(name: string): UnitRuntime | null {
    return this.units().find((u) => u.def.name === name) ?? null;
  }

  startUnit(u: UnitRuntime): boolean {
    return this.world.startUnit(u.def.key);
  }

  stopUnit(u: UnitRuntime): void {
    this.world.stopUnit(u.def.key);
  }

  restartUnit(u: UnitRuntime): void {
    this.world.restartUnit(u.def.key);
  }

  memoryCurrentBytes(u: UnitRuntime): number | null {
    return this.world.memoryCurrentBytes(u.def.key);
  }

  gpus(): GpuReading[] {
    return this.world.gpus(this.hostId);
  }

  /** Processes of no unit holding GPUs here (the foreign-gpu-process fault). */
  foreignGpuProcesses(): ForeignGpuProcess[] {
    this.advance();
    return this.world.foreignGpuProcesses(this.hostId);
  }

  portOpen(port: number): boolean {
    return this.world.portOpen(port, this.hostId);
  }

  /** The unit whose process listens (or would listen) on this port here. */
  listenerOf(port: number): UnitRuntime | null {
    return this.world.listenerOf(this.host, port);
  }

  /** Every port a unit of this host serves HTTP on when it runs. */
  httpPorts(): number[] {
    return this.world.httpPortsOf(this.hostId);
  }

  serverHealth(unitKey: string): 'ok' | 'starting' | 'refused' {
    return this.world.serverHealth(unitKey);
  }

  logHttpRequest(unitKey: string, method: string, path: string, status: number): void {
    this.world.logHttpRequest(unitKey, method, path, status);
  }

  onNetwork(fn: (e: NetworkEvent) => void): () => void {
    return this.world.onNetwork(fn, this.hostId);
  }

  /**
   * Where a TCP connection from this host to `address:port` arrives: this host for loopback, the fleet
   * host that has the address otherwise (one simulated network). Where every host shares 127.0.0.1 (the
   * fallback without 127.0.0.2–.4), the port tells them apart. null: no such address.
   */
  route(address: string, port: number): DemoMachine | null {
    const hosts = this.world.hostIds.map((id) => machineOf(this.world, id));
    const here = isLoopbackHost(address) ? [this, ...hosts.filter((m) => m.address === '127.0.0.1')] : [];
    const there = hosts.filter((m) => m.address === address);
    const candidates = [...here, ...there];
    if (!candidates.length) return null;
    return candidates.find((m) => m.listenerOf(port)) ?? candidates[0];
  }
}

/** The machine view of a host of the world (default: its first, the single demo host). */
export function machineOf(sim: DemoSimulation, hostId = sim.hostIds[0]): DemoMachine {
  let byHost = machines.get(sim);
  if (!byHost) machines.set(sim, (byHost = new Map()));
  let m = byHost.get(hostId);
  if (!m) {
    sim.host(hostId);
    byHost.set(hostId, (m = new DemoMachine(sim, hostId)));
  }
  return m;
}

/** Callers of the single demo host pass its simulation; fleet code passes a host's machine. */
export function asMachine(target: DemoSimulation | DemoMachine): DemoMachine {
  return target instanceof DemoSimulation ? machineOf(target) : target;
}
