// A live journal tail of one unit: search, priority filter, a "problems" filter (what fails, whatever its
// priority: journal-filter.ts), pause/follow, copy. The buffer is bounded; lines arrive as the core reads them
// after the last cursor (journalctl -o json through the SSH link). Problem lines are marked in every view.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { JournalEntry } from '@shared/contract';
import type { Role } from '@shared/domain';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { formatDateTime } from '../format';
import { filterJournal, problemIndexes } from './journal-filter';

const MAX_LINES = 5000;
export const PRIORITIES = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'];

export function journalText(lines: readonly JournalEntry[]): string {
  return lines
    .map(
      (l) =>
        `${new Date(l.ts).toISOString()} ${l.identifier ?? ''}${l.pid ? `[${l.pid}]` : ''}: ${l.message}`,
    )
    .join('\n');
}

export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const ta = document.createElement('textarea');
  ta.value = text;
  document.body.appendChild(ta);
  ta.select();
  document.execCommand('copy');
  ta.remove();
}

/** Where a line was read: its host and, for a worker spanning nodes, the node rank. */
function origin(l: JournalEntry): string {
  return `${l.host ?? ''} r${l.nodeRank ?? 0}`;
}

export function JournalLines({
  lines,
  highlightTs,
}: {
  lines: readonly JournalEntry[];
  highlightTs?: number;
}): React.JSX.Element {
  const problems = useMemo(() => problemIndexes(lines), [lines]);
  // The host (and node rank) column tells lines apart; where every line comes from one place, the command above
  // the box says which, and a one-host deployment's journal reads as it always has.
  const labelled = useMemo(() => new Set(lines.map(origin)).size > 1, [lines]);
  // The line of the moment asked for is brought to the middle of its box once (a crash sits at the end of its
  // window); only the box scrolls, not the page under the drawer.
  const intoView = useCallback((el: HTMLLIElement | null) => {
    const box = el?.closest('.journal-box');
    if (!el || !box) return;
    box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 2;
  }, []);
  let nearest = -1;
  if (highlightTs !== undefined) {
    let best = Infinity;
    lines.forEach((l, i) => {
      const d = Math.abs(l.ts - highlightTs);
      if (d < best) {
        best = d;
        nearest = i;
      }
    });
  }
  return (
    <ol className={labelled ? 'journal-lines labelled' : 'journal-lines'}>
      {lines.map((l, i) => (
        <li
          key={l.cursor}
          ref={i === nearest ? intoView : undefined}
          className={`prio-${Math.min(l.priority, 6)}${problems.has(i) ? ' problem' : ''}${i === nearest ? ' nearest' : ''}`}
          data-testid="journal-line"
          data-priority={l.priority}
          data-problem={problems.has(i) ? 'true' : undefined}
        >
          <time>{formatDateTime(l.ts)}</time>
          {labelled && (
            <span className="host" data-testid="journal-host">
              {l.host}
              {l.nodeRank !== undefined ? ` r${l.nodeRank}` : ''}
            </span>
          )}
          <span className="ident">
            {l.identifier ?? ''}
            {l.pid ? `[${l.pid}]` : ''}
          </span>
          <span className="msg">{l.message}</span>
        </li>
      ))}
    </ol>
  );
}

/** `worker` (a fleet's service id) follows every unit of that worker, each on its host, labelled by host. */
export function JournalView({
  deploymentId,
  role,
  worker,
}: {
  deploymentId: string;
  role: Role;
  worker?: string;
}): React.JSX.Element {
  const [lines, setLines] = useState<JournalEntry[]>([]);
  const [frozen, setFrozen] = useState<JournalEntry[] | null>(null);
  const [query, setQuery] = useState('');
  const [maxPrio, setMaxPrio] = useState(7);
  const [problemsOnly, setProblemsOnly] = useState(false);
  const [status, setStatus] = useState<
    { s: 'loading' } | { s: 'live'; command: string } | { s: 'error'; message: string; hint?: string }
  >({ s: 'loading' });
  const [copied, setCopied] = useState(false);
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let followId: string | null = null;
    let disposed = false;
    const off = api.on('journal', (e) => {
      if (e.followId !== followId) return;
      if (e.error) setStatus({ s: 'error', message: e.error, hint: e.hint });
      if (e.lines.length > 0) {
        setStatus((st) => (st.s === 'error' ? { s: 'live', command: '' } : st));
        setLines((prev) => {
          const next = prev.concat(e.lines);
          return next.length > MAX_LINES ? next.slice(next.length - MAX_LINES) : next;
        });
      }
    });
    api
      .followJournal({ deploymentId, role, ...(worker !== undefined ? { worker } : {}), lines: 300 })
      .then((r) => {
        if (disposed) {
          void api.unfollowJournal({ followId: r.followId });
          return;
        }
        followId = r.followId;
        setLines(r.lines);
        setStatus({ s: 'live', command: r.command });
      })
      .catch((err: unknown) => setStatus({ s: 'error', ...errorText(err) }));
    return () => {
      disposed = true;
      off();
      if (followId) void api.unfollowJournal({ followId });
    };
  }, [deploymentId, role, worker]);

  const source = frozen ?? lines;
  const shown = useMemo(
    () => filterJournal(source, { query, maxPrio, problems: problemsOnly }),
    [source, query, maxPrio, problemsOnly],
  );

  useEffect(() => {
    if (frozen || !box.current) return;
    box.current.scrollTop = box.current.scrollHeight;
  }, [shown, frozen]);

  return (
    <section className="card journal" data-testid="journal">
      <header className="journal-head">
        <h2>Journal</h2>
        <input
          type="search"
          placeholder="Search messages"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          data-testid="journal-search"
          aria-label="Search journal messages"
        />
        <select
          value={maxPrio}
          onChange={(e) => setMaxPrio(Number(e.target.value))}
          data-testid="journal-priority"
          aria-label="Lowest priority shown"
          disabled={problemsOnly}
          title={problemsOnly ? 'Problems include every line at err and worse' : undefined}
        >
          {PRIORITIES.map((p, i) => (
            <option key={p} value={i}>
              {i === 7 ? 'all priorities' : `${p} and worse`}
            </option>
          ))}
        </select>
        <button
          data-testid="journal-problems"
          aria-pressed={problemsOnly}
          onClick={() => setProblemsOnly((p) => !p)}
          title="Tracebacks, errors, CUDA errors, OOM and kills, at any priority (SGLang logs a crash at info)"
        >
          Problems
        </button>
        <button
          data-testid="journal-follow"
          aria-pressed={!frozen}
          onClick={() => setFrozen((f) => (f ? null : lines))}
        >
          {frozen ? `Follow (${lines.length - frozen.length} new)` : 'Pause'}
        </button>
        <button
          data-testid="journal-copy"
          onClick={() =>
            void copyText(journalText(shown)).then(
              () => {
                setCopied(true);
                setTimeout(() => setCopied(false), 1500);
              },
              (err: unknown) => setStatus({ s: 'error', message: `copy failed: ${errorText(err).message}` }),
            )
          }
        >
          {copied ? 'Copied' : `Copy ${shown.length} lines`}
        </button>
      </header>
      {status.s === 'error' && (
        <div className="error-box" role="alert" data-testid="journal-error">
          <strong>{status.message}</strong>
          {status.hint && <p>{status.hint}</p>}
        </div>
      )}
      <p className="muted small" data-testid="journal-status">
        {status.s === 'loading'
          ? 'Reading the journal…'
          : status.s === 'live'
            ? `${frozen ? 'Paused' : 'Following'} · ${lines.length} lines buffered (max ${MAX_LINES})${status.command ? ` · ${status.command}` : ''}`
            : 'Not following.'}
      </p>
      <div className="journal-box" ref={box}>
        {shown.length === 0 && status.s !== 'loading' ? (
          <p className="muted">
            {lines.length
              ? problemsOnly
                ? `No problem line among the ${lines.length} buffered: no traceback, error, CUDA error, OOM or kill.`
                : 'No line matches the search and priority filter.'
              : 'The journal of this unit is empty.'}
          </p>
        ) : (
          <JournalLines lines={shown} />
        )}
      </div>
    </section>
  );
}
