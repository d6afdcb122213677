// Why a failing unit fails, as the card and the service page both read it: exit status, restarts, since when
// (systemd's state change, not the last time it entered "active"), the last error of its journal and the moment
// to open the journal at. The service page used to say "Result success" and "Since … 47 min ago" beside a card
// saying auto-restart.
import { describe, expect, it } from 'vitest';
import { unitFacts } from '../../src/renderer/src/components/unit-facts';
import { unitStateProps } from '../../src/renderer/src/components/unit-props';
import { conditionOfObservation } from '../../src/renderer/src/components/condition';
import { formatDateTime, formatDuration } from '../../src/renderer/src/format';
import type { ServiceObservation } from '../../src/shared/domain';

const T = 1_764_395_658_000;
const crashLooping: ServiceObservation = {
  role: 'decode',
  unit: 'sglang-decode.service',
  systemd: {
    unit: 'sglang-decode.service',
    loadState: 'loaded',
    activeState: 'activating',
    subState: 'auto-restart',
    mainPid: 0,
    nRestarts: 4,
    // Entered "active" 47 min ago, before the loop began; systemd resets Result at each start.
    activeEnterTimestamp: T - 47 * 60_000,
    stateChangeTimestamp: T - 3_000,
    result: 'success',
    execMainCode: 2,
    execMainStatus: 9,
    restartPolicy: 'on-failure',
  },
  health: { ok: false, detail: 'connection refused', checkedAt: T - 1_000 },
  evidence: {
    lastExit: {
      ts: T - 3_000,
      code: 'killed',
      status: '9/KILL',
      text: 'Main process exited, code=killed, status=9/KILL',
    },
    lastError: { ts: T - 3_040, text: 'RuntimeError: CUDA error: an illegal memory access was encountered' },
    loadsMs: [],
  },
};

describe('unitFacts', () => {
  it('a crash loop: exit status, restarts, since its last crash, the last error and where to open the journal', () => {
    const c = conditionOfObservation('decode', crashLooping, undefined, T);
    expect(c.kind).toBe('crash-looping');
    const f = unitFacts(c, crashLooping);
    expect(f).toMatchObject({
      failing: true,
      exitStatus: 'SIGKILL',
      restarts: 4,
      since: T - 3_000,
      lastError: {
        ts: T - 3_040,
        text: 'RuntimeError: CUDA error: an illegal memory access was encountered',
      },
      crashAt: T - 3_040,
    });
    // The condition's line quotes it: its row gives the time and the way to the journal, not the text again.
    expect(c.text).toContain('(RuntimeError: CUDA error');
    expect(f.errorInCondition).toBe(true);
  });

  it('a serving unit shows no old error and no exit status', () => {
    const serving: ServiceObservation = {
      ...crashLooping,
      systemd: { ...crashLooping.systemd!, activeState: 'active', subState: 'running', nRestarts: 0 },
      health: { ok: true, detail: '200 OK', checkedAt: T },
      evidence: {
        ...crashLooping.evidence!,
        lastExit: undefined,
        lastError: { ts: T - 86_400_000, text: 'old' },
      },
    };
    const c = conditionOfObservation('decode', serving, undefined, T);
    expect(unitFacts(c, serving)).toEqual({
      failing: false,
      errorInCondition: false,
      since: c.since,
      restarts: 0,
    });
  });
});

describe('unitStateProps beside the condition', () => {
  it('says since when it is in its present state, the exit status, and Result only when it is not success', () => {
    const c = conditionOfObservation('decode', crashLooping, undefined, T);
    const rows = Object.fromEntries(unitStateProps(crashLooping.systemd, T, c));
    expect(rows['State since']).toBe(`${formatDateTime(T - 3_000)} (${formatDuration(3_000)} ago)`);
    expect(rows['Exit status']).toBe('SIGKILL');
    expect(rows.NRestarts).toBe(4);
    expect(rows).not.toHaveProperty('Result');
    expect(rows).not.toHaveProperty('Active since');
  });
});
