// Waits for a roll's end as the API pushes it (rollProgress): the first snapshot of `rollId` that is neither
// running nor paused.
import type { Core } from '../../src/main/core/core';
import type { RollOperation, RollProgress } from '../../src/shared/contract';

export function rollEnded(core: Core, rollId: string, timeoutMs = 60_000): Promise<RollOperation> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      core.off('rollProgress', on);
      reject(new Error(`roll ${rollId} did not end within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (p: RollProgress): void => {
      if (p.operation.id !== rollId || ['running', 'paused'].includes(p.operation.state)) return;
      clearTimeout(t);
      core.off('rollProgress', on);
      resolve(p.operation);
    };
    core.on('rollProgress', on);
  });
}
