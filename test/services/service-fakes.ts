// Fakes for services built over their narrow interfaces (service-host.ts) instead of a Core: a deployment
// of plain objects whose links answer shell commands from a function, the real registry over it, and a
// host that keeps what the service pushed and wrote on the timeline. No SSH, no Core.
import { EventEmitter } from 'node:events';
import { ApiError } from '../../src/main/core/api-error';
import type { CoreHooks } from '../../src/main/core/core-hooks';
import type { Deployment, DeploymentView } from '../../src/main/core/deployment/deployment';
import { DeploymentRegistry } from '../../src/main/core/deployment/deployment-registry';
import type { ApiEventMap, ServiceHost, TimelineEntry } from '../../src/main/core/services/service-host';
import type { SshConnection } from '../../src/main/core/ssh/connection';
import type { AppEvent, ConnectionStatus, DeploymentConfig, HostConfig } from '../../src/shared/domain';
import type { Fleet } from '../../src/shared/fleet';

export type Answer = (command: string) => { stdout: string; stderr: string; exitCode: number };

/** A link that answers each command with `answer`, or is down (`status` not connected). */
export function fakeLink(label: string, answer: Answer, status?: ConnectionStatus): SshConnection {
  const s: ConnectionStatus = status ?? { state: 'connected', since: 0 };
  const link = {
    label,
    status: s,
    isConnected: s.state === 'connected',
    exec: async (command: string) => {
      if (s.state !== 'connected') throw new Error(`not connected to ${label}`);
      return answer(command);
    },
    httpAgent: () => {
      throw new Error(`${label}: a fake link carries no HTTP`);
    },
  };
  // The services use exec, status and label of a link; the rest of SshConnection is never reached here.
  return link as unknown as SshConnection;
}

export interface FakeDeploymentSpec {
  id: string;
  host: HostConfig;
  config: DeploymentConfig;
  /** Links by host id; a host listed here without a link has none (its `connection` throws). */
  links?: Record<string, SshConnection | undefined>;
  /** Other hosts of a fleet, after the origin. */
  otherHosts?: HostConfig[];
}

export function fakeDeployment(spec: FakeDeploymentSpec): Deployment {
  const hosts = [spec.host, ...(spec.otherHosts ?? [])];
  const linkOf = (hostId: string): SshConnection => {
    const l = spec.links?.[hostId];
    if (!l) throw new ApiError('unreachable', `no link to ${hostId}`);
    return l;
  };
  return {
    id: spec.id,
    host: spec.host,
    config: spec.config,
    // Fleet discovery's findings are not read by the services these fakes serve.
    fleet: {} as Fleet,
    latest: undefined,
    readings: new Proxy({} as Deployment['readings'], {
      get: () => {
        throw new Error('a fake deployment has no readings');
      },
    }),
    events: () => [],
    connection: (hostId) => linkOf(hostId ?? spec.host.id),
    journalTail: (unit) => {
      throw new Error(`a fake deployment follows no journal (${unit})`);
    },
    hostStates: () =>
      hosts.map((host) => ({
        host,
        connection: spec.links?.[host.id]?.status ?? { state: 'failed', reason: 'no link', at: 0 },
      })),
  };
}

/** A recording as the registry hands it out: a view with no links (the registry's live() refuses it). */
export function fakeRecording(spec: FakeDeploymentSpec): DeploymentView {
  const { connection: _c, journalTail: _j, ...view } = fakeDeployment(spec);
  return view;
}

export interface FakeHost extends ServiceHost {
  /** Every API event pushed, in order. */
  readonly pushed: Array<{ name: string; payload: unknown }>;
  /** Every timeline entry written, in order. */
  readonly timeline: AppEvent[];
  readonly hookBus: EventEmitter<CoreHooks>;
}

/** The registry over these deployments, and a host that records what the service does with it. */
export function fakeHost(
  deployments: Deployment[],
  recordings: DeploymentView[] = [],
  now = () => 1_700_000_000_000,
): FakeHost {
  const registry = new DeploymentRegistry();
  registry.add({
    find: (id) => deployments.find((d) => d.id === id),
    summaries: () => [],
    close: async () => undefined,
  });
  registry.addRecordings({
    find: (id) => recordings.find((d) => d.id === id),
    summaries: () => [],
    close: async () => undefined,
  });
  const hookBus = new EventEmitter<CoreHooks>();
  const api = new EventEmitter<ApiEventMap>();
  const pushed: FakeHost['pushed'] = [];
  const timeline: AppEvent[] = [];
  let seq = 0;
  return {
    deployments: registry,
    hooks: hookBus,
    hookBus,
    clock: { now },
    pushed,
    timeline,
    emit: (name, ...args) => {
      pushed.push({ name: String(name), payload: args[0] });
      return api.emit(name, ...args);
    },
    addEvent: (deploymentId: string, e: TimelineEntry) => {
      registry.resolve(deploymentId);
      const full: AppEvent = { ...e, id: e.id ?? `e${seq++}`, deploymentId };
      timeline.push(full);
      return full;
    },
  };
}
