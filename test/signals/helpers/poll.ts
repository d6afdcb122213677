// What one poll of the live app writes into the signal store for one scrape of a one-host (1P1D) deployment: the
// scrape's signals under its worker's keys (ingest, the dashboard's 'scrape' hook) and the monitor's KV reading of
// the same scrape, which arrives with the observation of the poll (ingestObservation). The worker ids are those a
// 1P1D is given (fleetOfServices): `router`, `prefill-0`, `decode-0`. Returns both, merged as the dashboard pushes
// them: the worker's keys (`decode.kv_ratio@decode-0`) and its role's (`decode.kv_ratio`).
import type { SignalsStore } from '../../../src/main/core/signals/signals-store';
import { extractKv } from '../../../src/main/core/signals/evaluate/kv-usage';
import { isKvMissing } from '../../../src/main/core/probes/sglang/kv';
import type { Exposition } from '../../../src/main/core/probes/exposition/types';
import type { Role, ServiceObservation } from '../../../src/shared/domain';

/** The id of a 1P1D's service of `role`. */
export const oneHostId = (role: Role): string => (role === 'router' ? 'router' : `${role}-0`);

export function ingestPoll(
  store: SignalsStore,
  deploymentId: string,
  ts: number,
  role: Role,
  exp: Exposition,
  opts: { capacityFromServerInfo?: number } = {},
): Record<string, number | null> {
  const id = oneHostId(role);
  const values = store.ingest(deploymentId, ts, role, exp, id);
  if (role === 'router') return values;
  const kv = extractKv(exp, opts);
  // Only what the monitor reads from this scrape: systemd, health and the scrape status are other tests' concern.
  const service: ServiceObservation = isKvMissing(kv)
    ? { role, id, unit: `sglang-${role}.service`, kvMissing: { reason: kv.reason, expected: kv.expected } }
    : { role, id, unit: `sglang-${role}.service`, kv };
  const observed = store.ingestObservation({ deploymentId, hostId: 'h', ts, services: [service] });
  return { ...values, ...observed };
}
