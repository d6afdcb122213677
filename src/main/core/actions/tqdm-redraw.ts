// What a terminal shows of a journal line that a progress bar wrote: tqdm redraws itself after a carriage
// return, so SGLang's CUDA-graph bar (every redraw joined by "\r" in one journal line) and its shard bar (a line
// per redraw, led by "\r" and the spaces a longer previous redraw left) mean their last redraw.

export function lastRedraw(text: string): string {
  if (!text.includes('\r')) return text;
  const parts = text.split('\r').filter((p) => p.trim() !== '');
  return parts.at(-1) ?? '';
}
