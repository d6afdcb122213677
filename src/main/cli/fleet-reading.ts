// What `status` knows of every unit and server of a fleet the app has open, keyed by the host it runs on:
// systemd state per unit, and /health and the exact KV per server, or why there is none. It is read from the
// app's own observations of the deployment (its monitors, one per host, merged into one observation per
// round): the CLI waits on those events until every reachable service has answered, or until a bound, and then
// says which services had not.
import type { Observation, ServiceConfig, ServiceObservation } from '@shared/domain';
import type { HealthResult, KvUsage, UnitState } from '@shared/domain';
import type { Core } from '../core/core';

export interface UnitReading {
  state?: UnitState;
  /** Why systemd state is unknown. */
  error?: string;
}

export interface ServerReading {
  health?: HealthResult;
  kv?: KvUsage;
  /** Why the KV figure is missing or old: the scrape failed, no KV gauge, metrics disabled (a router: the scrape). */
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

/** What the status needs of the app's core: hear its observations. */
export type ObservedCore = Pick<Core, 'on' | 'off'>;

/** How long a status waits for every reachable service's first answers before printing what it has. */
export const FLEET_READING_TIMEOUT_MS = 30_000;

export interface FleetReadingResult {
  reading: FleetReading;
  /** The observation it was read from; null for a deployment without services. */
  observation: Observation | null;
  /** The services that had not answered when the wait ran out (empty when every one did). */
  late: string[];
}

/**
 * The first observation of `deploymentId` in which every reachable service has answered (complete) and which
 * `ready` accepts (the caller's own wait, e.g. for a span of scrapes), turned into a reading. At `timeoutMs` the
 * newest observation is taken, with the services still missing something named; with no observation at all the
 * wait fails naming the deployment.
 */
export function awaitFleetReading(
  core: ObservedCore,
  deploymentId: string,
  services: readonly ServiceConfig[],
  timeoutMs = FLEET_READING_TIMEOUT_MS,
  ready: (o: Observation) => boolean = () => true,
): Promise<FleetReadingResult> {
  if (services.length === 0) return Promise.resolve({ reading: emptyReading(), observation: null, late: [] });
  return new Promise((resolve, reject) => {
    let newest: Observation | undefined;
    let round = 0;
    const done = (): void => {
      clearTimeout(timer);
      core.off('observation', on);
    };
    const timer = setTimeout(() => {
      done();
      if (!newest)
        return reject(
          new Error(
            `no observation of ${deploymentId} within ${timeoutMs / 1000} s: the app's monitors sent nothing`,
          ),
        );
      resolve({
        reading: readingOf(services, newest),
        observation: newest,
        late: lateServices(services, newest, round),
      });
    }, timeoutMs);
    const on = (o: Observation): void => {
      if (o.deploymentId !== deploymentId) return;
      newest = o;
      if (lateServices(services, o, ++round).length > 0 || !ready(o)) return;
      done();
      resolve({ reading: readingOf(services, o), observation: o, late: [] });
    };
    core.on('observation', on);
  });
}

/** Rounds after which a reading that failed is taken as the answer (a slow first read is not). */
const SETTLE_ROUNDS = 3;

/**
 * Every reachable service has its systemd state, its health and (when it has metrics) a scrape — for a server,
 * a KV figure or the reason there is none; the rest are named with what they lack. A host still being read for the first time ("not read
 * yet") is waited for, and so is a read that failed in the first rounds: on a loaded machine the first poll of
 * a fresh link may miss its budget.
 */
function lateServices(services: readonly ServiceConfig[], o: Observation, round: number): string[] {
  const settled = round >= SETTLE_ROUNDS;
  const late: string[] = [];
  o.services.forEach((s, i) => {
    const c = services[i];
    const missing = missingOf(c, s, settled);
    if (missing) late.push(`${c.id ?? c.unit} on ${c.hostId} (${missing})`);
  });
  return late;
}

function missingOf(c: ServiceConfig, s: ServiceObservation, settled: boolean): string | null {
  if (c.unit === '' || s.systemdError?.startsWith('unreachable: ')) return null;
  if (!s.systemd && !settled) return 'systemd state';
  if ((s.units ?? []).some((u) => !u.systemd && (!settled || u.systemdError === 'not read yet')))
    return "another node's systemd state";
  if (!s.health) return 'health';
  if (!c.metricsUrl) return null;
  // A router has no KV figure: its scrape is its answer. A server's is its KV figure, or why there is none.
  if (c.role === 'router' ? s.metrics?.ok : s.kv !== undefined || s.kvMissing !== undefined) return null;
  return settled && s.metrics?.ok === false ? null : 'a scrape of /metrics';
}

const emptyReading = (): FleetReading => ({ units: new Map(), servers: new Map() });

function readingOf(services: readonly ServiceConfig[], o: Observation): FleetReading {
  const out = emptyReading();
  o.services.forEach((s, i) => {
    const c = services[i];
    if (c.unit === '') return;
    const error = (e: string | undefined): string | undefined => e && withoutRole(s, e);
    if (s.units)
      for (const u of s.units)
        out.units.set(unitKey(u.hostId, u.unit), { state: u.systemd, error: error(u.systemdError) });
    else out.units.set(unitKey(c.hostId, c.unit), { state: s.systemd, error: error(s.systemdError) });
    out.servers.set(serverKey(c.hostId, c.apiUrl), serverOf(c, s));
  });
  return out;
}

function serverOf(c: ServiceConfig, s: ServiceObservation): ServerReading {
  if (!s.systemd && s.systemdError?.startsWith('unreachable: ')) return { unreachable: s.systemdError };
  // A failed scrape first: a KV figure still there is the last good one's.
  const kvError =
    s.metrics && !s.metrics.ok
      ? withoutRole(s, s.metrics.error) + (s.metrics.hint ? ` — ${s.metrics.hint}` : '')
      : s.kv
        ? undefined
        : (s.kvMissing?.reason ??
          (c.metricsUrl || c.role === 'router'
            ? undefined
            : `metrics disabled: add --enable-metrics to ExecStart of ${c.unit}`));
  return {
    ...(s.health ? { health: s.health } : {}),
    ...(s.kv ? { kv: s.kv } : {}),
    ...(kvError ? { kvError } : {}),
  };
}

/** A probe's message without the role it starts with ("decode: no answer yet…"): the entry names its worker. */
export function withoutRole(s: Pick<ServiceObservation, 'role'>, message: string): string {
  return message.replace(new RegExp(`^${s.role}(?: \\([^)]*\\))?: `), '');
}
