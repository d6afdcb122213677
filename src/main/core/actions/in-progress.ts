// What this console is restarting right now, per deployment, read from the restart and roll progress it pushes
// anyway: the verdict does not blame the router for a worker the operator is restarting, and says the restart
// instead ("decode-1 is being restarted by you — roll 2/3"). Services are named as the deployment names them:
// a fleet worker by its service id (`decode-1`), a one-host pair's service by its role.
import type { RestartOperation, RollOperation } from '@shared/contract';

export interface OperatorAction {
  kind: 'restart' | 'roll';
  /** The operation's id (restart operation or roll). */
  id: string;
  /** The services being restarted now: fleet service ids, or roles in a one-host pair. */
  current: string[];
  /** A roll's place: the current worker's position among all of it (1-based). */
  position?: { index: number; total: number };
  /** What the current service's restart is doing: "waiting for /health", "loading weights: shard 9/17 (53 %)". */
  step?: string;
  /** Why a roll waits (a host link is down). */
  paused?: string;
}

/** A running restart's services being restarted now, with the step each is at. */
function fromRestart(op: RestartOperation): OperatorAction | null {
  if (op.state !== 'running') return null;
  const running = op.services.filter((s) => s.state === 'running');
  if (running.length === 0) return null;
  const first = running[0];
  const step = first.progress?.label ?? runningStep(first.steps);
  return {
    kind: 'restart',
    id: op.id,
    current: running.map((s) => s.role),
    ...(step ? { step } : {}),
  };
}

function runningStep(
  steps: readonly { state: string; label: string; detail?: string }[],
): string | undefined {
  const s = steps.find((x) => x.state === 'running');
  return s ? (s.detail ? `${s.label}: ${s.detail}` : s.label) : undefined;
}

/** A running roll's current worker, by the name the deployment gives it, and its place in the roll. */
function fromRoll(op: RollOperation): OperatorAction | null {
  if (op.state !== 'running' && op.state !== 'paused') return null;
  const index = op.workers.findIndex((w) => w.workerId === op.current);
  if (index < 0) return null;
  const w = op.workers[index];
  const follow = w.follow?.services[0];
  const step =
    follow?.progress?.label ?? (follow ? runningStep(follow.steps) : undefined) ?? runningStep(w.steps);
  return {
    kind: 'roll',
    id: op.id,
    current: [w.name],
    position: { index: index + 1, total: op.workers.length },
    ...(step ? { step } : {}),
    ...(op.paused ? { paused: op.paused.reason } : {}),
  };
}

/** Bounded: operations are kept only while they run, and a deployment runs a handful at most. */
const MAX_PER_DEPLOYMENT = 16;

export class OperatorActions {
  private readonly byDeployment = new Map<string, Map<string, OperatorAction>>();

  /** A restart's progress snapshot (the `restartProgress` push). */
  restart(op: RestartOperation): void {
    this.put(op.deploymentId, `restart:${op.id}`, fromRestart(op));
  }

  /** A roll's progress snapshot (the `rollProgress` push). */
  roll(deploymentId: string, op: RollOperation): void {
    this.put(deploymentId, `roll:${op.id}`, fromRoll(op));
  }

  /** What runs now on a deployment; empty when nothing does. */
  of(deploymentId: string): OperatorAction[] {
    return [...(this.byDeployment.get(deploymentId)?.values() ?? [])];
  }

  forget(deploymentId: string): void {
    this.byDeployment.delete(deploymentId);
  }

  private put(deploymentId: string, key: string, action: OperatorAction | null): void {
    let m = this.byDeployment.get(deploymentId);
    if (!action) {
      m?.delete(key);
      if (m?.size === 0) this.byDeployment.delete(deploymentId);
      return;
    }
    if (!m) this.byDeployment.set(deploymentId, (m = new Map()));
    if (!m.has(key) && m.size >= MAX_PER_DEPLOYMENT) m.delete(m.keys().next().value!);
    m.set(key, action);
  }
}
