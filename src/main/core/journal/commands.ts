// journalctl command lines for a unit, built only from allow-listed, quoted arguments.
import { assertUnitName, shellCommand } from '../ssh/shell';

/** Last `lines` entries of a unit. */
export function journalTailCommand(unit: string, lines: number): string {
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    '-u',
    assertUnitName(unit),
    '-n',
    String(clampInt(lines, 0, 5000)),
  ]);
}

/** Entries after a cursor (follow by polling: each call returns what arrived since the last one). */
export function journalAfterCursorCommand(unit: string, cursor: string, maxLines: number): string {
  if (!/^[A-Za-z0-9=;_-]{1,512}$/.test(cursor)) throw new Error(`journal cursor has unexpected characters`);
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    '-u',
    assertUnitName(unit),
    '--after-cursor',
    cursor,
    '-n',
    String(clampInt(maxLines, 1, 5000)),
  ]);
}

/** `journalctl -f`: the live stream, for a connection that can stream an exec channel. */
export function journalFollowCommand(unit: string, lines: number): string {
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    '-f',
    '-u',
    assertUnitName(unit),
    '-n',
    String(clampInt(lines, 0, 5000)),
  ]);
}

/** Entries of the units between two instants (Cockpit's "logs around this point"). */
export function journalWindowCommand(
  units: readonly string[],
  fromMs: number,
  toMs: number,
  maxLines: number,
): string {
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs) || toMs < fromMs)
    throw new RangeError(`journal window ${fromMs}..${toMs} is not a valid time range`);
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    ...units.flatMap((u) => ['-u', assertUnitName(u)]),
    '--since',
    `@${Math.floor(fromMs / 1000)}`,
    '--until',
    `@${Math.ceil(toMs / 1000)}`,
    '-n',
    String(clampInt(maxLines, 1, 20_000)),
  ]);
}

function clampInt(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, Math.floor(Number.isFinite(n) ? n : lo)));
}
