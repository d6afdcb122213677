// Which timeline events raise a toast and a desktop notification: an alert's change that needs someone (its
// start, unless a restart by this console made it expected; the end of one that was notified). The renderer and
// the Electron shell ask the same question.
import type { AppEvent } from './domain';

export function worthNotifying(e: AppEvent): boolean {
  // Alert events recorded before they carried AlertEventInfo were all notified.
  return e.kind === 'alert' && e.alert?.notify !== false;
}
