// Whether the sessions page is showing. It has its own address (#/sessions) so reload and back work; it is not
// a page of a deployment (it is reachable with none open), so it lives outside the console's page state.
import { useSyncExternalStore } from 'react';
import { getUi, pageHash, pushHash } from '../state/ui';

const HASH = '#/sessions';
let open = window.location.hash === HASH;
const subs = new Set<() => void>();

function set(v: boolean): void {
  if (v === open) return;
  open = v;
  for (const s of subs) s();
}

window.addEventListener('hashchange', () => set(window.location.hash === HASH));

export function useSessionsPage(): boolean {
  return useSyncExternalStore(
    (cb) => {
      subs.add(cb);
      return () => subs.delete(cb);
    },
    () => open,
  );
}

export function openSessionsPage(): void {
  pushHash(HASH);
  set(true);
}

export function closeSessionsPage(): void {
  if (window.location.hash === HASH) pushHash(pageHash(getUi().page));
  set(false);
}
