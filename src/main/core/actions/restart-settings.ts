// Restart settings: defaults, merging a patch, and the stack order — the one order policy of every restart,
// in place or rolling.
//
// Stack order (docs/restart.md): prefill and decode first — together by default in an in-place restart of a
// one-host pair, because in PD the deployment serves nothing while either is down, so restarting them in
// parallel halves the outage; in sequence ('prefill-first' / 'decode-first') when loading two models at once
// would fight over disk or network bandwidth. A roll takes one worker at a time (the others of its role keep
// serving), its roles in the same order ('parallel' rolls prefill first: its restart costs only the requests
// in their prefill, so a new model or flag that fails to load fails on the cheap side). The router restarts
// last, only once the servers answer /health, so it comes up with healthy workers to register; a stack
// restart or a whole-deployment roll leaves it out when `stackIncludesRouter` is off.
import type { RestartSettings, RestartSettingsPatch, RestartTarget, RestartTimeouts } from '@shared/contract';
import type { Role } from '@shared/domain';

const MIN = 60_000;

/** Decode of a large model can take half an hour to load; systemd's own default TimeoutStartSec is 90 s. */
export const DEFAULT_SERVER_TIMEOUTS: RestartTimeouts = {
  drainMs: 5 * MIN,
  activeMs: 35 * MIN,
  healthMs: 35 * MIN,
  // smg checks workers every 60 s by default and needs 2 successes: allow several rounds.
  routerMs: 5 * MIN,
};

export const DEFAULT_ROUTER_TIMEOUTS: RestartTimeouts = {
  drainMs: 5 * MIN,
  activeMs: 3 * MIN,
  healthMs: 3 * MIN,
  routerMs: 5 * MIN,
};

export function defaultSettings(): RestartSettings {
  return {
    readOnly: false,
    readOnlyLocked: false,
    polkit: false,
    stackOrder: 'parallel',
    stackIncludesRouter: true,
    timeouts: { server: { ...DEFAULT_SERVER_TIMEOUTS }, router: { ...DEFAULT_ROUTER_TIMEOUTS } },
  };
}

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

export function applyPatch(cur: RestartSettings, patch: RestartSettingsPatch): RestartSettings {
  if (patch.readOnly === false && cur.readOnlyLocked)
    throw new SettingsError(
      'read-only mode was switched on when PD Console started and cannot be switched off here',
    );
  const defined = <T extends object>(o: T | undefined): Partial<T> =>
    Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
  return {
    ...cur,
    ...defined({
      readOnly: patch.readOnly,
      polkit: patch.polkit,
      stackOrder: patch.stackOrder,
      stackIncludesRouter: patch.stackIncludesRouter,
    }),
    timeouts: {
      server: { ...cur.timeouts.server, ...defined(patch.timeouts?.server) },
      router: { ...cur.timeouts.router, ...defined(patch.timeouts?.router) },
    },
  };
}

/** The place of each role in a restart of several of them (lower first). */
export function roleRank(settings: Pick<RestartSettings, 'stackOrder'>): Record<Role, number> {
  return settings.stackOrder === 'decode-first'
    ? { decode: 0, prefill: 1, router: 2 }
    : { prefill: 0, decode: 1, router: 2 };
}

/** The stages of a restart: services in one stage run together; the next stage waits for their health. */
export function stagesFor(
  target: RestartTarget,
  settings: RestartSettings,
  present: readonly Role[],
): Role[][] {
  const has = (r: Role): boolean => present.includes(r);
  if (target !== 'stack') return has(target) ? [[target]] : [];
  const rank = roleRank(settings);
  const inOrder = (['prefill', 'decode'] as Role[]).sort((a, b) => rank[a] - rank[b]);
  const servers: Role[][] = settings.stackOrder === 'parallel' ? [inOrder] : inOrder.map((r) => [r]);
  const stages = servers.map((s) => s.filter(has)).filter((s) => s.length > 0);
  if (settings.stackIncludesRouter && has('router')) stages.push(['router']);
  return stages;
}

export function timeoutsFor(role: Role, settings: RestartSettings): RestartTimeouts {
  return { ...(role === 'router' ? settings.timeouts.router : settings.timeouts.server) };
}
