// The exit codes of `pd-console restart`, for one service and for a roll alike: scripts branch on them.
export const EXIT = { ok: 0, failed: 1, usage: 2, unknown: 3, cancelled: 4 } as const;

/** How an operation (a restart or a roll) ended, as the exit code. */
export function exitOfEnd(state: 'succeeded' | 'failed' | 'unknown' | 'cancelled' | string): number {
  return state === 'succeeded'
    ? EXIT.ok
    : state === 'failed'
      ? EXIT.failed
      : state === 'unknown'
        ? EXIT.unknown
        : EXIT.cancelled;
}
