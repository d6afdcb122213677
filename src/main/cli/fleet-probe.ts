// One look at every unit of a fleet, each through its own host's link from the pool: systemd state (one
// `systemctl show` per host), /health, and the exact KV from /metrics read by the one KV evaluator
// (extractKv; /server_info completes the capacity for servers that do not export it, as the monitor does).
// A host that cannot be reached makes its units say why; the other hosts are read all the same.
import type { HealthResult, KvUsage, UnitState } from '@shared/domain';
import type { Fleet } from '@shared/fleet';
import { parseHostSpec } from '@shared/host-spec';
import type { HostLinkPool } from '../core/ssh/host-link-pool';
import type { SshConnection } from '../core/ssh/connection';
import { parseSystemctlShow, systemctlShowCommand } from '../core/probes/systemd';
import { checkHealth } from '../core/probes/health';
import { scrapeMetrics } from '../core/probes/metrics';
import { isKvMissing, serverInfoCapacity } from '../core/probes/sglang/kv';
import { extractKv } from '../core/signals/evaluate/kv-usage';
import { httpGet } from '../core/ssh/http-agent';

export interface UnitReading {
  state?: UnitState;
  /** Why systemd state is unknown. */
  error?: string;
}

export interface ServerReading {
  health?: HealthResult;
  kv?: KvUsage;
  /** Why there is no KV figure (scrape failed, no KV gauge, metrics disabled). */
  kvError?: string;
  /** Why nothing could be read at all (the host's link). */
  unreachable?: string;
}

export interface FleetReading {
  /** `host unit` → state. */
  units: Map<string, UnitReading>;
  /** apiUrl-on-host key (`host apiUrl`) → reading; DP-aware workers of one server share one. */
  servers: Map<string, ServerReading>;
}

export const unitKey = (host: string, unit: string): string => `${host} ${unit}`;
export const serverKey = (host: string, apiUrl: string): string => `${host} ${apiUrl}`;

export async function probeFleet(
  fleet: Fleet,
  pool: HostLinkPool,
  now: () => number = Date.now,
): Promise<FleetReading> {
  const unitsByHost = new Map<string, Set<string>>();
  const want = (host: string, unit: string) => {
    const s = unitsByHost.get(host) ?? new Set<string>();
    s.add(unit);
    unitsByHost.set(host, s);
  };
  for (const r of fleet.routers) want(r.host, r.unit);
  for (const w of fleet.workers) for (const u of w.units) want(u.host, u.unit);

  const servers = new Map<string, { host: string; apiUrl: string; metricsUrl?: string; unit: string }>();
  for (const w of fleet.workers)
    if (w.units.length > 0)
      servers.set(serverKey(w.host, w.apiUrl), {
        host: w.host,
        apiUrl: w.apiUrl,
        metricsUrl: w.metricsUrl,
        unit: w.units[0].unit,
      });
  const routerTargets = fleet.routers.map((r) => ({ host: r.host, apiUrl: r.apiUrl }));

  const out: FleetReading = { units: new Map(), servers: new Map() };
  const hosts = new Set([
    ...unitsByHost.keys(),
    ...[...servers.values()].map((s) => s.host),
    ...routerTargets.map((r) => r.host),
  ]);
  await Promise.all(
    [...hosts].map(async (host) => {
      let conn: SshConnection;
      try {
        conn = await pool.get(parseHostSpec(host) ?? { id: host, label: host, kind: 'ssh', alias: host });
      } catch (err) {
        const why = (err as Error).message;
        for (const u of unitsByHost.get(host) ?? [])
          out.units.set(unitKey(host, u), { error: `unreachable: ${why}` });
        for (const [k, s] of servers)
          if (s.host === host) out.servers.set(k, { unreachable: `unreachable: ${why}` });
        for (const r of routerTargets)
          if (r.host === host)
            out.servers.set(serverKey(host, r.apiUrl), { unreachable: `unreachable: ${why}` });
        return;
      }
      const units = [...(unitsByHost.get(host) ?? [])];
      const tasks: Promise<void>[] = [];
      if (units.length > 0)
        tasks.push(
          conn.exec(systemctlShowCommand(units), { timeoutMs: 15_000 }).then(
            (r) => {
              try {
                const states = parseSystemctlShow(r.stdout, units);
                for (const u of units) out.units.set(unitKey(host, u), { state: states.get(u) });
              } catch (err) {
                for (const u of units) out.units.set(unitKey(host, u), { error: (err as Error).message });
              }
            },
            (err: Error) => {
              for (const u of units) out.units.set(unitKey(host, u), { error: err.message });
            },
          ),
        );
      // A link that drops mid-probe fails its reads (httpAgent() throws once disconnected): those say so.
      const lost = (err: unknown): ServerReading => ({
        unreachable: `unreachable: ${(err as Error).message}`,
      });
      for (const [k, s] of servers)
        if (s.host === host)
          tasks.push(
            (async () => readServer(conn, s, now))()
              .catch(lost)
              .then((r) => void out.servers.set(k, r)),
          );
      for (const r of routerTargets)
        if (r.host === host)
          tasks.push(
            (async () => ({ health: await checkHealth(conn.httpAgent(), `${r.apiUrl}/health`, now) }))()
              .catch(lost)
              .then((x) => void out.servers.set(serverKey(host, r.apiUrl), x)),
          );
      await Promise.all(tasks);
    }),
  );
  return out;
}

async function readServer(
  conn: SshConnection,
  s: { apiUrl: string; metricsUrl?: string; unit: string },
  now: () => number,
): Promise<ServerReading> {
  const agent = conn.httpAgent();
  const [health, scrape] = await Promise.all([
    checkHealth(agent, `${s.apiUrl}/health`, now),
    s.metricsUrl
      ? scrapeMetrics(agent, { url: s.metricsUrl, what: s.apiUrl, unit: s.unit, kind: 'server' })
      : Promise.resolve(null),
  ]);
  if (!scrape) return { health, kvError: `metrics disabled: add --enable-metrics to ExecStart of ${s.unit}` };
  if (!scrape.ok) return { health, kvError: scrape.error + (scrape.hint ? ` — ${scrape.hint}` : '') };
  let kv = extractKv(scrape.exposition);
  if (isKvMissing(kv) && kv.needsServerInfo) {
    // Older servers export no capacity gauge; /server_info (/get_server_info before the rename) has it.
    for (const path of ['/server_info', '/get_server_info']) {
      try {
        const res = await httpGet(agent, `${s.apiUrl}${path}`, { timeoutMs: 5000, maxBytes: 4 << 20 });
        const cap = res.status === 200 ? serverInfoCapacity(JSON.parse(res.body) as unknown) : undefined;
        if (cap) {
          kv = extractKv(scrape.exposition, { capacityFromServerInfo: cap });
          break;
        }
      } catch {
        // Not JSON or not there: try the other name; the reason below says what is missing.
      }
    }
  }
  return isKvMissing(kv) ? { health, kvError: kv.reason } : { health, kv };
}
