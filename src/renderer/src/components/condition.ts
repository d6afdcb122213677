// A service's condition (shared/unit-condition.ts) from its observation, and the card tone it gives.
import type { Observation, Role, ServiceObservation } from '@shared/domain';
import { serviceCondition, unitCondition, type UnitCondition } from '@shared/unit-condition';

export function conditionOfObservation(
  role: Role,
  obs: ServiceObservation | undefined,
  latest: Observation | undefined,
  now: number,
): UnitCondition {
  if (!obs) return unitCondition({ role, now });
  return serviceCondition(obs, latest?.services ?? [obs], now);
}

export function conditionTone(c: UnitCondition): 'ok' | 'warn' | 'bad' | 'idle' {
  return c.tone === 'muted' ? 'idle' : c.tone;
}
