// A service's /health as the cards and worker pages say it. /health is read every few polls and the last answer
// is kept, so an ok read before the unit left the active state is not "healthy" now: a crash-looping decode
// read "activating · healthy". Such an answer says when it was read.
import type { HealthResult, UnitState } from '@shared/domain';
import { formatDuration } from '../format';

export interface HealthText {
  text: string;
  tone: 'ok' | 'bad' | 'muted';
  /** An ok from before the unit left the active state. */
  stale: boolean;
}

export function healthText(
  health: HealthResult | undefined,
  systemd: UnitState | undefined,
  now: number,
): HealthText {
  if (!health) return { text: 'not checked yet', tone: 'muted', stale: false };
  if (health.ok && systemd && systemd.activeState !== 'active')
    return {
      text: `ok ${formatDuration(Math.max(0, now - health.checkedAt))} ago, before it went ${systemd.activeState}`,
      tone: 'muted',
      stale: true,
    };
  return health.ok
    ? { text: 'healthy', tone: 'ok', stale: false }
    : { text: health.detail, tone: 'bad', stale: false };
}
