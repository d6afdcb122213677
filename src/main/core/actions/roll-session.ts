// One roll from plan to run, the same for `pd-console restart` on a fleet and the UI's restart dialog: the
// hosts' identities decide root or sudo per host, the router's view now decides order and pre-flight checks,
// who holds each worker's GPUs is read on the running workers, and the run goes over the hosts' own links.
// The caller decides how to show the plan and whether to start.
import { randomBytes } from 'node:crypto';
import type { RestartSettings, RollHealth, RollPlan, RollTarget, RollWorker } from '@shared/contract';
import type { HostConfig } from '@shared/domain';
import type { Clock } from '../clock';
import type { SshConnection } from '../ssh/connection';
import type { UnitJournalTail } from '../journal/unit-tail';
import { buildRollPlan, type RollPlanInput } from './roll-plan';
import { readPlanGpuOwners } from './gpu-owners';
import { DEFAULT_ROLL_TIMEOUTS, RollRun, type RollRunOptions } from './roll-run';
import { rollLinks, serviceOf } from './roll-links';
import { restartImpact } from './impact';
import { IDENTITY_COMMAND, parseIdentity, type HostIdentity } from './unit-commands';
import { privilegeOf } from './plan';
import type { ScrapeFeed } from '../monitor/scrape-feed';

/** What a roll needs of a deployment: its workers, one link and one host config per host, its clock. */
export interface RollContext {
  deploymentId: string;
  workers: RollWorker[];
  links: ReadonlyMap<string, SshConnection>;
  hosts: ReadonlyMap<string, HostConfig>;
  clock: Clock;
  settings: RestartSettings;
  journalOf?: (hostId: string, unit: string) => UnitJournalTail | undefined;
  /** The deployment's monitor scrapes (the router's metrics are read from these). */
  scrapes: ScrapeFeed;
  /** Said in the plan's warnings (workers left out of the roll, and why). */
  notes?: string[];
  pollMs?: number;
  minRealGapMs?: number;
}

export interface PreparedRoll {
  id: string;
  plan: RollPlan;
  /** Starts the planned roll; call at most once. `withoutGpuCheck`: the operator's choice (RollRunOptions). */
  start(onChange?: RollRunOptions['onChange'], opts?: { withoutGpuCheck?: boolean }): RollRun;
  /** Ends the roll's own pollers; call when the run is done, or when it is never started. */
  dispose(): void;
}

async function identities(links: ReadonlyMap<string, SshConnection>): Promise<Map<string, HostIdentity>> {
  const out = new Map<string, HostIdentity>();
  await Promise.all(
    [...links].map(async ([hostId, conn]) => {
      try {
        const id = parseIdentity(
          (await conn.exec(IDENTITY_COMMAND, { timeoutMs: 10_000, maxBytes: 16 * 1024 })).stdout,
        );
        if (id) out.set(hostId, id);
      } catch {
        // Unknown identity: the host's configured user decides between root and sudo, as for one restart.
      }
    }),
  );
  return out;
}

export async function prepareRoll(target: RollTarget, ctx: RollContext): Promise<PreparedRoll> {
  const ids = await identities(ctx.links);
  const privilege = (hostId: string) =>
    privilegeOf(ids.get(hostId) ?? null, ctx.settings, ctx.hosts.get(hostId)!);
  const id = `roll-${ctx.clock.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  const io = rollLinks({
    rollId: id,
    deploymentId: ctx.deploymentId,
    workers: ctx.workers,
    links: ctx.links,
    clock: ctx.clock,
    settings: ctx.settings,
    privilegeOf: privilege,
    userOf: (h) => ids.get(h)?.user ?? ctx.hosts.get(h)?.user ?? 'operator',
    scrapes: ctx.scrapes,
    ...(ctx.journalOf ? { journalOf: ctx.journalOf } : {}),
    ...(ctx.pollMs !== undefined ? { pollMs: ctx.pollMs } : {}),
    ...(ctx.minRealGapMs !== undefined ? { minRealGapMs: ctx.minRealGapMs } : {}),
  });
  let health = new Map<string, RollHealth>();
  let healthProblem: string | null = null;
  try {
    health = await io.readHealth();
  } catch (err) {
    healthProblem = (err as Error).message;
  }
  const input: RollPlanInput = {
    workers: ctx.workers,
    target,
    health,
    privilegeOf: privilege,
    readOnly: ctx.settings.readOnly,
    order: ctx.settings,
    impactOf: (w) => {
      const router = ctx.workers.find((x) => x.role === 'router');
      // Judged by the URL the router knows the worker by (its id), as its health is.
      const service = w.role === 'router' ? serviceOf(w) : { ...serviceOf(w), apiUrl: w.id };
      return restartImpact(
        w.role,
        service,
        ctx.scrapes.latest(w.name),
        router && ctx.scrapes.latest(router.name),
      );
    },
  };
  const draft = buildRollPlan(input);
  // The GPU check of every worker the roll would stop, before anything is: a refused plan stops nothing anyway.
  const plan = draft.refused
    ? draft
    : buildRollPlan({
        ...input,
        gpuOwners: await readPlanGpuOwners(draft.workers, ctx.workers, ctx.links),
      });
  if (healthProblem) plan.warnings.push(`the router's view could not be read: ${healthProblem}`);
  plan.warnings.push(...(ctx.notes ?? []));
  return {
    id,
    plan,
    start: (onChange, opts) =>
      new RollRun({
        id,
        plan,
        workers: ctx.workers,
        io,
        timeouts: { ...DEFAULT_ROLL_TIMEOUTS, routerMs: ctx.settings.timeouts.server.routerMs },
        ...(onChange ? { onChange } : {}),
        ...(opts?.withoutGpuCheck ? { withoutGpuCheck: true } : {}),
      }),
    dispose: () => io.dispose(),
  };
}
