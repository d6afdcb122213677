// A systemd unit's state as property rows (ActiveState through NRestarts), shown alike on the service page and
// on a fleet's worker page.
import type { ReactNode } from 'react';
import type { UnitState } from '@shared/domain';
import { formatDateTime, formatDuration } from '../format';

export function unitStateProps(sd: UnitState | undefined, now: number): [string, ReactNode][] {
  return [
    ['ActiveState', sd?.activeState ?? '—'],
    ['SubState', sd?.subState ?? '—'],
    ['MainPID', sd ? sd.mainPid || '—' : '—'],
    [
      'Since',
      sd?.activeEnterTimestamp
        ? `${formatDateTime(sd.activeEnterTimestamp)} (${formatDuration(now - sd.activeEnterTimestamp)} ago)`
        : '—',
    ],
    ['NRestarts', sd ? sd.nRestarts : '—'],
  ];
}
