// The roll's I/O on real links: each host's SshConnection runs its commands, the router is read through
// its own host's link, and a worker's rank-0 unit is started and followed by the one-service restart
// (restartService with the start command), so journal, load progress and every failure message are the
// same as for a single restart.
import type { RestartSettings, RollHealth, RollUnit, RollWorker } from '@shared/contract';
import type { Role, ServiceConfig } from '@shared/domain';
import type { Clock } from '../clock';
import type { SshConnection } from '../ssh/connection';
import { UnitJournalTail } from '../journal/unit-tail';
import type { ScrapeFeed } from '../monitor/scrape-feed';
import { RestartRun } from './operation';
import { judgeWorker, readRouter } from './router-watch';
import type { FollowResult, RollIo } from './roll-run';
import { rankZero } from './roll-plan';
import { restartService, STEP_LABELS, stepsFor } from './service-restart';
import { timeoutsFor } from './restart-settings';
import { sudoersLine, type Privilege } from './unit-commands';
import { unitVerbCommand } from './roll-commands';

export interface RollLinksOptions {
  rollId: string;
  deploymentId: string;
  workers: RollWorker[];
  /** The SSH link of each host, by host id. */
  links: ReadonlyMap<string, SshConnection>;
  /** The deployment's clock (the demo's accelerated one for the demo). */
  clock: Clock;
  pollMs?: number;
  minRealGapMs?: number;
  settings: RestartSettings;
  privilegeOf: (hostId: string) => Privilege;
  /** The monitor's journal tail of a unit, where one exists; otherwise the roll reads the journal itself. */
  journalOf?: (hostId: string, unit: string) => UnitJournalTail | undefined;
  /** The SSH user per host, for the sudoers line in a failure. */
  userOf?: (hostId: string) => string;
  /** The deployment's monitor scrapes, by service key: the router's metrics are read from these. */
  scrapes: ScrapeFeed;
}

export function serviceOf(w: RollWorker, u: RollUnit = rankZero(w)): ServiceConfig {
  return {
    role: w.role,
    hostId: u.hostId,
    unit: u.unit,
    apiUrl: w.apiUrl,
    ...(w.metricsUrl ? { metricsUrl: w.metricsUrl } : {}),
    ...(w.healthUrl ? { healthUrl: w.healthUrl } : {}),
    gpus: u.gpus,
  };
}

/** The sudoers line that allows a roll over these units: stop, start and restart of each, nothing else. */
export function rollSudoersLine(user: string, units: readonly string[]): string {
  const base = sudoersLine(user, units);
  const extra = units.flatMap((u) =>
    (['stop', 'start'] as const).map((v) => `/usr/bin/${unitVerbCommand(v, u, 'polkit')}`),
  );
  return `${base}, ${extra.join(', ')}`;
}

export function rollLinks(o: RollLinksOptions): RollIo & { dispose(): void } {
  const routerWorker = o.workers.find((w) => w.role === 'router');
  const own: UnitJournalTail[] = [];
  const link = (hostId: string): SshConnection => {
    const l = o.links.get(hostId);
    if (!l) throw new Error(`no SSH link to host ${hostId} in this deployment`);
    return l;
  };
  const journalOf = (u: RollUnit): UnitJournalTail => {
    const shared = o.journalOf?.(u.hostId, u.unit);
    if (shared) return shared;
    const conn = link(u.hostId);
    const tail = new UnitJournalTail({
      exec: (c, opts) => conn.exec(c, opts),
      isConnected: () => conn.isConnected,
      unit: u.unit,
      clock: o.clock,
    });
    own.push(tail);
    return tail;
  };
  const pacer = { clock: o.clock, pollMs: o.pollMs ?? 1000, minRealGapMs: o.minRealGapMs ?? 100 };
  return {
    pacer,
    link,
    async readHealth(fresh = false): Promise<Map<string, RollHealth>> {
      if (!routerWorker) throw new Error('this deployment has no router to ask');
      const router = serviceOf(routerWorker);
      // The roll's worker names are the deployment's service keys (rollWorkersOf, rollWorkersOfFleet).
      const scrape = !router.metricsUrl
        ? undefined
        : fresh
          ? await o.scrapes.next(routerWorker.name)
          : o.scrapes.latest(routerWorker.name);
      const reading = await readRouter(link(router.hostId).httpAgent(), router, scrape?.exposition);
      const out = new Map<string, RollHealth>();
      // Judged by the URL the router knows the worker by: its API URL as seen from its own host may differ
      // (127.0.0.1 there, the host's address in the router's list).
      for (const w of o.workers) {
        if (w.role === 'router') continue;
        const verdicts = (w.routerUrls?.length ? w.routerUrls : [w.id]).map((url) =>
          judgeWorker(reading, { ...serviceOf(w), apiUrl: url }),
        );
        out.set(w.id, verdicts.find((v) => v.state !== 'healthy') ?? verdicts[0]);
      }
      return out;
    },
    async followStart({ worker, unit, command, onProgress }): Promise<FollowResult> {
      const role: Role = worker.role;
      const steps = stepsFor(role, false).map((kind) => ({ kind, label: STEP_LABELS[kind](role) }));
      const run: RestartRun = new RestartRun(
        {
          id: `${o.rollId}-${worker.name}`,
          deploymentId: o.deploymentId,
          hostLabel: unit.hostLabel,
          target: role,
          requestedBy: 'roll',
          drain: false,
          stages: [[role]],
          services: [{ role, unit: unit.unit, steps }],
        },
        o.clock,
        () => onProgress(relabel(run)),
        () => undefined,
      );
      const user = o.userOf?.(unit.hostId) ?? 'operator';
      const res = await restartService({
        run,
        conn: link(unit.hostId),
        journal: journalOf(unit),
        pacer,
        scrapes: o.scrapes,
        hostLabel: unit.hostLabel,
        service: serviceOf(worker, unit),
        // A worker's own router step would read the router through the worker's host, whose view of the
        // router's address may differ: the roll's next step reads it through the router's own link.
        router: undefined,
        workers: o.workers.filter((w) => w.role !== 'router').map((w) => serviceOf(w)),
        privilege: o.privilegeOf(unit.hostId),
        command,
        timeouts: timeoutsFor(role, o.settings),
        sudoersLine: rollSudoersLine(
          user,
          worker.units.filter((u) => u.hostId === unit.hostId).map((u) => u.unit),
        ),
        routerRestartsNext: false,
      });
      onProgress(relabel(run));
      return res;
    },
    dispose(): void {
      for (const t of own) t.close();
    },
  };
}

function relabel(run: RestartRun): ReturnType<RestartRun['snapshot']> {
  const op = run.snapshot();
  for (const s of op.services)
    for (const st of s.steps) {
      if (st.kind === 'router' && s.role !== 'router' && st.state === 'skipped')
        st.detail = 'followed by the roll: the router is read through its own host';
      // The one-service restart words its command step for a restart; here it sent a start.
      if (st.kind === 'command' && st.detail?.endsWith('systemd queued the restart'))
        st.detail = st.detail.replace(/restart$/, 'start');
    }
  return op;
}
