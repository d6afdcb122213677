// How the verdict, the alerts, the CLI and the screens name a deployment's workers: "decode-2 on gpu-b", a
// multi-node worker by all its hosts ("decode-2 on gpu-b+gpu-c"), and a list once with its hosts after it
// ("decode-0, decode-1, decode-2 (gpu-b, gpu-c)"), so an operator reading one line knows where to look. The only
// worker of its role is named by the role ("decode"; "decode on gpu-b" when the deployment spans several hosts),
// as a 1P1D operator says it.
import type { Role, ServiceConfig } from '@shared/domain';
import { normalizeWorkerUrl } from '@shared/worker-url';

export interface FleetWorker {
  /** The scope of its keys (`decode-2`). */
  id: string;
  role: Role;
  /** Every host it runs on, node rank 0's first; none when unknown. */
  hosts?: readonly string[];
  /** Its URL as the router lists it, normalised (`normalizeWorkerUrl`), to match the router's own reports. */
  url?: string;
  /** It is the only worker of its role; `manyHosts`: the deployment spans more than one host. */
  alone?: { manyHosts: boolean };
}

/** A deployment's workers with their hosts (services without an id, of an old recording: none). */
export function fleetWorkersOf(services: readonly ServiceConfig[]): FleetWorker[] | undefined {
  const ids = services.filter((s) => s.id !== undefined);
  if (ids.length === 0) return undefined;
  const workers = ids.map((s) => ({
    id: s.id!,
    role: s.role,
    hosts: s.units?.length ? [...new Set(s.units.map((u) => u.hostId))] : [s.hostId],
    ...(s.workerUrl ? { url: normalizeWorkerUrl(s.workerUrl) } : {}),
  }));
  return markAlone(workers, new Set(workers.flatMap((w) => w.hosts)).size > 1);
}

/** Marks the only worker of each role (see workerName). */
export function markAlone<W extends FleetWorker>(workers: readonly W[], manyHosts: boolean): W[] {
  const per = new Map<Role, number>();
  for (const w of workers) per.set(w.role, (per.get(w.role) ?? 0) + 1);
  return workers.map((w) => (per.get(w.role) === 1 ? { ...w, alone: { manyHosts } } : w));
}

/**
 * "decode-2 on gpu-b", "decode-2 on gpu-b+gpu-c", the bare id when its host is unknown; the only worker of its
 * role by the role, with its host only when the deployment has several.
 */
export function workerName(w: FleetWorker): string {
  const on = w.hosts?.length ? ` on ${w.hosts.join('+')}` : '';
  if (w.alone) return w.alone.manyHosts ? `${w.role}${on}` : w.role;
  return `${w.id}${on}`;
}

/** The name without its host: the id, or the role of the only worker of its role. */
export function workerShortName(w: FleetWorker): string {
  return w.alone ? w.role : w.id;
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
