// journalctl over the demo journal: -u (repeatable, globs), -n, -o, --since/--until, --cursor,
// --after-cursor, --show-cursor, -r, -b, -p, -g, -q, -a, and -f, which keeps streaming new entries
// until the client closes the channel.
import {
  JOURNAL_OUTPUTS,
  cursorOf,
  formatEntry,
  matches,
  seqOfCursor,
  type JournalEntry,
  type JournalOutput,
  type JournalQuery,
} from '../journal';
import { parseJournalTime } from '../time-format';
import { mangleUnitName } from '../units';
import type { CommandContext } from './context';

const PRIORITIES = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'];

interface Opts {
  units: string[];
  lines: number | null;
  output: JournalOutput;
  follow: boolean;
  since: string | null;
  until: string | null;
  quiet: boolean;
  all: boolean;
  reverse: boolean;
  boot: string | null;
  cursor: string | null;
  afterCursor: string | null;
  showCursor: boolean;
  noHostname: boolean;
  maxPriority: number | null;
  grep: RegExp | null;
  identifiers: string[];
  fields: Set<string> | null;
}

type Parsed = { ok: true; opts: Opts } | { ok: false; message: string };

function parseArgs(argv: string[]): Parsed {
  const o: Opts = {
    units: [],
    lines: null,
    output: 'short',
    follow: false,
    since: null,
    until: null,
    quiet: false,
    all: false,
    reverse: false,
    boot: null,
    cursor: null,
    afterCursor: null,
    showCursor: false,
    noHostname: false,
    maxPriority: null,
    grep: null,
    identifiers: [],
    fields: null,
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inline: string | null = null;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    if (eq > 0) {
      inline = a.slice(eq + 1);
      a = a.slice(0, eq);
    } else if (/^-[unoSUbpgt]./.test(a)) {
      inline = a.slice(2);
      a = a.slice(0, 2);
    }
    const val = (): string | null => (inline !== null ? inline : i + 1 < argv.length ? argv[++i] : null);
    const need = (name: string): string | { error: string } => {
      const v = val();
      return v === null ? { error: `journalctl: option '${name}' requires an argument\n` } : v;
    };
    switch (a) {
      case '-u':
      case '--unit': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        o.units.push(mangleUnitName(v));
        break;
      }
      case '-n':
      case '--lines': {
        // -n takes an optional argument: "-n" alone means 10.
        const next = inline ?? (i + 1 < argv.length && /^(\+?\d+|all)$/.test(argv[i + 1]) ? argv[++i] : null);
        if (next === null) o.lines = 10;
        else if (next === 'all') o.lines = Infinity;
        else if (/^\+?\d+$/.test(next)) o.lines = Number(next.replace('+', ''));
        else return { ok: false, message: `Failed to parse lines '${next}'\n` };
        break;
      }
      case '-e':
      case '--pager-end':
        o.lines ??= 1000;
        break;
      case '--output-fields': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        o.fields = new Set(v.split(',').filter(Boolean));
        break;
      }
      case '-o':
      case '--output': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        if (!(JOURNAL_OUTPUTS as readonly string[]).includes(v))
          return { ok: false, message: `Unknown output format '${v}'.\n` };
        o.output = v as JournalOutput;
        break;
      }
      case '-f':
      case '--follow':
        o.follow = true;
        break;
      case '-S':
      case '--since': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        o.since = v;
        break;
      }
      case '-U':
      case '--until': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        o.until = v;
        break;
      }
      case '-q':
      case '--quiet':
        o.quiet = true;
        break;
      case '-a':
      case '--all':
        o.all = true;
        break;
      case '-r':
      case '--reverse':
        o.reverse = true;
        break;
      case '-b':
      case '--boot':
        o.boot =
          inline ?? (i + 1 < argv.length && /^(-?\d+|[0-9a-f]{32})$/.test(argv[i + 1]) ? argv[++i] : '0');
        break;
      case '--cursor': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        o.cursor = v;
        break;
      }
      case '--after-cursor': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        o.afterCursor = v;
        break;
      }
      case '--show-cursor':
        o.showCursor = true;
        break;
      case '--no-hostname':
        o.noHostname = true;
        break;
      case '-p':
      case '--priority': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        const top = v.includes('..') ? v.split('..')[1] : v;
        const n = /^\d$/.test(top) ? Number(top) : PRIORITIES.indexOf(top);
        if (n < 0) return { ok: false, message: `Failed to parse priority value: ${v}\n` };
        o.maxPriority = n;
        break;
      }
      case '-g':
      case '--grep': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        try {
          o.grep = new RegExp(v, /[A-Z]/.test(v) ? '' : 'i');
        } catch (err) {
          return { ok: false, message: `Bad pattern "${v}": ${(err as Error).message}\n` };
        }
        break;
      }
      case '-t':
      case '--identifier': {
        const v = need(a);
        if (typeof v !== 'string') return { ok: false, message: v.error };
        o.identifiers.push(v);
        break;
      }
      case '--no-pager':
      case '--utc':
      case '-x':
      case '--catalog':
      case '--no-full':
      case '--full':
      case '-l':
      case '--system':
      case '--merge':
      case '-m':
        break;
      default:
        return { ok: false, message: `journalctl: unrecognized option '${argv[i]}'\n` };
    }
  }
  return { ok: true, opts: o };
}

export async function journalctl(argv: string[], ctx: CommandContext): Promise<number> {
  const { sim, io } = ctx;
  sim.advance();
  const parsed = parseArgs(argv.slice(1));
  if (!parsed.ok) {
    io.err(parsed.message);
    return 1;
  }
  const o = parsed.opts;
  const q: JournalQuery = {};
  const now = sim.now;
  if (o.since) {
    const t = parseJournalTime(o.since, now);
    if (t === null) {
      io.err(`Failed to parse timestamp: ${o.since}\n`);
      return 1;
    }
    q.sinceUs = t * 1000;
  }
  if (o.until) {
    const t = parseJournalTime(o.until, now);
    if (t === null) {
      io.err(`Failed to parse timestamp: ${o.until}\n`);
      return 1;
    }
    q.untilUs = t * 1000;
  }
  for (const [c, key] of [
    [o.cursor, 'fromSeq'],
    [o.afterCursor, 'afterSeq'],
  ] as const) {
    if (c === null) continue;
    const seq = seqOfCursor(c);
    if (seq === null) {
      io.err(`Failed to seek to cursor: Invalid argument\n`);
      return 1;
    }
    q[key] = seq;
  }
  if (o.boot !== null && o.boot !== '0') {
    if (o.boot !== sim.bootId) {
      io.err(
        o.boot.startsWith('-')
          ? `Data from the specified boot (${o.boot}) is not available: No such boot ID in journal\n`
          : `No journal boot entry found for the specified boot (${o.boot}).\n`,
      );
      return 1;
    }
  }
  if (o.boot !== null) q.bootId = sim.bootId;

  const unitRes = o.units.map(
    (u) =>
      new RegExp(
        `^${u
          .replace(/[.+^${}()|\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
      ),
  );
  const extra = (e: JournalEntry): boolean =>
    (!unitRes.length || unitRes.some((re) => re.test(e.unit))) &&
    (o.maxPriority === null || e.priority <= o.maxPriority) &&
    (!o.grep || o.grep.test(e.message)) &&
    (!o.identifiers.length || o.identifiers.includes(e.fromSystemd ? 'systemd' : e.identifier));

  const lines = o.lines ?? (o.follow ? 10 : null);
  let entries = [...sim.journal.entries()].filter((e) => matches(e, q, null) && extra(e));
  // journalctl seeks to a cursor and shows -n entries from there on (with --follow it does not stop at -n:
  // journalctl-show.c loops while `n_shown < arg_lines || arg_follow`); otherwise -n is the newest entries.
  const fromCursor = (o.cursor !== null || o.afterCursor !== null) && !o.reverse;
  if (lines !== null && entries.length > lines && !(fromCursor && o.follow))
    entries = fromCursor ? entries.slice(0, lines) : entries.slice(entries.length - lines);
  if (o.reverse) entries.reverse();

  const fmt = { all: o.all, noHostname: o.noHostname, fields: o.fields };
  const short = o.output !== 'json' && o.output !== 'json-pretty' && o.output !== 'cat';
  // journalctl writes through stdio and flushes once per pass over the new entries (show_and_fflush), so what
  // one wake-up finds reaches the pipe, and the SSH channel, as one write rather than one per entry.
  let unflushed: Buffer[] = [];
  const flush = (): void => {
    if (unflushed.length) io.out(Buffer.concat(unflushed));
    unflushed = [];
  };
  const emit = (e: JournalEntry): void => {
    if (!unflushed.length) queueMicrotask(flush);
    unflushed.push(formatEntry(e, o.output, fmt), Buffer.from('\n'));
  };
  if (!entries.length && short && !o.quiet && !o.follow) io.out('-- No entries --\n');
  for (const e of entries) emit(e);
  flush();
  if (sim.isFaultOn('malformed-journal')) io.out(corruptLine(o.output));
  if (o.showCursor && entries.length) io.out(`-- cursor: ${cursorOf(entries[entries.length - 1])}\n`);

  if (!o.follow || !io.canFollow) return 0;
  return new Promise<number>((resolve) => {
    const unsubscribe = sim.journal.subscribe((e) => {
      if (extra(e) && matches(e, { ...q, untilUs: undefined }, null)) emit(e);
    });
    // The simulation advances when read; a follower reads it a few times a second of real time.
    const pump = setInterval(() => sim.advance(), 200);
    const stop = (): void => {
      clearInterval(pump);
      unsubscribe();
      unflushed = [];
      resolve(0);
    };
    if (io.signal.aborted) stop();
    else io.signal.addEventListener('abort', stop, { once: true });
  });
}

/** The malformed-journal fault's extra output line: a cut-off record with raw invalid UTF-8. */
function corruptLine(output: JournalOutput): Buffer {
  const bad = Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]);
  if (output === 'json' || output === 'json-pretty') {
    return Buffer.concat([
      Buffer.from('{"__CURSOR":"s=corrupt;i=ffffffff","__REALTIME_TIMESTAMP":"17', 'utf8'),
      bad,
      Buffer.from('\n'),
    ]);
  }
  return Buffer.concat([Buffer.from('Journal file corrupted, ignoring: ', 'utf8'), bad, Buffer.from('\n')]);
}
