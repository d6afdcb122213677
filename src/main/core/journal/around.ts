// "Logs around this moment": the journal lines of ±span around a time, from whichever source holds them — the
// host's journal over SSH (live) or the lines a recording kept (review). The window, the cap and the answer's
// shape are the same for both; only where the lines come from differs.
import type { JournalAroundResult, JournalEntry } from '@shared/contract';

/** At most this many lines per answer; the answer says when there were more. */
export const AROUND_MAX_LINES = 2000;

export interface AroundSource {
  /** Lines with fromMs ≤ ts ≤ toMs, oldest first, at most `max` (more may be returned: they are cut here). */
  read(fromMs: number, toMs: number, max: number): Promise<{ lines: JournalEntry[]; command: string }>;
}

export async function journalAround(
  source: AroundSource,
  ts: number,
  spanMs: number,
): Promise<JournalAroundResult> {
  const fromMs = ts - spanMs;
  const toMs = ts + spanMs;
  const { lines, command } = await source.read(fromMs, toMs, AROUND_MAX_LINES + 1);
  const truncated = lines.length > AROUND_MAX_LINES;
  return { fromMs, toMs, command, lines: truncated ? lines.slice(0, AROUND_MAX_LINES) : lines, truncated };
}

/** The units of one host whose journal a window reads, through that host's own link. */
export interface HostJournal {
  hostId: string;
  /** Reads the host's journal: the command's stdout, or throws why it could not. */
  run(command: string): Promise<string>;
  units: { unit: string; nodeRank?: number }[];
}

/**
 * A window over several hosts' journals (a fleet worker's units, a role's workers), each read on its own host
 * and labelled with it (and the node rank of a multi-node worker's unit), merged in time order. A host that
 * cannot be read costs only its own lines: the command says which and why, the others still answer. Unlabelled
 * (`label: false`), lines come as read; there, or with one host, a host's failure is the call's.
 */
export function hostsJournal(
  hosts: readonly HostJournal[],
  build: (units: string[], fromMs: number, toMs: number, max: number) => string,
  parse: (stdout: string) => JournalEntry[],
  opts: { label: boolean },
): AroundSource {
  return {
    read: async (fromMs, toMs, max) => {
      const parts = await Promise.all(
        hosts.map(async (h) => {
          const command = build(
            h.units.map((u) => u.unit),
            fromMs,
            toMs,
            max,
          );
          const rank = new Map(h.units.map((u) => [u.unit, u.nodeRank]));
          try {
            // journalctl's --since/--until are whole seconds: keep the second either side.
            const lines = parse(await h.run(command)).filter(
              (l) => l.ts >= fromMs - 1000 && l.ts <= toMs + 1000,
            );
            return {
              command: opts.label ? `${h.hostId}: ${command}` : command,
              lines: opts.label
                ? lines.map((l) => {
                    const r = l.unit === undefined ? undefined : rank.get(l.unit);
                    return { ...l, host: h.hostId, ...(r !== undefined ? { nodeRank: r } : {}) };
                  })
                : lines,
            };
          } catch (err) {
            if (!opts.label || hosts.length === 1) throw err;
            return { command: `${h.hostId}: not read — ${(err as Error).message}`, lines: [] };
          }
        }),
      );
      const lines = parts.flatMap((p) => p.lines);
      if (parts.length > 1) lines.sort((a, b) => a.ts - b.ts);
      return { lines, command: parts.map((p) => p.command).join('\n') };
    },
  };
}
