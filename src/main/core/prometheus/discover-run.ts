// Runs Prometheus discovery on one host over its SSH link: the same `systemctl list-units` / `systemctl show`
// discovery reads, filtered to units whose ExecStart mentions an engine, plus the EnvironmentFile= they name
// (Debian's prometheus.service runs `/usr/bin/prometheus $ARGS` from /etc/default/prometheus).
import { LIST_UNITS_COMMAND, discoveryShowCommands, readEnvFileCommand } from '../discovery/commands';
import type { Exec } from '../discovery/run-discovery';
import { parseListUnits, parseShowExec, splitShowBatch } from '../discovery/unit-text';
import {
  findPromUnits,
  MENTIONS_PROM_ENGINE,
  type PromUnitFinding,
  type PromUnitEvidence,
} from './discover-units';

export async function discoverPromUnits(
  conn: Exec,
  hostId: string,
  hostLabel: string,
): Promise<PromUnitFinding[]> {
  const list = await conn.exec(LIST_UNITS_COMMAND, { timeoutMs: 20_000, maxBytes: 4 * 1024 * 1024 });
  if (list.exitCode !== 0)
    throw new Error(
      `Prometheus discovery on ${hostLabel}: \`${LIST_UNITS_COMMAND}\` failed (exit ${list.exitCode}): ${list.stderr.trim().slice(0, 300)}`,
    );
  const units = parseListUnits(list.stdout)
    .filter((u) => u.load !== 'not-found')
    .map((u) => u.unit);
  const evidence: PromUnitEvidence[] = [];
  for (const cmd of discoveryShowCommands(units)) {
    const r = await conn.exec(cmd, { timeoutMs: 20_000, maxBytes: 8 * 1024 * 1024 });
    for (const [unit, show] of splitShowBatch(r.stdout)) {
      const exec = parseShowExec(show);
      if (!exec.execStart.some((l) => MENTIONS_PROM_ENGINE.test(l))) continue;
      const envFiles: Record<string, string> = {};
      for (const f of exec.environmentFiles) {
        let cmdLine: string;
        try {
          cmdLine = readEnvFileCommand(f);
        } catch {
          continue; // an odd path is reported as the unresolved $VAR it leaves
        }
        const read = await conn.exec(cmdLine, { timeoutMs: 10_000, maxBytes: 256 * 1024 });
        if (read.exitCode === 0) envFiles[f.replace(/^-/, '')] = read.stdout;
      }
      evidence.push({ unit, show, envFiles });
    }
  }
  return findPromUnits(hostId, evidence);
}
