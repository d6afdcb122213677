// Contract part: opening deployments and watching them (the walking skeleton).
import type { AppEvent, ConnectionStatus, DeploymentSummary, HostConfig, Observation } from '../domain';

/**
 * The demo host's metric eras (src/main/demo/eras.ts has what each reproduces). Listed here so the API schema,
 * the CLI, browser mode and the command palette accept exactly the names the demo knows.
 */
export const DEMO_SERVER_ERAS = ['E1', 'E2', 'E3', 'E4'] as const;
export type DemoServerEra = (typeof DEMO_SERVER_ERAS)[number];
export const DEMO_ROUTER_ERAS = ['sglang-router-0.2.4', 'smg-0.3', 'smg-1.5', 'smg-engine-metrics'] as const;
export type DemoRouterEra = (typeof DEMO_ROUTER_ERAS)[number];

/** How the demo's deployment name says which eras run: "server E2 · smg 0.3". */
export const DEMO_SERVER_ERA_LABEL: Record<DemoServerEra, string> = {
  E1: 'server E1 (autumn 2025)',
  E2: 'server E2 (early 2026)',
  E3: 'server E3',
  E4: 'server E4 (newest)',
};
export const DEMO_ROUTER_ERA_LABEL: Record<DemoRouterEra, string> = {
  'sglang-router-0.2.4': 'sglang-router 0.2.4',
  'smg-0.3': 'smg 0.3–1.4',
  'smg-1.5': 'smg 1.5+',
  'smg-engine-metrics': 'smg 1.7+ --engine-metrics',
};

export interface OpenDemoArgs {
  /** Demo host speed: 1 = real time. */
  speed?: number;
  /** SGLang server metric era; default E4. A demo already open with another era is refused: close it first. */
  era?: DemoServerEra;
  /** Router metric era; default smg-1.5. */
  router?: DemoRouterEra;
  /**
   * Which simulated world: `single` (default) is one GPU host with a 1P1D pair; `fleet` is three hosts on
   * 127.0.0.2–.4 with a router, two prefill and three decode workers, one spanning two hosts (docs/demo-fleet.md).
   */
  topology?: DemoTopology;
}

export const DEMO_TOPOLOGIES = ['single', 'fleet'] as const;
export type DemoTopology = (typeof DEMO_TOPOLOGIES)[number];

export interface ConnectHostArgs {
  host: HostConfig;
}

export interface DeploymentRef {
  deploymentId: string;
}

export interface AppInfo {
  version: string;
  shell: 'electron' | 'browser' | 'cli';
  platform: string;
  /** Set when the shell was started with a demo flag, so the UI opens straight into it. */
  autoOpenDemo: boolean;
}

export interface MonitoringRequests {
  getAppInfo(args: Record<string, never>): Promise<AppInfo>;
  listDeployments(args: Record<string, never>): Promise<DeploymentSummary[]>;
  openDemo(args: OpenDemoArgs): Promise<DeploymentSummary>;
  connectHost(args: ConnectHostArgs): Promise<DeploymentSummary>;
  closeDeployment(args: DeploymentRef): Promise<void>;
  listEvents(args: DeploymentRef): Promise<AppEvent[]>;
}

export const MONITORING_REQUESTS = [
  'getAppInfo',
  'listDeployments',
  'openDemo',
  'connectHost',
  'closeDeployment',
  'listEvents',
] as const satisfies readonly (keyof MonitoringRequests)[];

export interface MonitoringEvents {
  observation: Observation;
  connection: { deploymentId: string; hostId: string; status: ConnectionStatus };
  event: AppEvent;
}

export const MONITORING_EVENTS = [
  'observation',
  'connection',
  'event',
] as const satisfies readonly (keyof MonitoringEvents)[];
