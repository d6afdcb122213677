// The core's 'dashboard' pushes laid over the snapshot a window holds. A push is whole, or carries what changed
// since the previous round's push (DashboardChanges, src/shared/api/dashboard.ts), so a window keeps the rest
// from what it holds. A window that asks for the whole snapshot (opening a deployment, the connection back) lays
// the pushes that arrived after it asked over the answer: the answer may be a round older than them, and what
// they left out is then what the answer has.
import type { DashboardPush, DashboardSnapshot } from '@shared/contract';

/** A snapshot on its own (the first push after nobody listened, a review's cursor). */
export function isWhole(p: DashboardPush): p is DashboardSnapshot {
  return !('since' in p);
}

/** The snapshot after a push: the push, with the values it did not change and the parts it left out as held. */
export function layOver(held: DashboardSnapshot, p: DashboardPush): DashboardSnapshot {
  if (isWhole(p)) return p;
  // Every other part is the push's own, absent ones included (routerWorkers without a router scrape).
  const { since: _since, ...round } = p;
  return {
    ...round,
    values: { ...held.values, ...p.values },
    notExposed: p.notExposed ?? held.notExposed,
    gpu: p.gpu ?? held.gpu,
  };
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
