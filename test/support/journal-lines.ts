// Waits on a unit's journal as the app reads it: the tests subscribe to the same tail the recorder follows, so
// a line that reaches them has reached every listener subscribed before them (the recorder among them).
import type { JournalEntry } from '@shared/contract';
import type { Core } from '../../src/main/core/core';

export interface JournalWatch {
  /** Resolves once the tail has read its backlog: every line logged from now on arrives live. */
  readonly live: Promise<void>;
  /** Resolves with the live lines once `count` of them satisfy `pred`; rejects naming `what` after `timeoutMs`. */
  lines(
    what: string,
    pred: (l: JournalEntry) => boolean,
    count: number,
    timeoutMs: number,
  ): Promise<JournalEntry[]>;
  dispose(): void;
}

/** Follows `unit` of the deployment (at the recorder's cadence unless `intervalMs` says otherwise). */
export function watchJournal(
  core: Core,
  deploymentId: string,
  unit: string,
  intervalMs = 2000,
): JournalWatch {
  const seen: JournalEntry[] = [];
  const waiters = new Set<() => void>();
  const sub = core.journalTail(deploymentId, unit).subscribe(
    {
      onLines: (lines) => {
        seen.push(...lines);
        for (const w of [...waiters]) w();
      },
    },
    { intervalMs },
  );
  return {
    live: sub.backlog.then(() => undefined),
    lines: (what, pred, count, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const hits = seen.filter(pred);
          if (hits.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hits);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `${what}: ${seen.filter(pred).length} of ${count} journal lines of ${unit} arrived within ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    dispose: () => sub.dispose(),
  };
}
