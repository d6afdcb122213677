// Chart.js's DOM platform, told the size a canvas will be drawn at, so building a chart reads no style or
// layout. Building one read its canvas's and its box's computed style three times (the canvas's used width, then
// its size at construction and again when attached), and each read made the browser recompute the style and
// layout that the chart built just before had invalidated: on the Metrics page, where the answer builds eleven
// charts one after another, a profile had those reads as the largest share of the builds after Chart.js's own
// code. The size is measured where the page is laid out anyway (a chart asks for its history with its width in
// React's layout phase, and the first chart's read lays the page out once for all of them); Chart.js's resize
// observer still corrects it when the box changes before or after the build.
import { DomPlatform } from 'chart.js';

interface Size {
  width: number;
  height: number;
}

const dom = new DomPlatform();
const measured = new WeakMap<HTMLCanvasElement, Size>();
/** The canvas whose chart is being constructed, with the size measured for it. */
let building: { canvas: HTMLCanvasElement; size: Size } | null = null;

export class SizedPlatform extends DomPlatform {
  override getMaximumSize(
    canvas: HTMLCanvasElement,
    width?: number,
    height?: number,
    aspectRatio?: number,
  ): Size {
    // Only while constructing, and only for the size Chart.js finds itself (a resize passes the box's new size).
    if (building?.canvas === canvas && width === undefined && height === undefined)
      return { ...building.size };
    return super.getMaximumSize(canvas, width, height, aspectRatio);
  }
}

/** The size `canvas` would be drawn at now, by Chart.js's own rule; call it where the layout is up to date. */
export function measureCanvas(canvas: HTMLCanvasElement): void {
  const size = dom.getMaximumSize(canvas);
  if (size.width > 0 && size.height > 0) measured.set(canvas, size);
}

/** Runs `construct` (a `new Chart` on `canvas` with `platform: SizedPlatform`) at the measured size, if any. */
export function buildSized<T>(canvas: HTMLCanvasElement, construct: () => T): T {
  const size = measured.get(canvas);
  if (!size) return construct();
  measured.delete(canvas);
  // Chart.js takes the canvas's used width from its style when it has no width attribute.
  canvas.width = Math.round(size.width);
  canvas.height = Math.round(size.height);
  building = { canvas, size };
  try {
    return construct();
  } finally {
    building = null;
  }
}
