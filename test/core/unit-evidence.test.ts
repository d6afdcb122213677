// What a unit's journal says, from lines shaped as systemd 252 and SGLang write them (see test/real-systemd).
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '@shared/contract';
import { UnitEvidenceTracker } from '../../src/main/core/journal/unit-evidence';

let n = 0;
const line = (
  ts: number,
  message: string,
  from: 'systemd' | 'python3' = 'python3',
  priority = 6,
): JournalEntry => ({
  cursor: `c${n++}`,
  ts,
  priority,
  message,
  identifier: from,
  pid: from === 'systemd' ? 1 : 40,
  unit: 'dsv4-decode.service',
});

describe('UnitEvidenceTracker', () => {
  it('keeps systemd exit lines, the error a traceback ends with (at info priority), and load durations', () => {
    const t = new UnitEvidenceTracker('dsv4-decode.service');
    expect(t.evidence).toBeUndefined();
    t.backlog([
      line(1_000, 'Started dsv4-decode.service - DeepSeek V4 decode (SGLang).', 'systemd'),
      line(241_000, '[2026-12-06 07:48:06] The server is fired up and ready to roll!'),
      line(
        300_000,
        '[2026-12-06 07:53:06 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      ),
      line(
        300_001,
        '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 2966, in run_scheduler_process',
      ),
      line(300_002, 'RuntimeError: CUDA error: an illegal memory access was encountered'),
      line(300_003, 'CUDA kernel errors might be asynchronously reported at some other API call'),
      line(
        300_100,
        '[2026-12-06 07:53:06] Received sigquit from a child process. It usually means the child failed.',
      ),
      line(300_500, 'dsv4-decode.service: Main process exited, code=exited, status=1/FAILURE', 'systemd', 5),
      line(301_000, "dsv4-decode.service: Failed with result 'exit-code'.", 'systemd', 4),
    ]);
    const e = t.evidence!;
    expect(e.loadsMs).toEqual([240_000]);
    expect(e.lastError?.text).toBe('RuntimeError: CUDA error: an illegal memory access was encountered');
    expect(e.lastExit).toMatchObject({ ts: 300_500, code: 'exited', status: '1/FAILURE' });
  });

  it('a later failure replaces an earlier one', () => {
    const t = new UnitEvidenceTracker('u');
    t.backlog([line(1_000, 'RuntimeError: first')]);
    t.onLines([line(100_000, 'Killed')]);
    expect(t.evidence?.lastError?.text).toBe('Killed');
  });

  it('a journal it may not read is said, not taken for a quiet one', () => {
    const t = new UnitEvidenceTracker('u');
    t.onError('No journal files were opened due to insufficient permissions.');
    expect(t.evidence).toEqual({
      loadsMs: [],
      unreadable: 'No journal files were opened due to insufficient permissions.',
    });
  });
});
