// Window-wide parts of review mode: dropping a recording on the window, and a recording opened outside the
// window (the desktop app's File → Open) coming on screen.
import { useEffect } from 'react';
import { api } from '../api/client';
import { DropZone } from '../sessions/DropZone';
import { showOpenedReview } from '../sessions/open-review';

export function ReviewRoot(): React.JSX.Element {
  useEffect(() => api.on('reviewOpened', showOpenedReview), []);
  return <DropZone />;
}
