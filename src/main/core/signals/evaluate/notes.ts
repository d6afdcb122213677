// Known misreadings of a scrape's point-in-time figures, in operator terms (the specification's caveats that
// depend on the values read).
import type { Role } from '@shared/domain';

export function scrapeNotes(values: Record<string, number | null>, role: Role): string[] {
  const notes: string[] = [];
  if (role === 'prefill' && values.running === 0)
    notes.push(
      'num_running_reqs reads 0 on PD prefill servers before SGLang PR #31495 (2026-07); ' +
        'the prefill bootstrap/inflight queues show the actual work',
    );
  if (values.gen_throughput === 0 && (values.running ?? 0) > 0 && role !== 'prefill')
    notes.push(
      'gen_throughput is refreshed every --decode-log-interval decode steps and zeroed by idle checks; a 0 with running requests is a stale reading',
    );
  return notes;
}
