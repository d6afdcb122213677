// Command palette entries of review mode.
import type { Command } from '../components/CommandPalette';
import type { DeploymentView } from '../state/store';
import { setFixedWindow } from '../state/ui';
import { getReviewUi, pause, play, seek, setJournalOpen, setSpeed, SPEEDS } from './state';

export function reviewCommands(view: DeploymentView): Command[] {
  const r = view.summary.review;
  if (!r) return [];
  const id = view.summary.deployment.id;
  const cursor = (): number => getReviewUi().cursors[id] ?? r.cursor;
  const jump = (dir: 1 | -1) => (): void => {
    const c = cursor();
    const events = [...view.events].sort((a, b) => a.ts - b.ts);
    const e = dir > 0 ? events.find((x) => x.ts > c + 500) : events.reverse().find((x) => x.ts < c - 500);
    if (e) seek(id, e.ts);
  };
  return [
    {
      id: 'review-play',
      title: 'Review: play / pause',
      run: () => (getReviewUi().playing === id ? pause() : play(id)),
    },
    ...SPEEDS.map((s) => ({
      id: `review-speed-${s}`,
      title: `Review: play at ${s}×`,
      run: () => setSpeed(s),
    })),
    { id: 'review-next', title: 'Review: jump to the next event', run: jump(1) },
    { id: 'review-prev', title: 'Review: jump to the previous event', run: jump(-1) },
    { id: 'review-start', title: 'Review: go to the start of the session', run: () => seek(id, r.firstTs) },
    { id: 'review-end', title: 'Review: go to the end of the session', run: () => seek(id, r.lastTs) },
    {
      id: 'review-whole',
      title: 'Review: show the whole session on the charts',
      run: () => setFixedWindow(r.firstTs, r.lastTs + 1),
    },
    {
      id: 'review-journal',
      title: 'Review: show / hide the journal',
      run: () => setJournalOpen(!getReviewUi().journalOpen),
    },
  ];
}
