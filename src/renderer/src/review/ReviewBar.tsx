// Review mode's controls under the top bar: what is being reviewed (and what was lost, if anything), the
// timeline with event markers, play/pause at 1×–60×, jumping between markers, a note at the cursor, exports,
// and the journal around the cursor. Every page below renders the cursor's moment.
import { useEffect, useMemo, useState } from 'react';
import type { DeploymentView } from '../state/store';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { backToLive, getUi, RANGES, setFixedWindow, useUi } from '../state/ui';
import { formatDateTime, formatDuration, formatRange } from '../format';
import { MARKER_GROUPS, Timeline, groupOf, type MarkerGroup } from './Timeline';
import { JournalPane } from './JournalPane';
import { SessionExport } from '../sessions/SessionExport';
import {
  SPEEDS,
  hideReview,
  pause,
  play,
  seek,
  setJournalOpen,
  setSpeed,
  showReview,
  useReviewUi,
} from './state';
import './review.css';

/** The moment a review deployment shows (its cursor), or null for a live deployment. */
export function useReviewNow(view: DeploymentView): number | null {
  const ui = useReviewUi();
  const r = view.summary.review;
  if (!r) return null;
  return ui.cursors[view.summary.deployment.id] ?? r.cursor;
}

export function ReviewBar({ view }: { view: DeploymentView }): React.JSX.Element | null {
  const r = view.summary.review!;
  const id = view.summary.deployment.id;
  const rui = useReviewUi();
  const ui = useUi();
  const cursor = rui.cursors[id] ?? r.cursor;
  const [hidden, setHidden] = useState<ReadonlySet<MarkerGroup>>(new Set());
  const [panel, setPanel] = useState<'none' | 'note' | 'export'>('none');

  // A review opens on its whole session; leaving it (another deployment on screen) goes back to live.
  useEffect(() => {
    // Opening set it already (open-review.ts): the same window again would make every chart fetch again.
    const v = getUi().view;
    if (v.mode !== 'fixed' || v.from !== r.firstTs || v.to !== r.lastTs + 1)
      setFixedWindow(r.firstTs, r.lastTs + 1);
    return () => {
      hideReview();
      backToLive();
    };
  }, [id, r.firstTs, r.lastTs]);
  useEffect(() => showReview(id, r.firstTs, r.lastTs, r.cursor), [id, r.firstTs, r.lastTs, r.cursor]);

  // Charts show the recording, never "the last 5 minutes" of wall time: a range picked with the keyboard
  // (1–5) means that much before the cursor, and back-to-live means the whole session.
  useEffect(() => {
    // The current view, not this render's: opening the review has just set the whole session.
    const v = getUi().view;
    if (v.mode !== 'live') return;
    const range = RANGES.find((x) => x.id === v.range)!;
    if (!Number.isFinite(range.ms) || v.range === '24h') setFixedWindow(r.firstTs, r.lastTs + 1);
    else setFixedWindow(Math.max(r.firstTs, cursor - range.ms), Math.max(cursor, r.firstTs + range.ms));
  }, [ui.view, r.firstTs, r.lastTs, cursor]);

  // A moment picked on a chart (it opens the journal drawer) moves the cursor there too.
  useEffect(() => {
    if (ui.around) seek(id, ui.around.ts);
  }, [ui.around, id]);

  const counts = useMemo(() => {
    const c = new Map<MarkerGroup, number>();
    for (const e of view.events) c.set(groupOf(e), (c.get(groupOf(e)) ?? 0) + 1);
    return c;
  }, [view.events]);
  const visible = useMemo(
    () => view.events.filter((e) => !hidden.has(groupOf(e))).sort((a, b) => a.ts - b.ts),
    [view.events, hidden],
  );
  const prev = [...visible].reverse().find((e) => e.ts < cursor - 500);
  const next = visible.find((e) => e.ts > cursor + 500);
  const playing = rui.playing === id;
  const span = r.lastTs - r.firstTs;

  return (
    <section className="review-bar" data-testid="review-bar" aria-label="Review of a recording">
      <div className="review-head">
        <span className="pill pill-review">Review</span>
        <span>
          <strong data-testid="review-name">{r.name}</strong>{' '}
          <span className="muted">
            recorded on {r.recordedHost.label} · {formatDateTime(r.firstTs)} → {formatDateTime(r.lastTs)} (
            {formatDuration(span)}) ·{' '}
            <span data-testid="review-integrity">{r.closedCleanly ? 'complete' : 'not closed properly'}</span>{' '}
            · opened in {r.openMs} ms{' '}
            {r.loadedFrom === 'cache' ? '(review cache)' : '(read from the recording)'}
          </span>
        </span>
        <span className="review-actions">
          {r.sessionId && (
            <>
              <button
                data-testid="review-note"
                aria-pressed={panel === 'note'}
                onClick={() => setPanel(panel === 'note' ? 'none' : 'note')}
              >
                Note at cursor…
              </button>
              <button
                data-testid="review-export"
                aria-pressed={panel === 'export'}
                onClick={() => setPanel(panel === 'export' ? 'none' : 'export')}
              >
                Export…
              </button>
            </>
          )}
        </span>
      </div>
      {r.warnings.length > 0 && (
        <div className="banner banner-warn review-warnings" role="alert" data-testid="review-warnings">
          {r.warnings.map((w, i) => (
            <p key={i}>{w}</p>
          ))}
        </div>
      )}
      {rui.error && (
        <div className="error-box" role="alert" data-testid="review-error">
          {rui.error}
        </div>
      )}
      {panel === 'note' && r.sessionId && (
        <NoteForm sessionId={r.sessionId} ts={cursor} onDone={() => setPanel('none')} />
      )}
      {panel === 'export' && r.sessionId && (
        <ExportForm
          sessionId={r.sessionId}
          window={ui.view.mode === 'fixed' ? { from: ui.view.from, to: ui.view.to } : null}
        />
      )}
      <div className="review-controls">
        <button
          className="icon"
          data-testid="review-prev-marker"
          disabled={!prev}
          title={prev ? `Previous event: ${prev.title}` : 'No earlier event'}
          onClick={() => prev && seek(id, prev.ts)}
        >
          ← Previous event
        </button>
        <button
          className="primary"
          data-testid="review-play"
          aria-pressed={playing}
          onClick={() => (playing ? pause() : play(id))}
          title="Play the recording from the cursor"
        >
          {playing ? '❚❚ Pause' : '▶ Play'}
        </button>
        <button
          className="icon"
          data-testid="review-next-marker"
          disabled={!next}
          title={next ? `Next event: ${next.title}` : 'No later event'}
          onClick={() => next && seek(id, next.ts)}
        >
          Next event →
        </button>
        <span className="speeds" role="group" aria-label="Playback speed">
          {SPEEDS.map((s) => (
            <button
              key={s}
              className="icon"
              data-testid={`review-speed-${s}`}
              aria-pressed={rui.speed === s}
              onClick={() => setSpeed(s)}
            >
              {s}×
            </button>
          ))}
        </span>
        <output className="review-time" data-testid="review-cursor-time" data-ts={cursor}>
          {formatDateTime(cursor)}
          <span className="muted"> · +{formatDuration(cursor - r.firstTs)}</span>
        </output>
        <span className="marker-filters" role="group" aria-label="Markers shown">
          {MARKER_GROUPS.filter((g) => counts.get(g.id)).map((g) => (
            <button
              key={g.id}
              className={`icon chip marker-${g.id}`}
              aria-pressed={!hidden.has(g.id)}
              data-testid={`review-filter-${g.id}`}
              onClick={() => {
                const h = new Set(hidden);
                if (h.has(g.id)) h.delete(g.id);
                else h.add(g.id);
                setHidden(h);
              }}
            >
              {g.label} {counts.get(g.id)}
            </button>
          ))}
        </span>
        <button
          className="icon"
          data-testid="review-journal-toggle"
          aria-pressed={rui.journalOpen}
          onClick={() => setJournalOpen(!rui.journalOpen)}
        >
          Journal
        </button>
      </div>
      <Timeline
        firstTs={r.firstTs}
        lastTs={r.lastTs}
        cursor={cursor}
        events={view.events}
        hidden={hidden}
        onSeek={(ts) => seek(id, ts)}
      />
      {rui.journalOpen && (
        <JournalPane
          deploymentId={id}
          cursor={cursor}
          roles={view.summary.deployment.services.map((s) => s.role)}
        />
      )}
    </section>
  );
}

function NoteForm({
  sessionId,
  ts,
  onDone,
}: {
  sessionId: string;
  ts: number;
  onDone: () => void;
}): React.JSX.Element {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const save = async (e: React.FormEvent): Promise<void> => {
    e.preventDefault();
    try {
      await api.annotateSession({ id: sessionId, ts, text });
      onDone();
    } catch (err) {
      setError(errorText(err).message);
    }
  };
  return (
    <form className="review-form" onSubmit={(e) => void save(e)} data-testid="review-note-form">
      <label>
        Note pinned to {formatDateTime(ts)}
        <input
          autoFocus
          data-testid="review-note-text"
          value={text}
          maxLength={10_000}
          onChange={(e) => setText(e.target.value)}
          placeholder="e.g. decode OOM after the traffic burst"
        />
      </label>
      <button type="submit" className="primary" disabled={!text.trim()} data-testid="review-note-save">
        Save note
      </button>
      {error && <span className="bad">{error}</span>}
    </form>
  );
}

function ExportForm({
  sessionId,
  window: win,
}: {
  sessionId: string;
  window: { from: number; to: number } | null;
}): React.JSX.Element {
  const [onlyWindow, setOnlyWindow] = useState(false);
  return (
    <div className="review-form" data-testid="review-export-form">
      <SessionExport
        sessionId={sessionId}
        {...(onlyWindow && win ? { range: { fromMs: Math.round(win.from), toMs: Math.round(win.to) } } : {})}
        testId={(f) => `review-export-${f}`}
        resultTestId="review-export-result"
      />
      {win && (
        <label className="inline">
          <input type="checkbox" checked={onlyWindow} onChange={(e) => setOnlyWindow(e.target.checked)} />{' '}
          only the window on the charts ({formatRange(win.from, win.to)})
        </label>
      )}
    </div>
  );
}
