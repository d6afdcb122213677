// The link to the host, stated truthfully: connected / stale since T / reconnecting (attempt n, next in s) / failed.
import { useEffect, useState } from 'react';
import type { ConnectionStatus } from '@shared/domain';
import { formatClock } from '../format';

export function connectionText(
  s: ConnectionStatus,
  now: number,
): { text: string; tone: 'ok' | 'warn' | 'bad' | 'idle' } {
  switch (s.state) {
    case 'connected':
      return { text: 'connected', tone: 'ok' };
    case 'connecting':
      return { text: s.attempt > 1 ? `connecting (attempt ${s.attempt})` : 'connecting…', tone: 'warn' };
    case 'stale':
      return { text: `stale since ${formatClock(s.since)} — ${s.reason}`, tone: 'warn' };
    case 'reconnecting': {
      const next = Math.max(0, Math.ceil((s.nextAttemptAt - now) / 1000));
      return {
        text: `lost since ${formatClock(s.since)} — reconnecting (attempt ${s.attempt}, next in ${next} s): ${s.lastError}`,
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
    >
      <span className="dot" aria-hidden />
      {text}
    </div>
  );
}
