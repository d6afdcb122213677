// Runs a planned restart stage by stage. A stage's services restart together; the next stage starts only
// when every service of the current one succeeded (its health was observed), and a cancel request is
// honoured between stages. A service that fails does not abandon a parallel sibling mid-restart: that one is
// followed to its end, then the operation stops.
import type { RestartFailure, RestartPlan } from '@shared/contract';
import type { DeploymentConfig, Role } from '@shared/domain';
import type { SshConnection } from '../ssh/connection';
import type { UnitJournalTail } from '../journal/unit-tail';
import type { RestartRun } from './operation';
import type { RouterRegistration } from './drain';
import { restartService, type ServiceResult } from './service-restart';
import type { Privilege } from './unit-commands';
import type { Pacer } from './wait';
import type { ScrapeFeed } from '../monitor/scrape-feed';

export interface RunDeps {
  run: RestartRun;
  plan: RestartPlan;
  deployment: DeploymentConfig;
  conn: SshConnection;
  /** The monitor's journal tail of a unit of the deployment. */
  journalOf: (unit: string) => UnitJournalTail;
  pacer: Pacer;
  scrapes: ScrapeFeed;
  drain: Map<Role, RouterRegistration>;
}

const RANK: Record<ServiceResult['state'], number> = { failed: 3, unknown: 2, cancelled: 1, succeeded: 0 };

export async function runRestart(d: RunDeps): Promise<void> {
  const { run, plan, deployment } = d;
  const router = deployment.services.find((s) => s.role === 'router');
  const workers = deployment.services.filter((s) => s.role !== 'router');
  const routerRestartsLater = plan.stages.flat().includes('router');
  try {
    for (const stage of plan.stages) {
      if (run.cancelRequested) {
        run.end('cancelled');
        return;
      }
      const results = await Promise.all(
        stage.map((role) => {
          const planned = plan.services.find((s) => s.role === role)!;
          const service = deployment.services.find((s) => s.role === role)!;
          return restartService({
            run,
            conn: d.conn,
            journal: d.journalOf(service.unit),
            pacer: d.pacer,
            scrapes: d.scrapes,
            hostLabel: plan.hostLabel,
            service,
            router,
            workers,
            privilege: planned.privilege as Privilege,
            command: planned.command,
            timeouts: planned.timeouts,
            sudoersLine: plan.sudoersLine,
            drain: d.drain.get(role),
            routerRestartsNext: role !== 'router' && routerRestartsLater,
          });
        }),
      );
      const worst = results.reduce((a, b) => (RANK[b.state] > RANK[a.state] ? b : a));
      if (worst.state !== 'succeeded') {
        run.end(worst.state, worst.failure ?? stopNote(worst));
        return;
      }
    }
    run.end('succeeded');
  } catch (err) {
    // A bug, not a host answer: say so instead of leaving the operation "running" forever.
    run.end('failed', {
      step: 'start',
      message: `the restart stopped on an internal error: ${(err as Error).message}`,
      hint: 'Check the units on the host before acting again; please report this error.',
    });
  }
}

function stopNote(r: ServiceResult): RestartFailure | undefined {
  if (r.state === 'cancelled') return undefined;
  return { step: 'start', message: `stopped: ${r.state}` };
}
