// Cockpit's trick for a spike: the journal lines around a moment picked on a chart or in the timeline
// (±20 s, journalctl --since/--until), in a drawer over the page.
import { useEffect, useState } from 'react';
import type { JournalAroundResult } from '@shared/contract';
import type { Role } from '@shared/domain';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { closeAround, useUi } from '../state/ui';
import { formatDateTime } from '../format';
import { JournalLines } from './JournalView';

export function AroundDrawer({ deploymentId }: { deploymentId: string }): React.JSX.Element | null {
  const { around } = useUi();
  if (!around) return null;
  return (
    <Around
      key={`${around.ts}|${around.role ?? ''}|${around.worker ?? ''}`}
      deploymentId={deploymentId}
      around={around}
    />
  );
}

function Around({
  deploymentId,
  around,
}: {
  deploymentId: string;
  around: { ts: number; role?: Role; worker?: string };
}): React.JSX.Element {
  const [res, setRes] = useState<JournalAroundResult | { error: string; hint?: string } | null>(null);
  useEffect(() => {
    let cancelled = false;
    api
      .journalAround({
        deploymentId,
        ts: around.ts,
        role: around.role,
        ...(around.worker !== undefined ? { worker: around.worker } : {}),
        spanMs: 20_000,
      })
      .then((r) => !cancelled && setRes(r))
      .catch(
        (err: unknown) => !cancelled && setRes({ error: errorText(err).message, hint: errorText(err).hint }),
      );
    return () => {
      cancelled = true;
    };
  }, [around, deploymentId]);
  return (
    <aside className="drawer" data-testid="journal-around" role="dialog" aria-label="Journal around a moment">
      <header>
        <h2>
          Journal around {formatDateTime(around.ts)} ±20 s{' '}
          {around.worker ? `(${around.worker})` : around.role ? `(${around.role})` : '(all units)'}
        </h2>
        <button onClick={closeAround} data-testid="journal-around-close" aria-label="Close">
          Close
        </button>
      </header>
      {!res && <p className="muted">Reading the journal…</p>}
      {res && 'error' in res && (
        <div className="error-box" role="alert">
          <strong>{res.error}</strong>
          {res.hint && <p>{res.hint}</p>}
        </div>
      )}
      {res && 'lines' in res && (
        <>
          <p className="muted small">
            {res.lines.length} lines{res.truncated ? ' (first 2000 only)' : ''} · <code>{res.command}</code>
          </p>
          {res.lines.length === 0 ? (
            <p className="muted">No journal lines in this window.</p>
          ) : (
            <div className="journal-box">
              <JournalLines lines={res.lines} highlightTs={around.ts} />
            </div>
          )}
        </>
      )}
    </aside>
  );
}
