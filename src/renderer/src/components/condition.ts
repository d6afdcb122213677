// A service's condition (shared/unit-condition.ts) from its observation, and the card tone it gives.
import type { Role, ServiceObservation } from '@shared/domain';
import { unitCondition, type UnitCondition } from '@shared/unit-condition';

export function conditionOfObservation(
  role: Role,
  obs: ServiceObservation | undefined,
  now: number,
): UnitCondition {
  return unitCondition({
    role,
    ...(obs?.systemd ? { systemd: obs.systemd } : {}),
    ...(obs?.health ? { health: obs.health } : {}),
    ...(obs?.evidence ? { evidence: obs.evidence } : {}),
    now,
  });
}

export function conditionTone(c: UnitCondition): 'ok' | 'warn' | 'bad' | 'idle' {
  return c.tone === 'muted' ? 'idle' : c.tone;
}
