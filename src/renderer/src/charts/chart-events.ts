// Which timeline events a chart marks: those of the roles and workers its lines are about. Every page hands its
// charts the deployment's whole event list; each keeps only its own, so the prefill KV chart does not mark
// decode's restarts and alerts.
import type { AppEvent, Role } from '@shared/domain';
import { splitScopedKey } from '@shared/signals/scoped-key';

const ROLES: ReadonlySet<string> = new Set<Role>(['prefill', 'decode', 'router']);

/** What a chart's lines are about, read from its series keys (and the role its clicks open the journal of). */
export interface ChartScope {
  /** Roles of its lines; empty for a chart of no role (GPUs), which marks every event. */
  roles: ReadonlySet<Role>;
  /** Per role, the workers it draws a line of (`decode.kv_ratio@decode-3`). */
  workers: ReadonlyMap<Role, ReadonlySet<string>>;
  /** Roles it draws a role-wide line of (an unscoped key: the only worker of a pair, a fleet role's total). */
  wholeRoles: ReadonlySet<Role>;
}

export function chartScope(keys: readonly string[], role?: Role): ChartScope {
  const roles = new Set<Role>();
  const workers = new Map<Role, Set<string>>();
  const wholeRoles = new Set<Role>();
  for (const k of keys) {
    const { key, scope } = splitScopedKey(k);
    const r = key.slice(0, key.indexOf('.'));
    if (!ROLES.has(r)) continue;
    const kr = r as Role;
    roles.add(kr);
    if (scope === undefined) wholeRoles.add(kr);
    else {
      let set = workers.get(kr);
      if (!set) workers.set(kr, (set = new Set()));
      set.add(scope);
    }
  }
  if (role && roles.size === 0) {
    roles.add(role);
    wholeRoles.add(role);
  }
  return { roles, workers, wholeRoles };
}

/**
 * The events a chart of this scope marks. An event of no role (the connection, a restart of everything) is
 * every chart's; an event of a role is only on that role's charts; an event naming a fleet worker is on the
 * charts that draw that worker's line, and on the role's charts that draw no worker's line (the role's total
 * alone). A chart of no role (GPUs) marks every event.
 */
export function eventsForChart(events: readonly AppEvent[], scope: ChartScope): AppEvent[] {
  if (scope.roles.size === 0) return events as AppEvent[];
  return events.filter((e) => {
    if (!e.role) return true;
    if (!scope.roles.has(e.role)) return false;
    if (e.worker === undefined) return true;
    const ws = scope.workers.get(e.role);
    return ws ? ws.has(e.worker) : scope.wholeRoles.has(e.role);
  });
}

/** Same events in the same order: a chart keeps its list (and draws nothing) when only others' events changed. */
export function sameEvents(a: readonly AppEvent[], b: readonly AppEvent[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
