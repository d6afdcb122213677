// Showing a recording opened for review: it joins the open deployments (on screen at once) with its events.
import type { ReviewOpenResult } from '@shared/contract';
import { addDeployment } from '../state/store';
import { closeSessionsPage } from './state';

export function showOpenedReview(r: ReviewOpenResult): void {
  addDeployment(r.summary, r.events);
  closeSessionsPage();
}
