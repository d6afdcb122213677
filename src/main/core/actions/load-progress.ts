// What an SGLang server's log says about how far its startup has come. Loading a big model takes many
// minutes; these lines are the only progress an operator gets, so the restart view reads them:
//   "Loading safetensors checkpoint shards:  23% Completed | 4/17 [00:41<01:52, 10.26s/it]"   (tqdm, weights)
//   "Load weight begin. avail mem=…" / "Load weight end. …"                                     (weights)
//   "KV Cache is allocated. #tokens: …"                                                           (kv-cache)
//   "Capture cuda graph begin. This can take up to several minutes. …"                            (cuda-graph)
//   "Capturing batches (bs=256 avail_mem=…):  45%|…| 23/52 [00:10<…]"                            (cuda-graph)
//   "Capture cuda graph end. Time elapsed: …"                                                     (warmup next)
//   "The server is fired up and ready to roll!"                                                   (ready)
import type { LoadProgress } from '@shared/contract';
import { durationText } from '@shared/unit-condition';

/** Progress as read from one line; the label is added once the furthest point is known. */
export type RawProgress = Omit<LoadProgress, 'label'>;

const SHARDS = /Loading (?:safetensors|pt|bin)? ?checkpoint shards:\s*(\d+)%[^|]*\|\s*(\d+)\/(\d+)/i;
const CUDA_BATCHES = /Capturing batches[^:]*:\s*(\d+)%[^|]*\|[^|]*\|\s*(\d+)\/(\d+)/i;

function ratio(done: number, total: number): number | null {
  return total > 0 ? Math.min(1, Math.max(0, done / total)) : null;
}

/** The progress a line reveals, or undefined when it says nothing about startup. */
export function progressFromLine(text: string): RawProgress | undefined {
  let m = SHARDS.exec(text);
  if (m) {
    const done = Number(m[2]);
    const total = Number(m[3]);
    return { phase: 'weights', done, total, fraction: ratio(done, total), text };
  }
  m = CUDA_BATCHES.exec(text);
  if (m) {
    const done = Number(m[2]);
    const total = Number(m[3]);
    return { phase: 'cuda-graph', done, total, fraction: ratio(done, total), text };
  }
  if (/fired up and ready to roll/i.test(text)) return { phase: 'ready', fraction: 1, text };
  if (/Capture cuda graph end/i.test(text)) return { phase: 'warmup', fraction: null, text };
  if (/Capture cuda graph begin/i.test(text)) return { phase: 'cuda-graph', fraction: 0, text };
  if (/KV Cache is allocated|Memory pool end/i.test(text)) return { phase: 'kv-cache', fraction: null, text };
  if (/Load weight end/i.test(text)) return { phase: 'kv-cache', fraction: null, text };
  if (/Load weight begin/i.test(text)) return { phase: 'weights', fraction: 0, text };
  if (/server_args=ServerArgs\(|Started server process|Init torch distributed begin/i.test(text))
    return { phase: 'starting', fraction: null, text };
  return undefined;
}

const ORDER: RawProgress['phase'][] = ['starting', 'weights', 'kv-cache', 'cuda-graph', 'warmup', 'ready'];

/**
 * Folds new lines into the progress so far. Several tensor-parallel ranks log the same phases; a later
 * phase never goes back to an earlier one, and within a phase the furthest figure wins.
 */
export function advanceProgress(
  prev: RawProgress | undefined,
  lines: readonly string[],
): LoadProgress | undefined {
  let cur: RawProgress | undefined = prev;
  for (const line of lines) {
    const p = progressFromLine(line);
    if (!p) continue;
    if (!cur) {
      cur = p;
      continue;
    }
    const a = ORDER.indexOf(cur.phase);
    const b = ORDER.indexOf(p.phase);
    if (b > a) cur = p;
    else if (b === a && (p.fraction ?? -1) >= (cur.fraction ?? -1)) cur = p;
  }
  return cur && { ...cur, label: describeProgress(cur) };
}

/** What progress can be read against when the log gives no figure: the time since start, and the last load's. */
export interface LoadClock {
  elapsedMs: number;
  lastLoadMs?: number;
}

/**
 * In words, saying where the figure comes from: the log's own shard or batch lines, or — where the log gives none
 * (a phase without a bar, or a bar whose format has no newline: journald takes it in as one entry only once it
 * ends, as with SGLang's CUDA-graph capture) — the time since start against the last load.
 */
export function describeProgress(p: RawProgress, clock?: LoadClock): string {
  const phase = phaseText(p);
  if (p.done !== undefined || p.phase === 'ready' || !clock) return phase;
  const elapsed = durationText(clock.elapsedMs);
  if (clock.lastLoadMs === undefined) return `${phase} (${elapsed} since start)`;
  return `${phase} (${elapsed} of about ${durationText(clock.lastLoadMs)}, as the last load took)`;
}

function phaseText(p: RawProgress): string {
  const pct = p.fraction !== null ? ` (${Math.round(p.fraction * 100)} %)` : '';
  switch (p.phase) {
    case 'starting':
      return 'starting the server process';
    case 'weights':
      return p.done !== undefined ? `loading weights: shard ${p.done}/${p.total}${pct}` : 'loading weights';
    case 'kv-cache':
      return 'allocating the KV cache';
    case 'cuda-graph':
      return p.done !== undefined
        ? `capturing CUDA graphs: batch ${p.done}/${p.total}${pct}`
        : 'capturing CUDA graphs';
    case 'warmup':
      return 'CUDA graphs captured; warming up';
    case 'ready':
      return 'server reports ready';
  }
}
