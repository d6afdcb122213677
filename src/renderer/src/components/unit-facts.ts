// Why a failing unit fails, beside where: its condition's evidence as the card, the service page and a fleet
// worker's page all show it — the exit status, the restart count, when it entered its state, and the last error
// its journal printed with the moment to open the journal at. One reading for all three, so the page never says
// "Result success, since 47 min ago" beside a card that says crash-looping.
import type { ServiceObservation } from '@shared/domain';
import type { UnitCondition } from '@shared/unit-condition';

export interface UnitFacts {
  /** The unit is failing (crash loop, failed, not answering /health): its evidence is worth a row each. */
  failing: boolean;
  /** When it entered its present state. */
  since: number | null;
  restarts: number;
  /** "1", "SIGKILL". */
  exitStatus?: string;
  /** The last error line of its journal, and when it was printed. */
  lastError?: { ts: number; text: string };
  /** The condition's line already quotes that error: its own row then gives only its time and the link. */
  errorInCondition: boolean;
  /** Where "open the journal at the crash" opens: the error line, else the exit. */
  crashAt?: number;
}

const FAILING = new Set(['crash-looping', 'failed', 'not-answering']);

export function unitFacts(c: UnitCondition, obs: ServiceObservation | undefined): UnitFacts {
  const e = obs?.evidence;
  const failing = FAILING.has(c.kind);
  // An error printed before the current state began belongs to an earlier failure.
  const lastError =
    failing && e?.lastError && (c.since === null || e.lastError.ts >= c.since - 60_000)
      ? e.lastError
      : undefined;
  const crashAt = lastError?.ts ?? (failing ? e?.lastExit?.ts : undefined);
  return {
    failing,
    errorInCondition: lastError !== undefined && c.text.includes(lastError.text),
    since: c.since,
    restarts: c.restarts,
    ...(c.exitStatus !== undefined && failing ? { exitStatus: c.exitStatus } : {}),
    ...(lastError ? { lastError } : {}),
    ...(crashAt !== undefined ? { crashAt } : {}),
  };
}
