// Every draw of a canvas as the page makes it (Chart.js clears a chart's canvas before each draw), in
// window.__canvasDraws: the canvas's data-testid (null for one without, as the chart code's warm-up draws off
// screen) and the page's clock.

export interface CanvasDraw {
  id: string | null;
  at: number;
}

/** Runs in the page (as an init script, or evaluated once it is loaded). */
export function collectDrawsScript(): void {
  const draws: { id: string | null; at: number }[] = [];
  (window as unknown as { __canvasDraws: typeof draws }).__canvasDraws = draws;
  const clear = CanvasRenderingContext2D.prototype.clearRect;
  CanvasRenderingContext2D.prototype.clearRect = function (...a: [number, number, number, number]) {
    draws.push({ id: this.canvas.dataset.testid ?? null, at: performance.now() });
    return clear.apply(this, a);
  };
}
