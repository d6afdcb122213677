// The real core opened on a demo host over real SSH, and a waiter for the observations it emits: the setup
// the integration tests share.
import { Core } from '../../src/main/core/core';
import { systemClock } from '../../src/main/core/clock';
import { startDemoHost, type DemoHost, type DemoHostOptions } from '../../src/main/demo';
import { standardDeployment } from '../../src/main/compose';
import type { Observation, ServiceObservation } from '../../src/shared/domain';

export interface DemoCore {
  core: Core;
  demo: DemoHost;
  deploymentId: string;
  /** Shuts the core down, then the demo host. */
  stop(): Promise<void>;
}

/**
 * Starts a demo host on the real clock and a CLI-shell core polling it every `intervalMs`, with the
 * standard three-unit deployment opened. The demo host is stopped again if the core cannot open it.
 */
export async function openDemoCore(opts: {
  seed: number;
  intervalMs: number;
  demo?: DemoHostOptions;
  /** Feature services to wire to the core before the demo deployment opens (they hear its 'opened' hook). */
  attach?: (core: Core) => void;
}): Promise<DemoCore> {
  const demo = await startDemoHost({ clock: systemClock, seed: opts.seed, ...opts.demo });
  const core = new Core({
    shell: 'cli',
    version: 'test',
    intervalMs: opts.intervalMs,
    demo: async () => ({
      ...demo,
      deployment: standardDeployment({ id: 'demo', label: 'demo', kind: 'demo' }),
    }),
  });
  const stop = async (): Promise<void> => {
    await core.shutdown();
    await demo.stop();
  };
  try {
    opts.attach?.(core);
    const summary = await core.openDemo({});
    return { core, demo, deploymentId: summary.deployment.id, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The first observation from now on that satisfies `pred`; rejects after `timeoutMs` of real time. */
export function nextObservation(
  core: Core,
  pred: (o: Observation) => boolean,
  timeoutMs: number,
): Promise<Observation> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      core.off('observation', on);
      reject(new Error(`no matching observation within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (o: Observation): void => {
      if (!pred(o)) return;
      clearTimeout(t);
      core.off('observation', on);
      resolve(o);
    };
    core.on('observation', on);
  });
}

/** The observation of the service with `role` (the standard deployment has one of each). */
export function serviceOf(o: Observation, role: string): ServiceObservation {
  const s = o.services.find((x) => x.role === role);
  if (!s) throw new Error(`observation of ${o.deploymentId} has no ${role} service`);
  return s;
}
