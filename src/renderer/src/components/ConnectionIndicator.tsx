// The link to the host, stated truthfully: connected / no answer since T (age) / lost since T (age), reconnecting
// (attempt n, next in s) / failed. The age counts up: a duration frozen into the words read "3.0 s" for minutes.
import { useEffect, useState } from 'react';
import type { ConnectionStatus } from '@shared/domain';
import { formatClock } from '../format';
import { ago } from './staleness';

export function connectionText(
  s: ConnectionStatus,
  now: number,
): { text: string; tone: 'ok' | 'warn' | 'bad' | 'idle' } {
  switch (s.state) {
    case 'connected':
      return { text: 'connected', tone: 'ok' };
    case 'connecting':
      return s.lostSince !== undefined
        ? {
            text: `lost since ${formatClock(s.lostSince)} (${ago(s.lostSince, now)}) — reconnecting (attempt ${s.attempt})…`,
            tone: 'bad',
          }
        : { text: s.attempt > 1 ? `connecting (attempt ${s.attempt})` : 'connecting…', tone: 'warn' };
    case 'stale':
      return {
        text: `no answer since ${formatClock(s.since)} (${ago(s.since, now)}) — ${s.reason}`,
        tone: 'warn',
      };
    case 'reconnecting': {
      const next = Math.max(0, Math.ceil((s.nextAttemptAt - now) / 1000));
      return {
        text: `lost since ${formatClock(s.since)} (${ago(s.since, now)}) — reconnecting (attempt ${s.attempt}, next in ${next} s): ${s.lastError}`,
        tone: 'bad',
      };
    }
    case 'failed':
      return { text: `failed: ${s.reason}${s.hint ? ` — ${s.hint}` : ''}`, tone: 'bad' };
    default:
      return { text: 'not connected', tone: 'idle' };
  }
}

export function ConnectionIndicator({ status }: { status: ConnectionStatus }): React.JSX.Element {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const { text, tone } = connectionText(status, now);
  return (
    <div
      className={`conn conn-${tone}`}
      data-testid="connection-state"
      data-state={status.state}
      role="status"
      title={text}
    >
      <span className="dot" aria-hidden />
      {text}
    </div>
  );
}
