// How the verdict and the alerts name a fleet's workers: "decode-2 on gpu-b", a multi-node worker by all its
// hosts ("decode-2 on gpu-b+gpu-c"), and a list once with its hosts after it ("decode-0, decode-1, decode-2
// (gpu-b, gpu-c)"), so an operator reading one line knows where to look.
import type { Role, ServiceConfig } from '@shared/domain';
import { normalizeWorkerUrl } from '../probes/sglang/worker-url';

export interface FleetWorker {
  /** The scope of its keys (`decode-2`). */
  id: string;
  role: Role;
  /** Every host it runs on, node rank 0's first; none when unknown. */
  hosts?: readonly string[];
  /** Its URL as the router lists it, normalised (`normalizeWorkerUrl`), to match the router's own reports. */
  url?: string;
}

/** A fleet's workers with their hosts; undefined for a one-host pair (its services carry no id). */
export function fleetWorkersOf(services: readonly ServiceConfig[]): FleetWorker[] | undefined {
  const ids = services.filter((s) => s.id !== undefined);
  if (ids.length === 0) return undefined;
  return ids.map((s) => ({
    id: s.id!,
    role: s.role,
    hosts: s.units?.length ? [...new Set(s.units.map((u) => u.hostId))] : [s.hostId],
    ...(s.workerUrl ? { url: normalizeWorkerUrl(s.workerUrl) } : {}),
  }));
}

/** "decode-2 on gpu-b", "decode-2 on gpu-b+gpu-c", or the bare id when its host is unknown. */
export function workerName(w: FleetWorker): string {
  return w.hosts?.length ? `${w.id} on ${w.hosts.join('+')}` : w.id;
}

/**
 * Several workers named once: one by workerName, more as their ids with every host they use after them
 * ("decode-0, decode-1, decode-2 (gpu-b, gpu-c)"); a run of four or more numbered ids is shortened
 * ("decode-0–7"), so a role of sixteen stays one line.
 */
export function workerList(ws: readonly FleetWorker[]): string {
  if (ws.length === 1) return workerName(ws[0]);
  const hosts = [...new Set(ws.flatMap((w) => w.hosts ?? []))];
  const ids = compactIds(ws.map((w) => w.id));
  return hosts.length ? `${ids} (${hosts.join(', ')})` : ids;
}

function compactIds(ids: readonly string[]): string {
  const out: string[] = [];
  let k = 0;
  while (k < ids.length) {
    const m = /^(.*?)(\d+)$/.exec(ids[k]);
    let end = k;
    if (m) while (end + 1 < ids.length && ids[end + 1] === `${m[1]}${Number(m[2]) + end + 1 - k}`) end++;
    if (m && end - k >= 3) out.push(`${ids[k]}–${Number(m[2]) + end - k}`);
    else for (let j = k; j <= end; j++) out.push(ids[j]);
    k = end + 1;
  }
  return out.join(', ');
}
