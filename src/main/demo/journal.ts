// The demo host's journal: a bounded ring of entries with journald's fields, and journalctl's output
// formats (json, short, short-iso, short-precise, cat) with systemd 252's quirks: PID 1 messages carry UNIT=
// rather than _SYSTEMD_UNIT=; json shows a field that is not printable UTF-8 (invalid bytes, or a control
// character such as tqdm's "\r") as a byte array, and a field whose "NAME=value" reaches 4096 bytes as null
// unless --all; short formats expand tabs, drop ANSI colour sequences and show what is still unprintable as
// "[N blob data]" unless --all.
import { HOSTNAME } from './units';
import { journalShort, journalShortIso, journalShortIsoPrecise, journalShortPrecise } from './time-format';

export interface JournalEntry {
  seq: number;
  realtimeUs: number;
  monotonicUs: number;
  bootId: string;
  /** Unit the entry belongs to (what `journalctl -u` matches). */
  unit: string;
  /** True for systemd's own messages about the unit (PID 1, UNIT= field). */
  fromSystemd: boolean;
  pid: number;
  identifier: string;
  priority: number;
  message: string;
  /** Exact bytes when the message is not valid UTF-8 (then `message` is a lossy decoding). */
  messageBytes?: Buffer;
  invocationId?: string;
  /** MESSAGE_ID= of PID 1's lines (which kind of message it is). */
  messageId?: string;
  /** The writing process's argv, for _CMDLINE=. */
  argv?: readonly string[];
}

export type JournalOutput =
  | 'short'
  | 'short-iso'
  | 'short-iso-precise'
  | 'short-precise'
  | 'short-unix'
  | 'cat'
  | 'json'
  | 'json-pretty'
  | 'with-unit';

export const JOURNAL_OUTPUTS: readonly JournalOutput[] = [
  'short',
  'short-iso',
  'short-iso-precise',
  'short-precise',
  'short-unix',
  'cat',
  'json',
  'json-pretty',
  'with-unit',
];

export interface JournalQuery {
  units?: string[];
  sinceUs?: number;
  untilUs?: number;
  /** Only entries with seq > afterSeq (from --after-cursor). */
  afterSeq?: number;
  /** From this seq on, inclusive (from --cursor). */
  fromSeq?: number;
  bootId?: string;
  /** Keep only the last N matches. */
  lines?: number;
}

const MACHINE_ID = '5f0c9d8a3b7e4c21a9d64e0b8f13c2aa';
const SEQNUM_ID = '8b1f04d2a6c94e7f9d3a2c5b7e1f0a49';

export class Journal {
  private readonly ring: JournalEntry[] = [];
  private head = 0;
  private nextSeq = 1;
  private readonly listeners = new Set<(e: JournalEntry) => void>();

  constructor(private readonly capacity = 40_000) {}

  append(e: Omit<JournalEntry, 'seq'>): JournalEntry {
    const entry: JournalEntry = { ...e, seq: this.nextSeq++ };
    if (this.ring.length < this.capacity) this.ring.push(entry);
    else {
      this.ring[this.head] = entry;
      this.head = (this.head + 1) % this.capacity;
    }
    for (const l of this.listeners) l(entry);
    return entry;
  }

  get size(): number {
    return this.ring.length;
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Entries in append (= time) order. */
  *entries(): Generator<JournalEntry> {
    const n = this.ring.length;
    for (let i = 0; i < n; i++) yield this.ring[(this.head + i) % n];
  }

  query(q: JournalQuery): JournalEntry[] {
    const units = q.units && q.units.length ? new Set(q.units) : null;
    const out: JournalEntry[] = [];
    for (const e of this.entries()) {
      if (matches(e, q, units)) out.push(e);
    }
    if (q.lines !== undefined && out.length > q.lines) return out.slice(out.length - q.lines);
    return out;
  }

  /** How many followers (journalctl -f) are attached. */
  get followers(): number {
    return this.listeners.size;
  }

  /** Calls `fn` for every entry appended from now on; returns the unsubscribe function. */
  subscribe(fn: (e: JournalEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

export function matches(e: JournalEntry, q: JournalQuery, units: Set<string> | null): boolean {
  if (units && !units.has(e.unit)) return false;
  if (q.sinceUs !== undefined && e.realtimeUs < q.sinceUs) return false;
  if (q.untilUs !== undefined && e.realtimeUs > q.untilUs) return false;
  if (q.afterSeq !== undefined && e.seq <= q.afterSeq) return false;
  if (q.fromSeq !== undefined && e.seq < q.fromSeq) return false;
  if (q.bootId !== undefined && e.bootId !== q.bootId) return false;
  return true;
}

const hex = (n: number): string => Math.floor(n).toString(16);

export function cursorOf(e: JournalEntry): string {
  const x = ((e.seq * 2654435761) ^ (e.realtimeUs % 4294967296)) >>> 0;
  return `s=${SEQNUM_ID};i=${hex(e.seq)};b=${e.bootId};m=${hex(e.monotonicUs)};t=${hex(e.realtimeUs)};x=${hex(x)}`;
}

/** The seq a cursor names, or null when it is not one of ours (journalctl: "Failed to seek to cursor"). */
export function seqOfCursor(cursor: string): number | null {
  const m = /(?:^|;)i=([0-9a-f]+)(?:;|$)/.exec(cursor);
  if (!m || !cursor.includes(`s=${SEQNUM_ID}`)) return null;
  return parseInt(m[1], 16);
}

function isValidUtf8(buf: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buf);
    return true;
  } catch {
    // A decoding failure is the answer we are asking for, not an error to report.
    return false;
  }
}

function messageBuffer(e: JournalEntry): Buffer {
  return e.messageBytes ?? Buffer.from(e.message, 'utf8');
}

/** systemd's utf8_is_printable_newline(): valid UTF-8 without C0 (but tab, newline) or C1 controls or DEL. */
function isPrintable(buf: Buffer): boolean {
  if (!isValidUtf8(buf)) return false;
  for (const ch of buf.toString('utf8')) {
    const c = ch.codePointAt(0) as number;
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f)) return false;
  }
  return true;
}

/**
 * journalctl's strip_tab_ansi() for the short formats: a tab becomes eight spaces, ANSI CSI sequences
 * ("\x1b[1m") go.
 */
function stripTabAnsi(buf: Buffer): Buffer {
  if (!buf.includes(0x09) && !buf.includes(0x1b)) return buf;
  const out: number[] = [];
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b === 0x09) out.push(...Buffer.from('        '));
    else if (b === 0x1b && buf[i + 1] === 0x5b) {
      let j = i + 2;
      while (j < buf.length && !(buf[j] >= 0x40 && buf[j] <= 0x7e)) j++;
      i = j;
    } else out.push(b);
  }
  return Buffer.from(out);
}

/** journald's quoting of a process's argv for _CMDLINE= (shell_maybe_quote of each word). */
export function journalCmdline(argv: readonly string[]): string {
  return argv
    .map((a) => {
      if (a === '') return '""';
      if (!/[\s"\\`$*?['()<>|&;!]/.test(a)) return a;
      return `"${a.replace(/(["\\`$])/g, '\\$1')}"`;
    })
    .join(' ');
}

/** systemd's format_bytes: 1023B, 1.0K, 1.4M — one decimal, truncated. */
function formatBytes(n: number): string {
  const one = (factor: number, suffix: string): string =>
    `${Math.floor(n / factor)}.${Math.floor((n * 10) / factor) % 10}${suffix}`;
  if (n < 1024) return `${n}B`;
  if (n < 1024 * 1024) return one(1024, 'K');
  return one(1024 * 1024, 'M');
}

/** journalctl's JSON_THRESHOLD: a field whose "NAME=value" data is this long or longer prints as null. */
const JSON_THRESHOLD = 4096;

export interface FormatOptions {
  all: boolean;
  noHostname?: boolean;
  /** --output-fields: only these (and the cursor, timestamps and boot id, which journalctl always prints). */
  fields?: ReadonlySet<string> | null;
}

const ALWAYS_PRINTED = new Set(['__CURSOR', '__REALTIME_TIMESTAMP', '__MONOTONIC_TIMESTAMP', '_BOOT_ID']);

function jsonValue(name: string, buf: Buffer, all: boolean): string {
  if (!all && name.length + 1 + buf.length >= JSON_THRESHOLD) return 'null';
  if (!isPrintable(buf)) return `[${Array.from(buf).join(',')}]`;
  return JSON.stringify(buf.toString('utf8'));
}

function jsonFields(e: JournalEntry): Array<[string, string]> {
  const common: Array<[string, string]> = [
    ['_BOOT_ID', e.bootId],
    ['_MACHINE_ID', MACHINE_ID],
    ['_HOSTNAME', HOSTNAME],
    ['PRIORITY', String(e.priority)],
  ];
  if (e.fromSystemd) {
    return [
      ...common,
      ['SYSLOG_FACILITY', '3'],
      ['_UID', '0'],
      ['_GID', '0'],
      ['_TRANSPORT', 'journal'],
      ['_CAP_EFFECTIVE', '1ffffffffff'],
      ['CODE_FILE', 'src/core/unit.c'],
      ['SYSLOG_IDENTIFIER', 'systemd'],
      ['_PID', '1'],
      ['_COMM', 'systemd'],
      ['_EXE', '/usr/lib/systemd/systemd'],
      ['_CMDLINE', '/sbin/init'],
      ['_SYSTEMD_CGROUP', '/init.scope'],
      ['_SYSTEMD_UNIT', 'init.scope'],
      ['_SYSTEMD_SLICE', '-.slice'],
      ['UNIT', e.unit],
      ...(e.messageId ? ([['MESSAGE_ID', e.messageId]] as Array<[string, string]>) : []),
      ...(e.invocationId ? ([['INVOCATION_ID', e.invocationId]] as Array<[string, string]>) : []),
    ];
  }
  return [
    ...common,
    ['SYSLOG_FACILITY', '3'],
    ['_UID', '0'],
    ['_GID', '0'],
    ['_CAP_EFFECTIVE', '1ffffffffff'],
    ['_TRANSPORT', 'stdout'],
    ['_STREAM_ID', (e.invocationId ?? '').slice(0, 32).split('').reverse().join('')],
    ['SYSLOG_IDENTIFIER', e.identifier],
    ['_PID', String(e.pid)],
    ['_COMM', e.identifier],
    ['_EXE', '/usr/bin/python3.12'],
    ...(e.argv ? ([['_CMDLINE', journalCmdline(e.argv)]] as Array<[string, string]>) : []),
    ['_SYSTEMD_CGROUP', `/system.slice/${e.unit}`],
    ['_SYSTEMD_UNIT', e.unit],
    ['_SYSTEMD_SLICE', 'system.slice'],
    ...(e.invocationId ? ([['_SYSTEMD_INVOCATION_ID', e.invocationId]] as Array<[string, string]>) : []),
  ];
}

/** One entry in the given output format, without the trailing newline. */
export function formatEntry(e: JournalEntry, output: JournalOutput, opts: FormatOptions): Buffer {
  const msg = messageBuffer(e);
  if (output === 'cat') return msg;
  if (output === 'json' || output === 'json-pretty') {
    const pairs: Array<[string, string]> = [
      ['__CURSOR', JSON.stringify(cursorOf(e))],
      ['__REALTIME_TIMESTAMP', JSON.stringify(String(e.realtimeUs))],
      ['__MONOTONIC_TIMESTAMP', JSON.stringify(String(e.monotonicUs))],
      ...jsonFields(e).map(([k, v]): [string, string] => [k, jsonValue(k, Buffer.from(v, 'utf8'), opts.all)]),
      ['MESSAGE', jsonValue('MESSAGE', msg, opts.all)],
    ];
    if (opts.fields) {
      const keep = opts.fields;
      const kept = pairs.filter(([k]) => ALWAYS_PRINTED.has(k) || keep.has(k));
      pairs.length = 0;
      pairs.push(...kept);
    }
    if (output === 'json') return Buffer.from(`{${pairs.map(([k, v]) => `"${k}":${v}`).join(',')}}`, 'utf8');
    return Buffer.from(`{\n${pairs.map(([k, v]) => `\t"${k}" : ${v}`).join(',\n')}\n}`, 'utf8');
  }
  let ts: string;
  switch (output) {
    case 'short-iso':
      ts = journalShortIso(e.realtimeUs);
      break;
    case 'short-iso-precise':
      ts = journalShortIsoPrecise(e.realtimeUs);
      break;
    case 'short-precise':
      ts = journalShortPrecise(e.realtimeUs);
      break;
    case 'short-unix':
      ts = `${Math.floor(e.realtimeUs / 1e6)}.${String(e.realtimeUs % 1e6).padStart(6, '0')}`;
      break;
    default:
      ts = journalShort(e.realtimeUs);
  }
  const ident = e.fromSystemd ? 'systemd[1]' : `${e.identifier}[${e.pid}]`;
  const unitPart = output === 'with-unit' ? ` ${e.fromSystemd ? 'init.scope' : e.unit}` : '';
  const host = opts.noHostname ? '' : ` ${HOSTNAME}`;
  const head = Buffer.from(`${ts}${host}${unitPart} ${ident}: `, 'utf8');
  const shown = opts.all ? msg : stripTabAnsi(msg);
  const body =
    opts.all || isPrintable(shown) ? shown : Buffer.from(`[${formatBytes(msg.length)} blob data]`, 'utf8');
  return Buffer.concat([head, body]);
}
