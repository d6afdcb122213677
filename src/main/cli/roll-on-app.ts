// The app's rolling-restart channels as `pd-console restart` drives them — plan, start, follow to the end,
// cancel — for one open deployment. The CLI reaches the roll service only through here, the same requests and
// progress event the renderer uses, so a change of that channel family is one edit in this file.
import type { RollOperation, RollPlan, RollTarget } from '@shared/contract';
import type { App } from '../compose';

export type RollApp = { core: Pick<App['core'], 'on' | 'off'> } & {
  handlers: Pick<App['handlers'], 'planRoll' | 'startRoll' | 'cancelRoll' | 'getRoll'>;
};

export interface RollChannel {
  plan(): Promise<RollPlan>;
  /** Starts the roll and calls `onChange` with each state the app pushes until it ends; resolves with the end. */
  run(
    opts: { withoutGpuCheck: boolean },
    onChange: (op: RollOperation) => void,
  ): { started: Promise<RollOperation>; done: Promise<RollOperation>; cancel: () => Promise<void> };
}

const ENDED = new Set<RollOperation['state']>(['succeeded', 'failed', 'cancelled', 'unknown']);

export function rollChannel(app: RollApp, deploymentId: string, target: RollTarget): RollChannel {
  return {
    plan: () => app.handlers.planRoll({ deploymentId, target }),
    run: (opts, onChange) => {
      let rollId: string | null = null;
      let finish: (op: RollOperation) => void = () => undefined;
      const done = new Promise<RollOperation>((resolve) => (finish = resolve));
      // Heard from before the start: the first pushes of a fast roll are not missed.
      const early: RollOperation[] = [];
      const on = (e: { deploymentId: string; operation: RollOperation }): void => {
        if (e.deploymentId !== deploymentId) return;
        if (rollId === null) return void early.push(e.operation);
        if (e.operation.id !== rollId) return;
        onChange(e.operation);
        if (ENDED.has(e.operation.state)) {
          app.core.off('rollProgress', on);
          finish(e.operation);
        }
      };
      app.core.on('rollProgress', on);
      const started = app.handlers
        .startRoll({ deploymentId, target, withoutGpuCheck: opts.withoutGpuCheck })
        .then((op) => {
          rollId = op.id;
          for (const o of [op, ...early.splice(0)]) on({ deploymentId, operation: o });
          return op;
        })
        .catch((err: unknown) => {
          app.core.off('rollProgress', on);
          throw err;
        });
      return {
        started,
        done,
        cancel: async () => {
          if (rollId !== null) await app.handlers.cancelRoll({ deploymentId, rollId });
        },
      };
    },
  };
}
