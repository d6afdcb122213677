// Global keyboard shortcuts (see ShortcutHelp for the list). Ignored while typing in a field.
import { useEffect } from 'react';
import {
  backToLive,
  getUi,
  navigate,
  RANGES,
  setHelp,
  setPalette,
  setRange,
  toggleTheme,
  closeAround,
} from './state/ui';

export function useShortcuts(enabled: boolean): void {
  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent): void => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setPalette(!getUi().paletteOpen);
        return;
      }
      if (e.key === 'Escape') {
        setPalette(false);
        setHelp(false);
        closeAround();
        return;
      }
      const t = e.target as HTMLElement | null;
      if (
        t &&
        (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable)
      )
        return;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (getUi().paletteOpen) return;
      const range = RANGES[Number(e.key) - 1];
      if (range && /^[1-5]$/.test(e.key)) return setRange(range.id);
      switch (e.key) {
        case '?':
          return setHelp(!getUi().helpOpen);
        case 'o':
          return navigate({ name: 'overview' });
        case 'k':
          return navigate({ name: 'kv' });
        case 'm':
          return navigate({ name: 'metrics' });
        case 'a':
          return navigate({ name: 'alerts' });
        case 'p':
          return navigate({ name: 'service', role: 'prefill' });
        case 'd':
          return navigate({ name: 'service', role: 'decode' });
        case 'r':
          return navigate({ name: 'service', role: 'router' });
        case 'l':
          return backToLive();
        case 't':
          return toggleTheme();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [enabled]);
}
