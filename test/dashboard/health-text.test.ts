// A service's /health as the cards and worker pages say it: an ok read before the unit left the active state says
// when it was read instead of "healthy" (a crash-looping decode read "activating · healthy").
import { describe, expect, it } from 'vitest';
import { healthText } from '../../src/renderer/src/components/health-text';
import type { HealthResult, UnitState } from '../../src/shared/domain';

const unit = (activeState: string): UnitState => ({
  unit: 'sglang-decode.service',
  loadState: 'loaded',
  activeState,
  subState: activeState === 'active' ? 'running' : 'start-post',
  mainPid: 1,
  nRestarts: 1,
  activeEnterTimestamp: null,
  result: 'success',
});
const ok: HealthResult = { ok: true, status: 200, detail: '200 OK', checkedAt: 10_000 };
const refused: HealthResult = { ok: false, detail: 'connection refused', checkedAt: 10_000 };

describe('healthText', () => {
  it('says healthy or the failure while the unit is active, and "not checked yet" before the first check', () => {
    expect(healthText(ok, unit('active'), 12_000)).toEqual({ text: 'healthy', tone: 'ok', stale: false });
    expect(healthText(refused, unit('active'), 12_000)).toEqual({
      text: 'connection refused',
      tone: 'bad',
      stale: false,
    });
    expect(healthText(undefined, unit('active'), 12_000).text).toBe('not checked yet');
  });

  it('gives an ok from before the unit left the active state as the last one, with its age', () => {
    expect(healthText(ok, unit('activating'), 13_500)).toEqual({
      text: 'ok 3s ago, before it went activating',
      tone: 'muted',
      stale: true,
    });
    // A failure is news whatever the state.
    expect(healthText(refused, unit('failed'), 13_500).text).toBe('connection refused');
  });
});
