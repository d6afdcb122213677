// The plan shown before a restart: host, units, exact commands, order, what will break, last restart times,
// whether drain is possible, timeouts, and why starting would be refused. Pure: all inputs are gathered by
// the restart service.
import type { RestartPlan, RestartSettings, RestartTarget, PlannedService } from '@shared/contract';
import type { DeploymentConfig, HostConfig, Observation, Role } from '@shared/domain';
import { hasWorkerGroups } from '@shared/fleet';
import { restartImpact, routerInFlight, type LatestScrape } from './impact';
import type { DrainProbe } from './drain';
import type { GpuOwners } from './gpu-owners';
import { parseSystemdTimestamp } from '../probes/systemd';
import {
  restartCommand,
  sudoersLine,
  type HostIdentity,
  type Privilege,
  type UnitSnapshot,
} from './unit-commands';
import { STEP_LABELS, stepsFor } from './service-restart';
import { stagesFor, timeoutsFor } from './restart-settings';

export interface PlanInput {
  deployment: DeploymentConfig;
  host: HostConfig;
  target: RestartTarget;
  drainRequested: boolean;
  settings: RestartSettings;
  connected: boolean;
  connectionText: string;
  identity: HostIdentity | null;
  latest?: Observation;
  /** Each unit as `systemctl show` reported it while planning; preferred over the latest observation. */
  units: Map<Role, UnitSnapshot>;
  scrapes: Map<Role, LatestScrape>;
  drain: Map<Role, DrainProbe>;
  /**
   * Who holds each planned server's GPUs now (the roll's GPU check): another process there means restarting the
   * unit frees nothing and the new server fails to load, so the restart is refused.
   */
  gpuOwners?: Map<Role, GpuOwners>;
  running?: { operationId: string; target: RestartTarget };
  now: number;
}

export function privilegeOf(
  identity: HostIdentity | null,
  settings: RestartSettings,
  host: HostConfig,
): Privilege {
  if (identity ? identity.uid === 0 : host.user === 'root') return 'root';
  return settings.polkit ? 'polkit' : 'sudo';
}

export function buildPlan(p: PlanInput): RestartPlan {
  const present = p.deployment.services.map((s) => s.role);
  const stages = stagesFor(p.target, p.settings, present);
  const roles = stages.flat();
  const privilege = privilegeOf(p.identity, p.settings, p.host);
  const router = p.scrapes.get('router');
  const warnings: string[] = [];
  const services: PlannedService[] = roles.map((role) => {
    const cfg = p.deployment.services.find((s) => s.role === role)!;
    const obs = p.latest?.services.find((s) => s.role === role)?.systemd;
    const fresh = p.units.get(role);
    const unit = fresh
      ? {
          loadState: fresh.loadState,
          activeState: fresh.activeState,
          subState: fresh.subState,
          activeEnterTimestamp: parseSystemdTimestamp(fresh.activeEnter),
          nRestarts: fresh.nRestarts,
        }
      : obs;
    const drain = p.drain.get(role) ?? {
      supported: false,
      detail: role === 'router' ? 'the router itself cannot be drained' : 'drain was not checked',
    };
    const drainThis = p.drainRequested && drain.supported;
    if (unit?.loadState === 'not-found')
      warnings.push(`${cfg.unit} is not known to systemd on ${p.host.label}: its restart will fail`);
    return {
      role,
      unit: cfg.unit,
      hostId: cfg.hostId,
      hostLabel: p.host.label,
      command: restartCommand(cfg.unit, privilege),
      privilege,
      activeState: unit?.activeState ?? null,
      subState: unit?.subState ?? null,
      lastRestartAt: unit?.activeEnterTimestamp ?? null,
      nRestarts: unit?.nRestarts ?? null,
      impact: restartImpact(role, cfg, p.scrapes.get(role), router),
      drain: { supported: drain.supported, detail: drain.detail },
      timeouts: timeoutsFor(role, p.settings),
      steps: stepsFor(role, drainThis).map((kind) => ({ kind, label: STEP_LABELS[kind](role) })),
    };
  });
  const workersInPlan = services.filter((s) => s.role !== 'router');
  const drainAvailable = workersInPlan.length > 0 && workersInPlan.every((s) => s.drain.supported);
  if (p.drainRequested && !drainAvailable)
    warnings.push(
      `drain is not available: ${workersInPlan.find((s) => !s.drain.supported)?.drain.detail ?? 'only prefill and decode workers can be drained'}; the restart would cut running requests off`,
    );
  if (p.target === 'stack')
    warnings.push(
      'The deployment serves no requests from the first restart until the router reports prefill and decode healthy again.',
    );
  else if (p.target !== 'router' && present.includes('router'))
    warnings.push(
      `While ${p.target} restarts the router cannot serve any request: PD needs a healthy prefill and a healthy decode worker.`,
    );
  else if (p.target === 'router')
    warnings.push(
      'While the router restarts, clients get connection errors; prefill and decode keep running.',
    );
  const missing = p.target !== 'stack' && !present.includes(p.target);
  let gpuRefusal: string | undefined;
  for (const s of services) {
    const owners = p.gpuOwners?.get(s.role);
    if (owners?.kind === 'unreadable')
      warnings.push(`the GPU check of ${s.unit} could not be read: ${owners.detail}`);
    else if (owners?.kind === 'foreign')
      gpuRefusal ??= `${owners.detail}: restarting ${s.unit} would free nothing and its new server could not load. ${owners.hint}`;
    else if (owners?.kind === 'garbage')
      gpuRefusal ??= `the GPU check of ${s.unit} failed: ${owners.detail}. Run the command by hand on ${p.host.label} to see what answers instead.`;
  }
  let blockedReason: string | undefined;
  if (p.settings.readOnly) blockedReason = 'PD Console is in read-only mode: restarts are switched off';
  else if (missing) blockedReason = `deployment ${p.deployment.name} has no ${p.target} service`;
  else if (hasWorkerGroups(p.deployment.services))
    // The in-place restart knows one unit per role on one link; a fleet's role is many workers on many hosts.
    blockedReason =
      `${p.deployment.name} is a fleet (${p.deployment.services.length} services on several hosts): the app restarts ` +
      `a role as one service only on a one-host deployment — use the rolling restart: the role's or a worker's ` +
      `Restart… button, or \`pd-console restart ${p.target} --host ${p.host.alias ?? p.host.id}\``;
  else if (!p.connected)
    blockedReason = `not connected to ${p.host.label} (${p.connectionText}): a restart could not be followed`;
  else if (gpuRefusal) blockedReason = gpuRefusal;
  const user = p.identity?.user ?? p.host.user ?? 'operator';
  const allUnits = p.deployment.services.map((s) => s.unit);
  return {
    deploymentId: p.deployment.id,
    target: p.target,
    hostLabel: p.host.label,
    connectedAs: p.identity ? { user: p.identity.user, uid: p.identity.uid } : null,
    stages,
    services,
    routerInFlight: routerInFlight(router),
    drainRequested: p.drainRequested,
    drainAvailable,
    sudoersLine: sudoersLine(user, allUnits, p.identity?.systemctlPath),
    warnings,
    ...(blockedReason ? { blockedReason } : {}),
    ...(p.running ? { running: p.running } : {}),
    plannedAt: p.now,
  };
}
