// Showing a recording opened for review: it joins the open deployments (on screen at once) with its events.
import type { ReviewOpenResult } from '@shared/contract';
import { addDeployment, getState } from '../state/store';
import { api } from '../api/client';
import { getUi, setFixedWindow } from '../state/ui';
import { prefetchOverview } from '../review/first-screen';
import { closeSessionsPage } from './state';

export function showOpenedReview(r: ReviewOpenResult): void {
  const rv = r.summary.review;
  // The charts' first render asks for the whole session at once: left to the review bar's effect, the first
  // render asked for the live range (a request whose answer nobody waits for) and a second render followed.
  // A review open already keeps the window the operator picked.
  if (rv && !getState().deployments[r.summary.deployment.id]) {
    // Its charts' history leaves now, so the core decimates while the page renders. Asked before any state
    // is set: a request made after would be sent only once the render that state schedules has run.
    if (getUi().page.name === 'overview')
      prefetchOverview(r.summary, (q) => api.getSeriesBatch(q), window.innerWidth);
    setFixedWindow(rv.firstTs, rv.lastTs + 1);
  }
  addDeployment(r.summary, r.events, r.first);
  closeSessionsPage();
}
