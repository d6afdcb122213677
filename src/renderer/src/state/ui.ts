// UI state shared by every page: which page, which time window, theme, palette/help, the journal-around
// drawer. Pages live in location.hash so reload and the back button work.
import { useSyncExternalStore } from 'react';
import type { Role } from '@shared/domain';
import type { ChartRange, Settings, ThemeChoice } from '@shared/contract';
import { api } from '../api/client';

export const RANGES = [
  { id: '5m', label: '5 m', ms: 5 * 60_000 },
  { id: '1h', label: '1 h', ms: 3_600_000 },
  { id: '6h', label: '6 h', ms: 6 * 3_600_000 },
  { id: '24h', label: '24 h', ms: 24 * 3_600_000 },
  { id: 'all', label: 'all', ms: Infinity },
] as const;
export type RangeId = (typeof RANGES)[number]['id'];
// The saved default range and the ranges on screen are the same list.
const _sameRanges: [RangeId] extends [ChartRange] ? ([ChartRange] extends [RangeId] ? true : never) : never =
  true;
void _sameRanges;

export type Page =
  | { name: 'overview' }
  | { name: 'kv' }
  | { name: 'metrics' }
  | { name: 'alerts' }
  | { name: 'service'; role: Role }
  /** One worker (or router) of a fleet, by its service id: a fleet's pages replace the role pages. */
  | { name: 'worker'; id: string };

/** Live: the last `range`, following new data. Fixed: a window picked by zoom or pan. */
export type View =
  { mode: 'live'; range: RangeId } | { mode: 'fixed'; range: RangeId; from: number; to: number };

export type { ThemeChoice };

export interface UiState {
  page: Page;
  view: View;
  theme: ThemeChoice;
  paletteOpen: boolean;
  helpOpen: boolean;
  /** The journal-around drawer: a moment, and whose journal (a role, or a fleet's worker by service id). */
  around: { ts: number; role?: Role; worker?: string } | null;
}

/** The console page an address names; undefined for any other (the sessions page's, a mistyped one). */
function parseHash(h: string): Page | undefined {
  const w = /^#\/worker\/([^/]{1,200})$/.exec(h);
  if (w) return { name: 'worker', id: decodeURIComponent(w[1]) };
  const m = /^#\/(overview|kv|metrics|alerts|service\/(prefill|decode|router))$/.exec(h);
  if (!m) return undefined;
  if (m[2]) return { name: 'service', role: m[2] as Role };
  return { name: m[1] as 'overview' | 'kv' | 'metrics' | 'alerts' };
}

export function pageHash(p: Page): string {
  if (p.name === 'worker') return `#/worker/${encodeURIComponent(p.id)}`;
  return p.name === 'service' ? `#/service/${p.role}` : `#/${p.name}`;
}

/** `?range=24h` in the URL opens on that range (links, and the benchmark); it wins over the saved default. */
const urlRange: RangeId | undefined = RANGES.find(
  (x) => x.id === new URLSearchParams(window.location.search).get('range'),
)?.id;

let ui: UiState = {
  page: parseHash(window.location.hash) ?? { name: 'overview' },
  view: { mode: 'live', range: urlRange ?? '5m' },
  // Until the saved settings arrive (a moment after start) the theme follows the system.
  theme: 'system',
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

// Another address (the sessions page's) leaves the console on its page, so "Back to the console" returns
// to it rather than to the overview.
window.addEventListener('hashchange', () => {
  const page = parseHash(window.location.hash);
  if (page) showPage(page);
});

/**
 * Shows a page. Another page opens at its top: the document is the scroller, and it kept the offset the last page
 * was scrolled to.
 */
function showPage(page: Page): void {
  if (pageHash(page) !== pageHash(ui.page)) window.scrollTo(0, 0);
  set({ page });
}

/**
 * Puts `hash` in the address as a new history entry (so reload and back work) and tells the hashchange
 * listeners now, in this task. Setting location.hash instead made the browser look for the fragment's anchor
 * (a style and layout pass of the page being left, 2–6 ms on the overview) and queue a hashchange task that
 * rendered the new page a second time while its charts' history was on its way. Back and forward still fire
 * hashchange (the entries differ in fragment only).
 */
export function pushHash(hash: string): void {
  if (window.location.hash === hash) return;
  const oldURL = window.location.href;
  history.pushState(history.state, '', hash);
  window.dispatchEvent(new HashChangeEvent('hashchange', { oldURL, newURL: window.location.href }));
}

export function navigate(p: Page): void {
  pushHash(pageHash(p));
  showPage(p);
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

function showTheme(t: ThemeChoice): void {
  if (t === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  if (ui.theme !== t) set({ theme: t });
}

/** The operator picked a theme: show it and save it (every window follows through the settings event). */
export function applyTheme(t: ThemeChoice): void {
  showTheme(t);
  api.setUiSettings({ theme: t }).catch((err: unknown) => console.warn('theme not saved:', err));
}

let savedRange: RangeId | null = null;

/** The saved settings arrived or changed: theme at once; the default range until the operator picks one. */
export function adoptSavedUi(saved: Settings['ui']): void {
  showTheme(saved.theme);
  const first = savedRange === null;
  const untouched = ui.view.mode === 'live' && ui.view.range === (savedRange ?? '5m');
  savedRange = saved.chartRange;
  if (!urlRange && (first || untouched) && ui.view.mode === 'live' && ui.view.range !== saved.chartRange)
    set({ view: { mode: 'live', range: saved.chartRange } });
}

/** Saves the range charts open on. */
export function saveDefaultRange(r: RangeId): Promise<unknown> {
  return api.setUiSettings({ chartRange: r });
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

export function showAround(ts: number, role?: Role, worker?: string): void {
  set({ around: { ts, role, ...(worker !== undefined ? { worker } : {}) } });
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

window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => set({}));
