// Review state in the renderer: the cursor of each open recording, playback (1×–60×), the journal pane. The
// cursor is sent to the core, which pushes the deployment's state at that moment (observation + dashboard) the
// way a live poll does; one request is in flight per review and the latest position wins.
import { useSyncExternalStore } from 'react';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { getUi, setFixedWindow } from '../state/ui';
import { setChartCursor } from './cursor-plugin';

export const SPEEDS = [1, 5, 10, 30, 60] as const;
const TICK_MS = 250;

interface ReviewUiState {
  cursors: Record<string, number>;
  /** The review being played, or null. */
  playing: string | null;
  speed: number;
  journalOpen: boolean;
  error: string | null;
}

let state: ReviewUiState = { cursors: {}, playing: null, speed: 10, journalOpen: true, error: null };
const subs = new Set<() => void>();

function set(patch: Partial<ReviewUiState>): void {
  state = { ...state, ...patch };
  for (const s of subs) s();
}

export function useReviewUi(): ReviewUiState {
  return useSyncExternalStore(
    (cb) => {
      subs.add(cb);
      return () => subs.delete(cb);
    },
    () => state,
  );
}

export function getReviewUi(): ReviewUiState {
  return state;
}

const bounds = new Map<string, { first: number; last: number }>();

/** The review on screen: its span (for clamping and playback) and where its cursor is. */
export function showReview(id: string, first: number, last: number, cursor: number): void {
  bounds.set(id, { first, last });
  const kept = state.cursors[id];
  // Coming back to a review (or reopening it after a close) keeps the cursor where the operator left it, and
  // tells the core, whose cursor may have been reset meanwhile.
  if (kept !== undefined) return seek(id, kept);
  // Shown for the first time: the core's cursor is the one it just sent (the open's summary and snapshot),
  // so asking for that moment again would only repeat the first screen's state while its charts load.
  set({ cursors: { ...state.cursors, [id]: cursor } });
  setChartCursor(cursor);
}

/** Leaving review (another deployment on screen): no cursor line, no playback. */
export function hideReview(): void {
  pause();
  setChartCursor(null);
}

const inflight = new Set<string>();
const wanted = new Map<string, number>();

/** Moves the cursor of review `id` to ts (clamped to the recording). */
export function seek(id: string, ts: number): void {
  const b = bounds.get(id);
  const t = Math.round(b ? Math.min(b.last, Math.max(b.first, ts)) : ts);
  set({ cursors: { ...state.cursors, [id]: t } });
  setChartCursor(t);
  wanted.set(id, t);
  void pump(id);
}

async function pump(id: string): Promise<void> {
  if (inflight.has(id)) return;
  inflight.add(id);
  try {
    while (wanted.has(id)) {
      const ts = wanted.get(id)!;
      wanted.delete(id);
      try {
        await api.setReviewCursor({ deploymentId: id, ts });
        if (state.error) set({ error: null });
      } catch (err) {
        const e = errorText(err);
        set({ error: `${e.message}${e.hint ? ` — ${e.hint}` : ''}` });
        pause();
      }
    }
  } finally {
    inflight.delete(id);
  }
}

let timer: ReturnType<typeof setInterval> | null = null;

export function play(id: string): void {
  const b = bounds.get(id);
  if (!b) return;
  pause();
  if ((state.cursors[id] ?? b.last) >= b.last) seek(id, b.first);
  set({ playing: id });
  timer = setInterval(() => tick(id), TICK_MS);
}

export function pause(): void {
  if (timer) clearInterval(timer);
  timer = null;
  if (state.playing) set({ playing: null });
}

export function setSpeed(speed: number): void {
  set({ speed });
}

export function setJournalOpen(open: boolean): void {
  set({ journalOpen: open });
}

function tick(id: string): void {
  const b = bounds.get(id);
  const c = state.cursors[id];
  if (!b || c === undefined) return pause();
  const next = Math.min(b.last, c + TICK_MS * state.speed);
  seek(id, next);
  // Zoomed in: the window follows the cursor instead of letting it run off the charts.
  const v = getUi().view;
  if (v.mode === 'fixed' && (next > v.to || next < v.from)) {
    const span = v.to - v.from;
    setFixedWindow(next - span * 0.1, next + span * 0.9);
  }
  if (next >= b.last) pause();
}
