// systemd state of the deployment's units, read with ONE batched `systemctl show` per poll.
import type { UnitState } from '@shared/domain';
import { assertUnitName, shellCommand } from '../ssh/shell';

export const SHOW_PROPERTIES = [
  'Id',
  'Description',
  'LoadState',
  'ActiveState',
  'SubState',
  'MainPID',
  'NRestarts',
  'Result',
  'ExecMainStatus',
  'ExecMainCode',
  'Restart',
  'ActiveEnterTimestamp',
  'StateChangeTimestamp',
  'ExecMainStartTimestamp',
  'InactiveEnterTimestamp',
  'MemoryCurrent',
  'ExecStart',
] as const;

export function systemctlShowCommand(units: readonly string[]): string {
  return shellCommand([
    'systemctl',
    'show',
    '--no-pager',
    `--property=${SHOW_PROPERTIES.join(',')}`,
    ...units.map(assertUnitName),
  ]);
}

export class SystemdParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SystemdParseError';
  }
}

/**
 * Parses `systemctl show` output: key=value lines, units separated by a blank line, in the order asked.
 * Property order inside a block is systemd's, not ours, so nothing here depends on it.
 * `tzOffsetMinutes` is the host's UTC offset, used when timestamps carry a zone abbreviation we cannot map.
 */
export function parseSystemctlShow(
  text: string,
  units: readonly string[],
  tzOffsetMinutes = 0,
): Map<string, UnitState> {
  const blocks: Array<Map<string, string>> = [];
  let cur = new Map<string, string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    if (line === '') {
      if (cur.size) blocks.push(cur);
      cur = new Map();
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0)
      throw new SystemdParseError(
        `systemctl show output line ${i + 1} is not key=value: ${JSON.stringify(line.slice(0, 80))}`,
      );
    cur.set(line.slice(0, eq), line.slice(eq + 1));
  }
  if (cur.size) blocks.push(cur);

  const result = new Map<string, UnitState>();
  blocks.forEach((b, i) => {
    // Prefer Id=, which systemd always prints when asked; fall back to position.
    const unit = b.get('Id') ?? units[i];
    if (!unit) return;
    const name = units.find((u) => u === unit || `${u}.service` === unit) ?? unit;
    if (!b.has('ActiveState') || !b.has('LoadState'))
      throw new SystemdParseError(`systemctl show output for ${name} has no ActiveState/LoadState`);
    result.set(name, {
      unit: name,
      description: b.get('Description'),
      loadState: b.get('LoadState') ?? 'unknown',
      activeState: b.get('ActiveState') ?? 'unknown',
      subState: b.get('SubState') ?? 'unknown',
      mainPid: toInt(b.get('MainPID')),
      nRestarts: toInt(b.get('NRestarts')),
      result: b.get('Result') ?? '',
      activeEnterTimestamp: parseSystemdTimestamp(b.get('ActiveEnterTimestamp') ?? '', tzOffsetMinutes),
      memoryCurrentBytes: toBytes(b.get('MemoryCurrent')),
      execStart: b.get('ExecStart'),
      ...(b.has('ExecMainCode') ? { execMainCode: toInt(b.get('ExecMainCode')) } : {}),
      ...(b.has('ExecMainStatus') ? { execMainStatus: toInt(b.get('ExecMainStatus')) } : {}),
      ...(b.get('Restart') ? { restartPolicy: b.get('Restart') } : {}),
      ...timestamp('stateChangeTimestamp', b.get('StateChangeTimestamp'), tzOffsetMinutes),
      ...timestamp('execMainStartTimestamp', b.get('ExecMainStartTimestamp'), tzOffsetMinutes),
      ...timestamp('inactiveEnterTimestamp', b.get('InactiveEnterTimestamp'), tzOffsetMinutes),
    });
  });
  for (const u of units)
    if (!result.has(u)) throw new SystemdParseError(`systemctl show printed nothing for ${u}`);
  return result;
}

/** A timestamp property, only when systemd printed it (an older systemd may not know the property). */
function timestamp<K extends string>(
  key: K,
  v: string | undefined,
  tzOffsetMinutes: number,
): Partial<Record<K, number | null>> {
  if (v === undefined) return {};
  return { [key]: parseSystemdTimestamp(v, tzOffsetMinutes) } as Partial<Record<K, number | null>>;
}

function toInt(v: string | undefined): number {
  const n = Number.parseInt(v ?? '', 10);
  return Number.isFinite(n) ? n : 0;
}

function toBytes(v: string | undefined): number | null {
  // "[not set]" and 2^64-1 both mean "unknown" to systemd.
  if (!v || !/^\d+$/.test(v) || v === '18446744073709551615') return null;
  return Number(v);
}

const ZONES: Record<string, number> = { UTC: 0, GMT: 0, Z: 0 };

/** "Sun 2026-11-29 16:46:30 UTC" → epoch ms; "" or "n/a" → null. */
export function parseSystemdTimestamp(v: string, tzOffsetMinutes = 0): number | null {
  const m =
    /^(?:\w{3} )?(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?: ([A-Za-z]+|[+-]\d{2}:?\d{2}))?$/.exec(
      v.trim(),
    );
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const utc = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s, frac ? Math.round(Number(`0.${frac}`) * 1000) : 0);
  let offset = tzOffsetMinutes;
  if (zone && zone in ZONES) offset = ZONES[zone];
  else if (zone && /^[+-]/.test(zone)) {
    const z = zone.replace(':', '');
    offset = (z.startsWith('-') ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5)));
  }
  return utc - offset * 60_000;
}
