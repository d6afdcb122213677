// A systemd unit's state as property rows, shown alike on the service page and on a fleet's worker page, read
// with the unit's condition (shared/unit-condition.ts) so they never contradict the card: "since" is when the
// unit entered its present state (systemd's StateChangeTimestamp), not when it last entered "active" — a
// crash-looping decode read "Since … 47 min ago" beside a card saying auto-restart — and the exit status of a
// failing unit stands beside its restart count.
import type { ReactNode } from 'react';
import type { UnitState } from '@shared/domain';
import type { UnitCondition } from '@shared/unit-condition';
import { formatDateTime, formatDuration } from '../format';

export function unitStateProps(
  sd: UnitState | undefined,
  now: number,
  condition?: UnitCondition,
): [string, ReactNode][] {
  const since = condition?.since ?? sd?.stateChangeTimestamp ?? sd?.activeEnterTimestamp ?? null;
  const at = (ts: number): string => `${formatDateTime(ts)} (${formatDuration(Math.max(0, now - ts))} ago)`;
  const rows: [string, ReactNode][] = [
    ['ActiveState', sd?.activeState ?? '—'],
    ['SubState', sd?.subState ?? '—'],
    ['MainPID', sd ? sd.mainPid || '—' : '—'],
    ['State since', since !== null ? at(since) : '—'],
  ];
  if (sd?.activeState === 'active' && sd.activeEnterTimestamp && sd.activeEnterTimestamp !== since)
    rows.push(['Active since', at(sd.activeEnterTimestamp)]);
  rows.push(['NRestarts', sd ? sd.nRestarts : '—']);
  if (condition?.exitStatus !== undefined && condition.tone !== 'ok')
    rows.push([
      'Exit status',
      /^\d+$/.test(condition.exitStatus) ? `status ${condition.exitStatus}` : condition.exitStatus,
    ]);
  // systemd resets Result to "success" at each start: beside a crash loop it reads as health. Said when it is not.
  if (sd?.result && sd.result !== 'success') rows.push(['Result', sd.result]);
  return rows;
}
