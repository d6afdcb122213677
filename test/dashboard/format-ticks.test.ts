// A chart's axis labels (formatTick): the ticks Chart.js places on a tokens/s axis read as distinct numbers at
// every scale — an idle engine's or an empty chart's 0–1 axis used to read 0, 0, 1, 1, 1 (whole tokens).
import { describe, expect, it } from 'vitest';
import { formatTick } from '../../src/renderer/src/format';

describe('formatTick', () => {
  it('labels every tick of a tokens/s axis distinctly, from a fraction of a token to millions', () => {
    for (const ticks of [
      [0, 0.2, 0.4, 0.6, 0.8, 1],
      [0, 0.5, 1, 1.5, 2, 2.5],
      [0, 2, 4, 6, 8, 10],
      [0, 2000, 4000, 6000, 8000],
      [0, 5e6, 1e7, 1.5e7],
    ]) {
      const labels = ticks.map((v) => formatTick('tokens_per_s', v));
      expect(new Set(labels).size, labels.join(' ')).toBe(ticks.length);
    }
    expect(formatTick('tokens_per_s', 0.4)).toBe('0.4');
    expect(formatTick('tokens_per_s', 12)).toBe('12');
    expect(formatTick('tokens_per_s', 4000)).toBe('4.0k');
  });
});
