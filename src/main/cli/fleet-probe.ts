// What the fleet status knows of every unit and server of a fleet, keyed by the host it runs on: systemd state
// per unit, and /health and the exact KV per server, or why there is none. fleet-observe.ts fills it from the
// fleet's live deployment (the app's monitors); fleet-status.ts turns it into the report.
import type { HealthResult, KvUsage, UnitState } from '@shared/domain';

export interface UnitReading {
  state?: UnitState;
  /** Why systemd state is unknown. */
  error?: string;
}

export interface ServerReading {
  health?: HealthResult;
  kv?: KvUsage;
  /** Why there is no KV figure (scrape failed, no KV gauge, metrics disabled). */
  kvError?: string;
  /** Why nothing could be read at all (the host's link). */
  unreachable?: string;
}

export interface FleetReading {
  /** `host unit` → state. */
  units: Map<string, UnitReading>;
  /** apiUrl-on-host key (`host apiUrl`) → reading; DP-aware workers of one server share one. */
  servers: Map<string, ServerReading>;
}

export const unitKey = (host: string, unit: string): string => `${host} ${unit}`;
export const serverKey = (host: string, apiUrl: string): string => `${host} ${apiUrl}`;
