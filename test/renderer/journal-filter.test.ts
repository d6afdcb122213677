// The journal view's "problems" filter: what SGLang and Python print when a scheduler dies is logged at info
// priority, so "err and worse" showed nothing of a crash loop's cause; "problems" shows it, the traceback whole.
import { describe, expect, it } from 'vitest';
import { filterJournal, problemIndexes } from '../../src/renderer/src/components/journal-filter';
import type { JournalEntry } from '../../src/shared/contract';

let n = 0;
const line = (message: string, priority = 6, pid = 4242, identifier = 'python3'): JournalEntry => ({
  cursor: `c${n++}`,
  ts: 1_000 + n,
  priority,
  message,
  pid,
  identifier,
  unit: 'sglang-decode.service',
});

// A runtime crash as SGLang prints it (src/main/demo/log-lines.ts runtimeCrash), between ordinary lines,
// with another process's line in the middle of the traceback.
const crash = [
  line('[2025-11-29 05:49:20] Decode batch. #running-req: 12, #token: 40211, token usage: 0.02'),
  line('[2025-11-29 05:49:21 TP0] Scheduler hit an exception: Traceback (most recent call last):'),
  line(
    '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2966, in run_scheduler_process',
  ),
  line('    scheduler.event_loop_overlap()'),
  line('INFO:     127.0.0.1:50412 - "GET /health HTTP/1.1" 200 OK', 6, 777, 'uvicorn'),
  line('    self.process_batch_result(tmp_batch, tmp_result)'),
  line('RuntimeError: CUDA error: an illegal memory access was encountered'),
  line('For debugging consider passing CUDA_LAUNCH_BLOCKING=1'),
  line('sglang-decode.service: Main process exited, code=exited, status=1/FAILURE', 5, 1, 'systemd'),
  line("sglang-decode.service: Failed with result 'exit-code'.", 4, 1, 'systemd'),
  line('Something at err priority', 3, 1, 'systemd'),
];

describe('problems filter', () => {
  it('finds the cause that "err and worse" misses, with its whole traceback and nothing else', () => {
    expect(filterJournal(crash, { query: '', maxPrio: 3, problems: false }).map((l) => l.message)).toEqual([
      'Something at err priority',
    ]);
    const shown = filterJournal(crash, { query: '', maxPrio: 3, problems: true }).map((l) => l.message);
    expect(shown).toEqual([
      '[2025-11-29 05:49:21 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/opt/sglang/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2966, in run_scheduler_process',
      '    scheduler.event_loop_overlap()',
      '    self.process_batch_result(tmp_batch, tmp_result)',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
      'Something at err priority',
    ]);
  });

  it('combines with the search', () => {
    expect(filterJournal(crash, { query: 'cuda', maxPrio: 7, problems: true }).map((l) => l.message)).toEqual(
      ['RuntimeError: CUDA error: an illegal memory access was encountered'],
    );
  });

  it('a traceback that never ends is bounded; OOM kills and "Killed" count', () => {
    const endless = [
      line('Traceback (most recent call last):'),
      ...Array.from({ length: 1000 }, () => line('  File "x.py"')),
    ];
    expect(problemIndexes(endless).size).toBeLessThan(500);
    const kernel = [line('Out of memory: Killed process 4242 (python3)', 3, 0, 'kernel'), line('Killed', 6)];
    expect(problemIndexes(kernel)).toEqual(new Set([0, 1]));
  });
});
