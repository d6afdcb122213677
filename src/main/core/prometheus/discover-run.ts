// Runs Prometheus discovery on one host over its SSH link: the units whose configuration or processes mention an
// engine, read the way SGLang's units are (discovery/read-units.ts: running processes, unit files, the
// EnvironmentFile= they name — Debian's prometheus.service runs `/usr/bin/prometheus $ARGS` from
// /etc/default/prometheus).
import { readUnits, type Exec } from '../discovery/read-units';
import { findPromUnits, MENTIONS_PROM_ENGINE, type PromUnitFinding } from './discover-units';

export async function discoverPromUnits(
  conn: Exec,
  hostId: string,
  hostLabel: string,
): Promise<PromUnitFinding[]> {
  const host = await readUnits(conn, hostLabel, MENTIONS_PROM_ENGINE);
  return findPromUnits(hostId, host.units);
}
