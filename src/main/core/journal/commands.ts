// journalctl command lines for a unit, built only from allow-listed, quoted arguments.
import { assertUnitName, shellCommand } from '../ssh/shell';

/** Last `lines` entries of a unit. */
export function journalTailCommand(unit: string, lines: number): string {
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    // Fields over 4096 bytes (SGLang's server_args line) are null without it; journal-json.ts caps what is kept.
    '--all',
    '-u',
    assertUnitName(unit),
    '-n',
    String(clampInt(lines, 0, 5000)),
  ]);
}

/** Entries after a cursor (follow by polling: each call returns what arrived since the last one). */
export function journalAfterCursorCommand(unit: string, cursor: string, maxLines: number): string {
  checkedCursor(cursor);
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    // Fields over 4096 bytes (SGLang's server_args line) are null without it; journal-json.ts caps what is kept.
    '--all',
    '-u',
    assertUnitName(unit),
    '--after-cursor',
    cursor,
    '-n',
    String(clampInt(maxLines, 1, 5000)),
  ]);
}

/**
 * The newest entry of the whole journal, whatever its unit: a position to follow from. With no unit filter it is
 * empty only when the journal is.
 */
export function journalPositionCommand(): string {
  return shellCommand(['journalctl', '--no-pager', '-o', 'json', '--all', '-n', '1']);
}

/**
 * One `journalctl --follow` over several units: every entry after `afterCursor` (with --follow, journalctl does
 * not stop at -n when it starts from a cursor), or, without a cursor (the journal was empty), every entry.
 */
export function journalFollowUnitsCommand(
  units: readonly string[],
  afterCursor: string | null,
  /** Only the fields the app reads (systemd ≥ 236; older journalctl refuses the option). */
  fields: readonly string[] | null = null,
): string {
  if (units.length === 0) throw new RangeError('journal follow needs at least one unit');
  return shellCommand([
    'journalctl',
    '--no-pager',
    '-o',
    'json',
    // Fields over 4096 bytes (SGLang's server_args line) are null without it; journal-json.ts caps what is kept.
    '--all',
    ...(fields ? [`--output-fields=${fields.join(',')}`] : []),
    '--follow',
    ...units.flatMap((u) => ['-u', assertUnitName(u)]),
    ...(afterCursor === null ? ['--lines=all'] : ['--after-cursor', checkedCursor(afterCursor)]),
  ]);
}

function checkedCursor(cursor: string): string {
  if (!/^[A-Za-z0-9=;_-]{1,512}$/.test(cursor)) throw new Error(`journal cursor has unexpected characters`);
  return cursor;
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
    // Fields over 4096 bytes (SGLang's server_args line) are null without it; journal-json.ts caps what is kept.
    '--all',
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
