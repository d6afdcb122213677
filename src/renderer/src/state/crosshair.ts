// The crosshair time shared by every chart: hovering one chart marks the same instant on all of them.
// Kept outside React: moving the mouse redraws the charts' overlay, it does not re-render components.
type Listener = (t: number | null) => void;
const listeners = new Set<Listener>();
let current: number | null = null;

export function crosshairTime(): number | null {
  return current;
}

export function setCrosshair(t: number | null): void {
  if (t === current) return;
  current = t;
  for (const l of listeners) l(t);
}

export function onCrosshair(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
