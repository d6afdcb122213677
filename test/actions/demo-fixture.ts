// A real core connected over SSH to a demo host whose simulation runs `speed` times faster than real time,
// with the restart service on the same accelerated clock: minutes of model loading take seconds.
import { acceleratedClock, systemClock, type Clock } from '../../src/main/core/clock';
import { Core } from '../../src/main/core/core';
import { RestartService, type RestartServiceOptions } from '../../src/main/core/services/restart';
import { RollService } from '../../src/main/core/services/roll';
import { rollDeploymentsOf } from '../../src/main/core/services/roll-deployments';
import { startDemoHost, type DemoHost, type DemoHostOptions } from '../../src/main/demo';
import { standardDeployment } from '../../src/main/compose';
import type { DeploymentConfig, Role } from '../../src/shared/domain';
import type { RestartOperation } from '../../src/shared/contract';

export interface Fixture {
  core: Core;
  demo: DemoHost;
  restart: RestartService;
  /** Rolls (restarts of one named worker) on the same clock and pace as the restart service. */
  roll: RollService;
  clock: Clock;
  deploymentId: string;
  /** Every restartProgress snapshot pushed, in order. */
  pushed: RestartOperation[];
  stop(): Promise<void>;
}

export async function openFixture(
  opts: {
    speed?: number;
    demo?: DemoHostOptions;
    restart?: RestartServiceOptions;
    /** SSH user the core logs in as (the demo host accepts its user and root). */
    sshUser?: string;
    /** Edit the deployment the core is given (e.g. a misspelt unit). */
    deployment?: (d: Omit<DeploymentConfig, 'id'>) => Omit<DeploymentConfig, 'id'>;
    /** Feature services to wire to the core before the deployment opens (they hear its 'opened' hook). */
    attach?: (core: Core, restart: RestartService) => void;
  } = {},
): Promise<Fixture> {
  const clock = acceleratedClock(opts.speed ?? 50);
  const demo = await startDemoHost({ clock, seed: 11, ...opts.demo });
  const base = standardDeployment({ id: 'demo', label: 'demo', kind: 'demo' });
  const core = new Core({
    shell: 'cli',
    version: 'test',
    clock: systemClock,
    intervalMs: 500,
    demo: async () => ({
      ...demo,
      username: opts.sshUser ?? demo.username,
      deployment: opts.deployment ? opts.deployment(base) : base,
    }),
  });
  const restart = new RestartService(core, {
    clockFor: () => clock,
    pollMs: 1000,
    minRealGapMs: 20,
    userName: () => 'tester',
    ...opts.restart,
  });
  const roll = new RollService(
    core,
    restart,
    rollDeploymentsOf(
      core.deployments,
      () => clock,
      (id) => restart.scrapesOf(id),
    ),
    { pollMs: 1000, minRealGapMs: 20, userName: () => 'tester' },
  );
  const pushed: RestartOperation[] = [];
  core.on('restartProgress', (op) => pushed.push(op));
  opts.attach?.(core, restart);
  const summary = await core.openDemo({});
  return {
    core,
    demo,
    restart,
    roll,
    clock,
    deploymentId: summary.deployment.id,
    pushed,
    stop: async () => {
      roll.dispose();
      restart.dispose();
      await core.shutdown();
      await demo.stop();
    },
  };
}

/** Waits (real time) until the first observation with systemd state and a scrape of every server is in. */
export function firstScrape(f: Fixture, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const seen = new Set<Role>();
    const t = setTimeout(
      () => reject(new Error(`no scrape of every service within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const on = (e: { role: Role }): void => {
      seen.add(e.role);
      if (seen.size < 3) return;
      clearTimeout(t);
      f.core.hooks.off('scrape', on);
      resolve();
    };
    f.core.hooks.on('scrape', on);
  });
}

export function stepOf(op: RestartOperation, role: Role, kind: string) {
  const s = op.services.find((x) => x.role === role)?.steps.find((x) => x.kind === kind);
  if (!s) throw new Error(`operation ${op.id} has no ${role} ${kind} step`);
  return s;
}
