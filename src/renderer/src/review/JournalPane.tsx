// The recorded journal around the review cursor (±20 s), following it while scrubbing or playing: the line
// nearest the cursor is marked. Reads at most a few times a second however fast the cursor moves.
import { useEffect, useRef, useState } from 'react';
import type { JournalAroundResult } from '@shared/contract';
import type { Role } from '@shared/domain';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { JournalLines } from '../components/JournalView';

const SPAN_MS = 20_000;
const MIN_INTERVAL_MS = 300;

export function JournalPane({
  deploymentId,
  cursor,
  roles,
}: {
  deploymentId: string;
  cursor: number;
  roles: Role[];
}): React.JSX.Element {
  const [role, setRole] = useState<Role | ''>('');
  const [res, setRes] = useState<JournalAroundResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const last = useRef(0);

  useEffect(() => {
    let cancelled = false;
    const wait = Math.max(0, MIN_INTERVAL_MS - (Date.now() - last.current));
    const t = setTimeout(() => {
      last.current = Date.now();
      api
        .journalAround({ deploymentId, ts: cursor, spanMs: SPAN_MS, ...(role ? { role } : {}) })
        .then((r) => {
          if (cancelled) return;
          setRes(r);
          setError(null);
        })
        .catch((err: unknown) => {
          if (cancelled) return;
          const e = errorText(err);
          setError(`${e.message}${e.hint ? ` — ${e.hint}` : ''}`);
        });
    }, wait);
    return () => {
      cancelled = true;
      clearTimeout(t);
    };
  }, [deploymentId, cursor, role]);

  // Keep the line nearest the cursor in view — inside the box only (scrollIntoView would scroll the page too).
  useEffect(() => {
    const b = box.current;
    const line = b?.querySelector<HTMLElement>('.nearest');
    if (!b || !line) return;
    const top = line.offsetTop - b.offsetTop;
    if (top < b.scrollTop || top + line.offsetHeight > b.scrollTop + b.clientHeight)
      b.scrollTop = Math.max(0, top - b.clientHeight / 2);
  }, [res]);

  return (
    <section className="review-journal" data-testid="review-journal">
      <header>
        <h3>Journal ±20 s around the cursor</h3>
        <select
          aria-label="Journal of"
          data-testid="review-journal-role"
          value={role}
          onChange={(e) => setRole(e.target.value as Role | '')}
        >
          <option value="">all units</option>
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <span className="muted small">
          {res ? `${res.lines.length} lines${res.truncated ? ' (first 2000)' : ''}` : 'reading…'}
        </span>
      </header>
      {error && (
        <p className="error-box" role="alert">
          {error}
        </p>
      )}
      <div className="journal-box" ref={box}>
        {res && res.lines.length === 0 ? (
          <p className="muted">No journal lines were recorded in this window.</p>
        ) : res ? (
          <JournalLines lines={res.lines} highlightTs={cursor} />
        ) : null}
      </div>
    </section>
  );
}
