// Rolling restarts from the UI: the requests and the progress event of a roll. A roll restarts one
// worker, every worker of a role one at a time, or the whole deployment in its safe order; its plan, steps and
// result types are the restart feature's (api/restart.ts), shared with `pd-console restart` on a fleet.
import type { RollOperation, RollPlan, RollTarget } from './restart';

export interface RollPlanArgs {
  deploymentId: string;
  target: RollTarget;
}

export interface StartRollArgs extends RollPlanArgs {
  requestedBy?: string;
  /**
   * The operator's choice to roll where the GPU check cannot be read (RollCheck.unreadable): without it such a
   * plan does not start. A check that was read and failed refuses the roll whatever this says.
   */
  withoutGpuCheck?: boolean;
}

export interface RollRef {
  deploymentId: string;
  rollId: string;
}

/** A roll's state, pushed on each change (at most every 200 ms) and every second while it runs. */
export interface RollProgress {
  deploymentId: string;
  operation: RollOperation;
}

export interface RollRequests {
  /** The plan, made from the router's view now: order, exact commands, checks, and why it would be refused. */
  planRoll(args: RollPlanArgs): Promise<RollPlan>;
  /** Plans again and starts; a refused plan, read-only mode or another restart of the deployment is an error. */
  startRoll(args: StartRollArgs): Promise<RollOperation>;
  getRoll(args: RollRef): Promise<RollOperation>;
  /** The running roll first, then the most recent finished ones. */
  listRolls(args: { deploymentId: string }): Promise<RollOperation[]>;
  /** Stops before the next worker; the worker being restarted is finished and followed to healthy first. */
  cancelRoll(args: RollRef): Promise<RollOperation>;
}

export const ROLL_REQUESTS = [
  'planRoll',
  'startRoll',
  'getRoll',
  'listRolls',
  'cancelRoll',
] as const satisfies readonly (keyof RollRequests)[];

export interface RollEvents {
  rollProgress: RollProgress;
}

export const ROLL_EVENTS = ['rollProgress'] as const satisfies readonly (keyof RollEvents)[];
