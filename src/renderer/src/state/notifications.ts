// Desktop notifications for alerts. The browser Notification API works the same in browser mode and in
// Electron's renderer (Electron maps it to the OS notification centre), so one code path serves both.
import type { AppEvent } from '@shared/domain';
import { worthNotifying } from '@shared/alert-notice';

const listeners = new Set<(e: AppEvent) => void>();

export type NotifyPermission = 'granted' | 'denied' | 'default' | 'unsupported';

export function notificationPermission(): NotifyPermission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

export async function requestNotifications(): Promise<NotifyPermission> {
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.requestPermission();
}

/** In-app toasts subscribe here; desktop notifications are raised when permitted. */
export function onAlert(l: (e: AppEvent) => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** Raises a toast (and a desktop notification when permitted) unless the alert's change is a quiet one. */
export function notifyAlert(e: AppEvent): void {
  // An alert expected during a restart by this console, its end, a change of its workers: history, not news.
  if (!worthNotifying(e)) return;
  for (const l of listeners) l(e);
  if (e.severity === 'info' || notificationPermission() !== 'granted') return;
  try {
    new Notification(`PD Console: ${e.title}`, { body: e.detail ?? '', tag: e.id });
  } catch (err) {
    // Some platforms refuse notifications from a page (e.g. without a service worker); toasts still show.
    console.warn('desktop notification failed:', err);
  }
}
