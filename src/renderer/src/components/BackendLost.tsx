// Browser mode lost its backend: the last data stays on screen under a scrim (never a blank or frozen-looking
// window), with what happened, how the reconnection is going and what to do. It goes away by itself when the
// connection is back.
import { useEffect, useState } from 'react';
import { onBridgeState, type BridgeStatus } from '../api/client';

export function BackendLost(): React.JSX.Element | null {
  const [status, setStatus] = useState<BridgeStatus | null>(null);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => onBridgeState(setStatus), []);
  const lost = status?.lost ?? false;
  useEffect(() => {
    if (!lost) return;
    const t = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(t);
  }, [lost]);
  if (!status || !lost) return null;
  const inS = status.retryAt ? Math.max(0, Math.ceil((status.retryAt - now) / 1000)) : 0;
  return (
    <div className="backend-lost-scrim" data-testid="backend-lost">
      <div className="backend-lost" role="alert">
        <h2>Backend lost — reconnecting</h2>
        <p data-testid="backend-lost-attempt">
          {status.state === 'connecting'
            ? `Attempt ${status.attempt}: connecting…`
            : `Attempt ${status.attempt} failed; next in ${inS} s.`}{' '}
          <span className="muted">— {status.detail}</span>
        </p>
        <p>
          What you see is the last data received, not live. Monitoring, recording and restarts run in the PD
          Console backend (the <code>npm run web</code> process): this page reconnects by itself when it is
          back on the same port. If you started a new one, open the URL it printed (each run has its own
          token).
        </p>
      </div>
    </div>
  );
}
