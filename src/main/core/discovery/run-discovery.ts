// Runs discovery over an SSH connection: list the service units, read what each one executes, hand the
// text to the pure discoverDeployment(). Only units whose ExecStart mentions SGLang get a `systemctl cat`,
// so a host with hundreds of services costs a few commands, not hundreds.
import { parseListUnits, splitShowBatch } from './unit-text';
import { LIST_UNITS_COMMAND, discoveryShowCommands, systemctlCatCommand } from './commands';
import { discoverDeployment, type DiscoveryInput, type DiscoveryResult, type UnitEvidence } from './discover';

export interface Exec {
  exec(
    command: string,
    opts?: { timeoutMs?: number; maxBytes?: number },
  ): Promise<{
    stdout: string;
    stderr: string;
    exitCode: number | null;
  }>;
}

const MENTIONS_SGLANG = /sglang|smg|mini_lb/i;

export async function runDiscovery(
  conn: Exec,
  hostId: string,
  hostLabel: string,
  chosen?: DiscoveryInput['chosen'],
): Promise<DiscoveryResult> {
  const list = await conn.exec(LIST_UNITS_COMMAND, { timeoutMs: 20_000, maxBytes: 4 * 1024 * 1024 });
  if (list.exitCode !== 0)
    throw new Error(
      `discovery on ${hostLabel}: \`${LIST_UNITS_COMMAND}\` failed (exit ${list.exitCode}): ${list.stderr.trim().slice(0, 300)}`,
    );
  const units = parseListUnits(list.stdout)
    .filter((u) => u.load !== 'not-found')
    .map((u) => u.unit);
  const shows = new Map<string, string>();
  for (const cmd of discoveryShowCommands(units)) {
    const r = await conn.exec(cmd, { timeoutMs: 20_000, maxBytes: 8 * 1024 * 1024 });
    for (const [unit, block] of splitShowBatch(r.stdout)) shows.set(unit, block);
  }
  const evidence: UnitEvidence[] = [];
  for (const unit of units) {
    const show = shows.get(unit);
    if (!show || !MENTIONS_SGLANG.test(show)) continue;
    const cat = await conn.exec(systemctlCatCommand(unit), { timeoutMs: 10_000, maxBytes: 1024 * 1024 });
    evidence.push({ unit, show, cat: cat.exitCode === 0 ? cat.stdout : undefined });
  }
  return discoverDeployment({ hostId, listUnits: list.stdout, units: evidence, name: undefined, chosen });
}
