// UI state shared by every page: which page, which time window, theme, palette/help, the journal-around
// drawer. Pages live in location.hash so reload and the back button work.
import { useSyncExternalStore } from 'react';
import type { Role } from '@shared/domain';

export const RANGES = [
  { id: '5m', label: '5 m', ms: 5 * 60_000 },
  { id: '1h', label: '1 h', ms: 3_600_000 },
  { id: '6h', label: '6 h', ms: 6 * 3_600_000 },
  { id: '24h', label: '24 h', ms: 24 * 3_600_000 },
  { id: 'all', label: 'all', ms: Infinity },
] as const;
export type RangeId = (typeof RANGES)[number]['id'];

export type Page =
  | { name: 'overview' }
  | { name: 'kv' }
  | { name: 'metrics' }
  | { name: 'alerts' }
  | { name: 'service'; role: Role };

/** Live: the last `range`, following new data. Fixed: a window picked by zoom or pan. */
export type View =
  { mode: 'live'; range: RangeId } | { mode: 'fixed'; range: RangeId; from: number; to: number };

export type ThemeChoice = 'system' | 'light' | 'dark';

export interface UiState {
  page: Page;
  view: View;
  theme: ThemeChoice;
  paletteOpen: boolean;
  helpOpen: boolean;
  around: { ts: number; role?: Role } | null;
}

function parseHash(h: string): Page {
  const m = /^#\/(overview|kv|metrics|alerts|service\/(prefill|decode|router))$/.exec(h);
  if (!m) return { name: 'overview' };
  if (m[2]) return { name: 'service', role: m[2] as Role };
  return { name: m[1] as 'overview' | 'kv' | 'metrics' | 'alerts' };
}

export function pageHash(p: Page): string {
  return p.name === 'service' ? `#/service/${p.role}` : `#/${p.name}`;
}

/** `?range=24h` in the URL opens on that range (links, and the benchmark). */
function initialRange(): RangeId {
  const r = new URLSearchParams(window.location.search).get('range');
  return RANGES.find((x) => x.id === r)?.id ?? '5m';
}

function storedTheme(): ThemeChoice {
  const t = localStorage.getItem('pdc-theme');
  return t === 'light' || t === 'dark' ? t : 'system';
}

let ui: UiState = {
  page: parseHash(window.location.hash),
  view: { mode: 'live', range: initialRange() },
  theme: storedTheme(),
  paletteOpen: false,
  helpOpen: false,
  around: null,
};
const subs = new Set<() => void>();

function set(next: Partial<UiState>): void {
  ui = { ...ui, ...next };
  for (const s of subs) s();
}

export function useUi(): UiState {
  return useSyncExternalStore(
    (cb) => {
      subs.add(cb);
      return () => subs.delete(cb);
    },
    () => ui,
  );
}

export function getUi(): UiState {
  return ui;
}

window.addEventListener('hashchange', () => set({ page: parseHash(window.location.hash) }));

export function navigate(p: Page): void {
  const h = pageHash(p);
  if (window.location.hash !== h) window.location.hash = h;
  set({ page: p });
}

export function setRange(range: RangeId): void {
  set({ view: { mode: 'live', range } });
}

export function setFixedWindow(from: number, to: number): void {
  if (!(to > from)) return;
  set({ view: { mode: 'fixed', range: ui.view.range, from, to } });
}

export function backToLive(): void {
  set({ view: { mode: 'live', range: ui.view.range } });
}

export function applyTheme(t: ThemeChoice): void {
  if (t === 'system') {
    localStorage.removeItem('pdc-theme');
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem('pdc-theme', t);
    document.documentElement.dataset.theme = t;
  }
  set({ theme: t });
}

/** Light ↔ dark from whatever shows now (system included). */
export function toggleTheme(): void {
  applyTheme(effectiveTheme() === 'dark' ? 'light' : 'dark');
}

export function effectiveTheme(): 'light' | 'dark' {
  if (ui.theme !== 'system') return ui.theme;
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function setPalette(open: boolean): void {
  set({ paletteOpen: open, helpOpen: false });
}

export function setHelp(open: boolean): void {
  set({ helpOpen: open, paletteOpen: false });
}

export function showAround(ts: number, role?: Role): void {
  set({ around: { ts, role } });
}

export function closeAround(): void {
  set({ around: null });
}

/** The window a chart shows now: [from, to], to = now while live. */
export function viewWindow(v: View, now: number, firstMs: number | null): { from: number; to: number } {
  if (v.mode === 'fixed') return { from: v.from, to: v.to };
  const r = RANGES.find((x) => x.id === v.range)!;
  const from = Number.isFinite(r.ms) ? now - r.ms : (firstMs ?? now - 3_600_000);
  return { from, to: now };
}

// Theme follows the system until the operator picks one.
if (ui.theme !== 'system') document.documentElement.dataset.theme = ui.theme;
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => set({}));
