// The core's 'dashboard' pushes laid over the snapshot a window holds. A push leaves out the parts that rarely
// change when they are as in the previous round's push (DashboardPush, src/shared/api/dashboard.ts), so a window
// keeps them from what it holds. A window that asks for the whole snapshot (opening a deployment, the connection
// back) lays the pushes that arrived after it asked over the answer: the answer may be a round older than them,
// and what they left out is then what the answer has.
import type { DashboardPush, DashboardSnapshot } from '@shared/contract';

/** A push that carries every part: a snapshot on its own (the first one after nobody listened, a review's). */
export function isWhole(p: DashboardPush): p is DashboardSnapshot {
  return p.notExposed !== undefined && p.gpu !== undefined;
}

/** The snapshot after a push: the push, with the parts it left out as held. */
export function layOver(held: DashboardSnapshot, p: DashboardPush): DashboardSnapshot {
  // Every other part is the push's own, absent ones included (routerWorkers without a router scrape).
  return { ...p, notExposed: p.notExposed ?? held.notExposed, gpu: p.gpu ?? held.gpu };
}

/** What a window shows after a push: laid over what it holds, or the push itself when it is whole. */
export function afterPush(
  held: DashboardSnapshot | undefined,
  p: DashboardPush,
): DashboardSnapshot | undefined {
  if (held) return layOver(held, p);
  return isWhole(p) ? p : undefined;
}

export interface AskedSnapshot {
  /** The answer with every push of its deployment since the ask laid over it; stops keeping them. */
  settle(answer: DashboardSnapshot): DashboardSnapshot;
  /** The ask failed: stops keeping pushes for it. */
  drop(): void;
}

/** The pushes that arrive while whole snapshots are being asked for, kept per ask until its answer comes. */
export class PushesSinceAsked {
  private readonly asks = new Map<string, Set<DashboardPush[]>>();

  /** Call before asking for a deployment's snapshot. */
  ask(deploymentId: string): AskedSnapshot {
    const kept: DashboardPush[] = [];
    const open = this.asks.get(deploymentId) ?? new Set();
    open.add(kept);
    this.asks.set(deploymentId, open);
    const drop = (): void => {
      open.delete(kept);
      if (open.size === 0 && this.asks.get(deploymentId) === open) this.asks.delete(deploymentId);
    };
    return {
      settle: (answer) => {
        drop();
        return kept.reduce(layOver, answer);
      },
      drop,
    };
  }

  /** Every push goes through here: kept for each ask of its deployment still waiting for its answer. */
  pushed(p: DashboardPush): void {
    for (const kept of this.asks.get(p.deploymentId) ?? []) kept.push(p);
  }
}
