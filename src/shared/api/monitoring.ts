// Contract part: opening deployments and watching them (the walking skeleton).
import type { AppEvent, ConnectionStatus, DeploymentSummary, HostConfig, Observation } from '../domain';

export interface OpenDemoArgs {
  /** Demo host speed: 1 = real time. */
  speed?: number;
}

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
