// What one poll of the live app writes into the signal store for one scrape: the scrape's signals (ingest,
// the dashboard's 'scrape' hook) and the monitor's KV reading of the same scrape, which arrives with the
// observation of the poll (ingestObservation). Returns both, merged as the dashboard pushes them.
import type { SignalsStore } from '../../../src/main/core/signals/signals-store';
import { extractKv } from '../../../src/main/core/signals/evaluate/kv-usage';
import { isKvMissing } from '../../../src/main/core/probes/sglang/kv';
import type { Exposition } from '../../../src/main/core/probes/exposition/types';
import type { Role, ServiceObservation } from '../../../src/shared/domain';

export function ingestPoll(
  store: SignalsStore,
  deploymentId: string,
  ts: number,
  role: Role,
  exp: Exposition,
  opts: { capacityFromServerInfo?: number } = {},
): Record<string, number | null> {
  const values = store.ingest(deploymentId, ts, role, exp);
  if (role === 'router') return values;
  const kv = extractKv(exp, opts);
  // Only what the monitor reads from this scrape: systemd, health and the scrape status are other tests' concern.
  const service: ServiceObservation = isKvMissing(kv)
    ? { role, unit: `sglang-${role}.service`, kvMissing: { reason: kv.reason, expected: kv.expected } }
    : { role, unit: `sglang-${role}.service`, kv };
  const observed = store.ingestObservation({ deploymentId, hostId: 'h', ts, services: [service] });
  return { ...values, ...observed };
}
