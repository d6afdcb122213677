// The verdict box lists the lines the headline does not already say: a stuck pipeline's headline quotes its
// leading figure, and a second copy of it right under the headline was what the operator read twice.
import { describe, expect, it } from 'vitest';
import { pipelineVerdict } from '../../src/main/core/signals/verdict';
import { evidenceBeyondHeadline } from '../../src/renderer/src/components/verdict-evidence';
import { DEMO_FLEET_WORKERS as WORKERS } from '../support/fleet-workers';
import type { Role } from '../../src/shared/domain';

const ROLES: Role[] = ['router', 'prefill', 'decode'];

function values(over: Record<string, number | null>): Record<string, number | null> {
  const base: Record<string, number | null> = {
    'prefill.running': 4,
    'prefill.queued': 0,
    'decode.running': 30,
    'decode.queued': 0,
    'decode.kv_ratio': 0.5,
    'router.router_requests_per_s': 5,
    'router.router_error_share': 0,
  };
  for (const r of ROLES)
    Object.assign(base, { [`${r}.active`]: 1, [`${r}.health_ok`]: 1, [`${r}.metrics_ok`]: 1 });
  for (const w of WORKERS)
    Object.assign(base, { [`${w.role}.active@${w.id}`]: 1, [`${w.role}.health_ok@${w.id}`]: 1 });
  return { ...base, ...over };
}

describe('the verdict box evidence', () => {
  it('decode-bound: the line the headline quotes is not listed again; the others are, in order', () => {
    const v = pipelineVerdict({
      values: values({
        'decode.decode_prealloc_queue': 57,
        'decode.decode_prealloc_queue@decode-1': 57,
        'prefill.prefill_bootstrap_queue': 57,
        'prefill.prefill_bootstrap_queue@prefill-0': 34,
        'prefill.prefill_bootstrap_queue@prefill-1': 23,
        'decode.kv_ratio@decode-1': 0.99,
        'decode.kv_ratio@decode-0': 0.94,
        'decode.kv_ratio@decode-2': 0.37,
      }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('decode-bound');
    expect(v.headline).toContain(v.evidence[0]);
    const shown = evidenceBeyondHeadline(v);
    expect(shown).toEqual(v.evidence.slice(1));
    expect(shown.length).toBeGreaterThanOrEqual(2);
    for (const line of shown) expect(v.headline).not.toContain(line);
  });

  it('every decode worker down: the headline says it, the list gives the reasons only', () => {
    const v = pipelineVerdict({
      values: values({
        'decode.active': 0,
        'decode.active@decode-0': 0,
        'decode.active@decode-1': 0,
        'decode.active@decode-2': 0,
      }),
      roles: ROLES,
      workers: WORKERS,
    });
    expect(v.kind).toBe('service-down');
    const shown = evidenceBeyondHeadline(v);
    expect(shown).not.toContain(v.evidence[0]);
    expect(shown.join('\n')).toMatch(/not active/);
  });

  it('healthy: the headline quotes no figure, so every line stays', () => {
    const v = pipelineVerdict({ values: values({}), roles: ROLES, workers: WORKERS });
    expect(v.kind).toBe('healthy');
    expect(evidenceBeyondHeadline(v)).toEqual(v.evidence);
  });
});
