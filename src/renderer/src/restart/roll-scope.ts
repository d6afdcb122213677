// Which restart buttons a running roll speaks for (no DOM or API imports, so it is tested in Node).
import type { RollOperation, RollTarget } from '@shared/contract';

/**
 * Whether a roll restarts (some of) what a button's target names: a role's button speaks for a roll of that role's
 * workers, a worker's for a roll that includes it (by its URL, the router's `host/unit` id, or its name).
 */
export function rollCovers(op: Pick<RollOperation, 'workers'>, target: RollTarget): boolean {
  switch (target.kind) {
    case 'deployment':
      return true;
    case 'role':
      return op.workers.some((w) => w.role === target.role);
    case 'worker':
      return op.workers.some(
        (w) =>
          w.workerId === target.worker ||
          w.workerId.endsWith(`/${target.worker}`) ||
          w.name === target.worker,
      );
  }
}
