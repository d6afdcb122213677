// The command palette's demo faults: the failures of a bad day, each for one worker ("Demo: crash-loop decode-1")
// or, for the link, one host and for a chosen time. A fault that is on offers its way back instead of itself.
import type { DemoControlArgs } from '@shared/api/dashboard';
import { DEMO_FAULT_SCOPES, type DemoFaultName, type DemoFaultState } from '@shared/demo-faults';
import type { DeploymentConfig, Role } from '@shared/domain';
import { formatClock } from '../format';

export interface DemoFaultCommand {
  id: string;
  title: string;
  /** Sent in order. */
  requests: Array<Omit<DemoControlArgs, 'deploymentId'>>;
}

/** What a unit fault is turned on for: its name on screen, the request's target, and the state's name for it. */
interface UnitTarget {
  name: string;
  role: Role;
  arg: Pick<DemoControlArgs, 'role' | 'worker'>;
}

/** The faults the palette offers per worker, in words (t: the worker, or the role on the single host). */
const UNIT_FAULTS: Array<{ fault: DemoFaultName; on: (t: string) => string; off: (t: string) => string }> = [
  {
    fault: 'crash-loop',
    on: (t) => `Demo: crash-loop ${t} (its process dies soon after each start; systemd restarts it)`,
    off: (t) => `Demo: end the crash loop of ${t}`,
  },
  {
    fault: 'kv-full',
    on: (t) => `Demo: fill the KV cache of ${t} (long generations pin it)`,
    off: (t) => `Demo: end the long generations on ${t} (its KV drains as those running finish)`,
  },
  {
    fault: 'metrics-500',
    on: (t) => `Demo: /metrics of ${t} answers 500`,
    off: (t) => `Demo: /metrics of ${t} answers again (no more 500)`,
  },
  {
    fault: 'metrics-hang',
    on: (t) => `Demo: /metrics of ${t} hangs (never answers)`,
    off: (t) => `Demo: /metrics of ${t} answers again (no more hang)`,
  },
  {
    fault: 'health-never-ok',
    on: (t) => `Demo: /health of ${t} never answers OK (503)`,
    off: (t) => `Demo: /health of ${t} answers OK again`,
  },
  {
    fault: 'router-never-readds',
    on: (t) => `Demo: the router never re-adds ${t} once it marks it unhealthy`,
    off: (t) => `Demo: the router re-adds ${t} again once it is healthy`,
  },
  {
    fault: 'foreign-gpu-process',
    on: (t) => `Demo: another process takes the GPUs of ${t} (a restart then refuses to stop it)`,
    off: (t) => `Demo: end the other process on the GPUs of ${t}`,
  },
];

/** How long the palette offers to drop a link for; null: until turned off. */
export const LINK_DOWN_FOR_S = [30, 90, null] as const;

/** The single host is named by role and reached as one host; a fleet by worker and by host. */
function unitTargets(deployment: DeploymentConfig, fleet: boolean): UnitTarget[] {
  if (!fleet) return deployment.services.map((s) => ({ name: s.role, role: s.role, arg: { role: s.role } }));
  const out: UnitTarget[] = [];
  for (const s of deployment.services) {
    if (s.role === 'router') {
      if (!out.some((t) => t.role === 'router'))
        out.push({ name: 'router', role: 'router', arg: { role: 'router' } });
    } else if (s.id) out.push({ name: s.id, role: s.role, arg: { worker: s.id } });
  }
  return out;
}

/** Every host the deployment's units run on (a worker's other nodes included), in the order first met. */
function hostsOf(deployment: DeploymentConfig): string[] {
  const hosts = new Set<string>();
  for (const s of deployment.services) {
    hosts.add(s.hostId);
    for (const u of s.units ?? []) hosts.add(u.hostId);
  }
  return [...hosts];
}

export function demoFaultCommands(
  deployment: DeploymentConfig,
  fleet: boolean,
  on: readonly DemoFaultState[],
): DemoFaultCommand[] {
  const isOn = (fault: DemoFaultName, target: string): DemoFaultState | undefined =>
    on.find((f) => f.fault === fault && f.target === target);
  const out: DemoFaultCommand[] = [];

  // The link: one host, or each host of the fleet. The single host's fault is named by its host id in the state.
  const linkTargets = fleet
    ? hostsOf(deployment).map((h) => ({ name: h, label: `the link to ${h}`, arg: { host: h } }))
    : [{ name: null, label: 'the link to the demo host', arg: {} }];
  for (const t of linkTargets) {
    const state = t.name === null ? on.find((f) => f.fault === 'link-down') : isOn('link-down', t.name);
    const key = t.name ?? 'host';
    if (state)
      out.push({
        id: `demo-link-up-${key}`,
        title: `Demo: bring ${t.label} back now (${state.until === null ? 'down until turned off' : `down until ${formatClock(state.until)}`})`,
        requests: [{ fault: 'link-down', on: false, ...t.arg }],
      });
    else
      for (const forS of LINK_DOWN_FOR_S)
        out.push({
          id: `demo-link-down-${key}-${forS ?? 'until-off'}`,
          title:
            forS === null
              ? `Demo: drop ${t.label} until turned off (its SSH server stops answering)`
              : `Demo: drop ${t.label} for ${forS} s (its SSH server stops answering)`,
          requests: [{ fault: 'link-down', on: true, ...t.arg, ...(forS === null ? {} : { forS }) }],
        });
  }

  const targets = unitTargets(deployment, fleet);
  for (const f of UNIT_FAULTS)
    for (const t of targets) {
      if (!DEMO_FAULT_SCOPES[f.fault]?.includes(t.role)) continue;
      const active = isOn(f.fault, t.name) !== undefined;
      out.push({
        id: `demo-${f.fault}-${active ? 'off' : 'on'}-${t.name}`,
        title: active ? f.off(t.name) : f.on(t.name),
        requests: [{ fault: f.fault, on: !active, ...t.arg }],
      });
    }
  if (on.length)
    out.push({
      id: 'demo-end-all',
      title: `Demo: end every simulated fault (${on.length} on: ${[...new Set(on.map((f) => f.fault))].join(', ')})`,
      requests: on.map((f) => endFaultRequest(f, fleet)),
    });
  return out;
}

/** The request that ends one fault that is on (the single host's link is its only host's). */
function endFaultRequest(state: DemoFaultState, fleet: boolean): Omit<DemoControlArgs, 'deploymentId'> {
  const scope = DEMO_FAULT_SCOPES[state.fault];
  if (!scope) return { fault: state.fault, on: false, ...(fleet ? { host: state.target } : {}) };
  if (!fleet || state.target === 'router')
    return { fault: state.fault, on: false, role: state.target as Role };
  return { fault: state.fault, on: false, worker: state.target };
}
