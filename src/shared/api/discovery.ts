// Contract part: discovery (which units run SGLang, where their endpoints are, what is missing and why)
// and the metrics inventory ("show me everything you've got").
import type { DeploymentConfig, Role } from '../domain';

export interface DiscoveryDiagnosticDto {
  severity: 'error' | 'warning' | 'info';
  code: string;
  role?: Role;
  unit?: string;
  message: string;
  fix?: string;
}

export interface DiscoveryReport {
  hostId: string;
  at: number;
  proposal: DeploymentConfig;
  found: Array<{
    unit: string;
    kind: 'server' | 'router';
    role?: Role;
    activeState?: string;
    /** Where its command was read: the running process (exact), its unit files, or a wrapper script. */
    source: 'process' | 'unit-file' | 'script';
    /** The process that runs it, when read from a process. */
    pid?: number;
  }>;
  diagnostics: DiscoveryDiagnosticDto[];
  needsOperatorChoice: Array<{ role: Role; units: string[]; chosen: string }>;
  /** Every host's own report (read over that host's link), origin first; the fields above are the origin's. */
  hosts?: DiscoveryReport[];
}

export interface MetricFamilySummary {
  name: string;
  type: string;
  help?: string;
  series: number;
  /** Value of the first sample (NaN/±Inf as strings, since JSON has no such numbers). */
  lastValue: number | string | null;
}

export interface MetricsInventory {
  /** The service's id (`serviceId`): its role on a 1P1D box, the worker's name (`decode-1`) on a fleet. */
  service: string;
  role: Role;
  url?: string;
  scrapedAt: number | null;
  families: MetricFamilySummary[];
  /** Why there is no inventory (metrics disabled, endpoint down). */
  unavailable?: string;
}

export interface DiscoveryRequests {
  discover(args: { deploymentId: string }): Promise<DiscoveryReport>;
  /** Every family the service's last scrape served; `service` is a service id (`serviceId`). */
  getMetricsInventory(args: { deploymentId: string; service: string }): Promise<MetricsInventory>;
}

export const DISCOVERY_REQUESTS = [
  'discover',
  'getMetricsInventory',
] as const satisfies readonly (keyof DiscoveryRequests)[];

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface DiscoveryEvents {}
export const DISCOVERY_EVENTS = [] as const;
